/**
 * One webhook: its details; pause or resume, a test event, a new signing secret (shown once), delete;
 * and its delivery history, newest first, read again every few seconds while the page is open, each
 * delivery's attempts in an expandable row and a Redeliver button.
 */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useLocation } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { ConfirmAction } from "../ui/content-confirm";
import { SecretDialog } from "../ui/dialog";
import { Badge, ErrorNote, Field, Loading, Note, Page, TableWrap, When } from "../ui/index";

type Schemas = components["schemas"];
type Webhook = Schemas["Webhook"];
type Delivery = Schemas["WebhookDelivery"];
type DeliveryStatus = Delivery["status"];

/** How often the history is read again while the page is open. */
const POLL_MS = 3000;
const PAGE_SIZE = 20;

export default function WebhookPage({ webhookId }: { webhookId: string }) {
  const { api } = useSession();
  const hook = useQuery({
    queryKey: ["webhook", webhookId],
    queryFn: () => unwrap(api.GET("/v1/webhooks/{webhook_id}", { params: { path: { webhook_id: webhookId } } })),
  });

  return (
    <Page title="Webhook">
      <p>
        <Link href="/webhooks">All webhooks</Link>
      </p>
      {hook.isPending ? (
        <Loading what="Loading the webhook" />
      ) : hook.error ? (
        <ErrorNote error={hook.error} />
      ) : (
        <>
          <Details hook={hook.data} />
          <Actions hook={hook.data} />
          <Deliveries webhookId={webhookId} />
        </>
      )}
    </Page>
  );
}

function Details({ hook }: { hook: Webhook }) {
  return (
    <>
      <dl className="content-details">
        <dt>Endpoint</dt>
        <dd className="content-url">
          <code>{hook.url}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge value={hook.is_active ? "active" : "paused"} />
        </dd>
        <dt>Events</dt>
        <dd>
          <ul className="content-plain-list">
            {hook.events.map((e) => (
              <li key={e}>
                <code>{e}</code>
              </li>
            ))}
          </ul>
        </dd>
        {hook.description ? (
          <>
            <dt>Description</dt>
            <dd>{hook.description}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>
          <When at={hook.created_at} />
        </dd>
        <dt>Changed</dt>
        <dd>
          <When at={hook.updated_at} />
        </dd>
      </dl>
      {hook.disabled_reason ? (
        <Note kind="warning">
          Toolport paused this webhook: {hook.disabled_reason}. Resume it once the endpoint answers again.
        </Note>
      ) : null}
    </>
  );
}

function Actions({ hook }: { hook: Webhook }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [failure, setFailure] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const path = { params: { path: { webhook_id: hook.id } } };
  const refreshDeliveries = () => queryClient.invalidateQueries({ queryKey: ["webhook-deliveries", hook.id] });
  const start = () => {
    setFailure(null);
    setDone(null);
  };

  const toggle = useMutation({
    onMutate: start,
    mutationFn: () => unwrap(api.PATCH("/v1/webhooks/{webhook_id}", { ...path, body: { is_active: !hook.is_active } })),
    onSuccess: (changed) => {
      queryClient.setQueryData(["webhook", hook.id], changed);
      void queryClient.invalidateQueries({ queryKey: ["webhooks"] });
      setDone(
        changed.is_active ? "Resumed: new events are delivered again." : "Paused: nothing is delivered until you resume it.",
      );
    },
    onError: setFailure,
  });
  const test = useMutation({
    onMutate: start,
    mutationFn: () => unwrap(api.POST("/v1/webhooks/{webhook_id}/test", path)),
    onSuccess: () => {
      setDone("Test event queued: it appears in the deliveries below.");
      void refreshDeliveries();
    },
    onError: setFailure,
  });
  const rotate = useMutation({
    onMutate: start,
    mutationFn: () => unwrap(api.POST("/v1/webhooks/{webhook_id}/rotate-secret", path)),
    onSuccess: (rotated) => {
      const { secret: _secret, previous_secret_expires_at: _expires, ...webhook } = rotated;
      queryClient.setQueryData(["webhook", hook.id], webhook);
    },
    onError: setFailure,
  });
  const remove = useMutation({
    onMutate: start,
    mutationFn: () => unwrap(api.DELETE("/v1/webhooks/{webhook_id}", path)),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: ["webhook", hook.id] });
      void queryClient.invalidateQueries({ queryKey: ["webhooks"] });
      navigate("/webhooks");
    },
    onError: setFailure,
  });

  return (
    <section aria-labelledby="webhook-actions">
      <h2 id="webhook-actions">Actions</h2>
      <div className="row">
        <button type="button" className="button-secondary" disabled={toggle.isPending} onClick={() => toggle.mutate()}>
          {hook.is_active ? "Pause" : "Resume"}
        </button>
        <button
          type="button"
          className="button-secondary"
          disabled={test.isPending || !hook.is_active}
          onClick={() => test.mutate()}
        >
          Send a test event
        </button>
        <ConfirmAction
          label="Rotate the secret"
          question="Sign with a new secret? The old one keeps signing for 24 hours."
          confirmLabel="Rotate"
          busy={rotate.isPending}
          onConfirm={() => rotate.mutate()}
        />
        <ConfirmAction
          label="Delete"
          question="Delete this webhook and its delivery history for good?"
          confirmLabel="Delete for good"
          danger
          busy={remove.isPending}
          onConfirm={() => remove.mutate()}
        />
      </div>
      {!hook.is_active ? <p className="muted">A paused webhook gets no test events; resume it first.</p> : null}
      {done ? <Note kind="success">{done}</Note> : null}
      <ErrorNote error={failure} />
      {rotate.data ? (
        <SecretDialog
          title="Your webhook's new signing secret"
          label="New signing secret"
          value={rotate.data.secret}
          onClose={() => rotate.reset()}
        >
          <p className="muted">
            Deliveries carry a signature by each secret until <When at={rotate.data.previous_secret_expires_at} />.
          </p>
        </SecretDialog>
      ) : null}
    </section>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<"" | DeliveryStatus>("");
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [again, setAgain] = useState<{ delivery: Delivery; series: number } | null>(null);

  const history = useInfiniteQuery({
    queryKey: ["webhook-deliveries", webhookId, status],
    initialPageParam: "",
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET("/v1/webhooks/{webhook_id}/deliveries", {
          params: {
            path: { webhook_id: webhookId },
            query: { limit: PAGE_SIZE, ...(status ? { status } : {}), ...(pageParam ? { cursor: pageParam } : {}) },
          },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: POLL_MS,
  });

  const redeliver = useMutation({
    mutationFn: (delivery: Delivery) =>
      unwrap(
        api.POST("/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", {
          params: { path: { webhook_id: webhookId, delivery_id: delivery.id } },
        }),
      ),
    onMutate: () => setAgain(null),
    onSuccess: (delivery, before) => {
      setAgain({ delivery, series: Math.max(0, ...before.attempts.map((a) => a.series)) + 1 });
      setOpen((current) => new Set(current).add(delivery.id));
      void queryClient.invalidateQueries({ queryKey: ["webhook-deliveries", webhookId] });
    },
  });

  const toggle = (id: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  const deliveries = history.data?.pages.flatMap((p) => p.deliveries) ?? [];

  return (
    <section aria-labelledby="webhook-deliveries">
      <h2 id="webhook-deliveries">Deliveries</h2>
      <div className="row content-toolbar">
        <Field label="Status">
          {(p) => (
            <select {...p} value={status} onChange={(e) => setStatus(e.target.value as "" | DeliveryStatus)}>
              <option value="">All</option>
              <option value="pending">Pending</option>
              <option value="succeeded">Succeeded</option>
              <option value="failed">Failed</option>
            </select>
          )}
        </Field>
        <button type="button" className="button-secondary" disabled={history.isFetching} onClick={() => void history.refetch()}>
          Refresh
        </button>
        {history.dataUpdatedAt ? (
          <span className="muted">
            Read at{" "}
            <time dateTime={new Date(history.dataUpdatedAt).toISOString()}>
              {new Date(history.dataUpdatedAt).toLocaleTimeString()}
            </time>
            ; read again every {POLL_MS / 1000} s.
          </span>
        ) : null}
      </div>
      {again ? (
        <Note kind="success">
          Sent again: delivery <code>{again.delivery.id}</code> ({again.delivery.event}) is {again.delivery.status}; its attempts
          of series {again.series} appear below.
        </Note>
      ) : null}
      <ErrorNote error={redeliver.error} />
      {history.isPending ? (
        <Loading what="Loading deliveries" />
      ) : history.error ? (
        <ErrorNote error={history.error} />
      ) : deliveries.length === 0 ? (
        <p className="muted">No deliveries{status ? ` ${status}` : ""} yet. Events you chose appear here as they are sent.</p>
      ) : (
        <TableWrap label="Deliveries">
          <table className="content-deliveries">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Attempts</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <DeliveryRow
                  key={d.id}
                  delivery={d}
                  open={open.has(d.id)}
                  onToggle={() => toggle(d.id)}
                  busy={redeliver.isPending && redeliver.variables?.id === d.id}
                  onRedeliver={() => redeliver.mutate(d)}
                />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {history.hasNextPage ? (
        <button
          type="button"
          className="button-secondary"
          disabled={history.isFetchingNextPage}
          onClick={() => void history.fetchNextPage()}
        >
          {history.isFetchingNextPage ? "Loading…" : "Load older deliveries"}
        </button>
      ) : null}
    </section>
  );
}

function DeliveryRow({
  delivery: d,
  open,
  onToggle,
  busy,
  onRedeliver,
}: {
  delivery: Delivery;
  open: boolean;
  onToggle(): void;
  busy: boolean;
  onRedeliver(): void;
}) {
  const panel = `attempts-${d.id}`;
  const count = d.attempts.length;
  return (
    <>
      <tr data-delivery={d.id}>
        <td>
          <code>{d.event}</code>
        </td>
        <td>
          <Badge value={d.status} />
          {d.status === "pending" && d.next_attempt_at ? (
            <div className="muted">
              next <When at={d.next_attempt_at} />
            </div>
          ) : null}
        </td>
        <td>
          <When at={d.created_at} />
        </td>
        <td>
          <button type="button" className="link-button" aria-expanded={open} aria-controls={panel} onClick={onToggle}>
            {count === 1 ? "1 attempt" : `${count} attempts`}
          </button>
        </td>
        <td>
          <button
            type="button"
            className="button-secondary"
            disabled={busy || d.status === "pending"}
            title={d.status === "pending" ? "Still being attempted" : undefined}
            onClick={onRedeliver}
          >
            Redeliver
          </button>
        </td>
      </tr>
      {open ? (
        <tr id={panel} className="content-attempts-row">
          <td colSpan={5}>
            {count === 0 ? (
              <p className="muted">Not attempted yet.</p>
            ) : (
              <table className="content-attempts">
                <caption className="visually-hidden">Attempts of delivery {d.id}</caption>
                <thead>
                  <tr>
                    <th scope="col">Series · attempt</th>
                    <th scope="col">At</th>
                    <th scope="col">Status code</th>
                    <th scope="col">Error</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Response</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={`${a.series}-${a.attempt}`}>
                      <td>
                        {a.series} · {a.attempt}
                      </td>
                      <td>
                        <AttemptTime at={a.at} />
                      </td>
                      <td>{a.status_code ?? <span className="muted">none</span>}</td>
                      <td>{a.error ? <code>{a.error}</code> : <span className="muted">none</span>}</td>
                      <td>{a.duration_ms} ms</td>
                      <td className="content-response">
                        {a.response_body ? <code>{a.response_body}</code> : <span className="muted">empty</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {d.delivered_at ? (
              <p className="muted">
                Delivered <When at={d.delivered_at} />.
              </p>
            ) : null}
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** An attempt's time to the second: attempts of one series are seconds apart. */
function AttemptTime({ at }: { at: string }) {
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toISOString()}>
      {date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" })}
    </time>
  );
}
