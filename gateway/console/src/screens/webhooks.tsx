/**
 * Webhooks: the person's webhooks (newest first) and a form to register one; its signing secret is
 * shown once, right after. Each webhook's own page (webhook.tsx) pauses, rotates, tests, deletes and
 * shows its delivery history.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { paths } from "@toolport/client";
import { Plus, Webhook as WebhookIcon } from "lucide-react";
import { type FormEvent, useCallback, useState } from "react";
import { Link } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { Drawer, SecretDialog } from "../ui/dialog";
import { Badge, EmptyState, ErrorNote, Field, Loading, Page, TableWrap, When } from "../ui/index";

type Schemas = components["schemas"];
type EventName = Schemas["Webhook"]["events"][number];
type CreatedWebhook = paths["/v1/webhooks"]["post"]["responses"][200]["content"]["application/json"];

/** The events a webhook may ask for (the description's enum), with what each means. */
const EVENTS: { name: EventName; means: string }[] = [
  { name: "tool.execution.completed", means: "a tool call succeeded" },
  { name: "tool.execution.failed", means: "a tool call failed" },
  { name: "workflow.completed", means: "a workflow run completed" },
  { name: "workflow.failed", means: "a workflow run failed" },
  { name: "agent.spend.limit_approaching", means: "an API key's spending nears its daily limit" },
];

export default function Webhooks() {
  const { api } = useSession();
  const hooks = useQuery({ queryKey: ["webhooks"], queryFn: () => unwrap(api.GET("/v1/webhooks")) });
  const [creating, setCreating] = useState(false);
  const closeCreate = useCallback(() => setCreating(false), []);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const newWebhook = (
    <button type="button" onClick={() => setCreating(true)}>
      <Plus className="icon" size={16} aria-hidden="true" />
      New webhook
    </button>
  );

  return (
    <Page title="Webhooks" actions={newWebhook}>
      <p className="muted">
        Toolport POSTs each event you choose to your HTTPS endpoint, signed with the webhook's secret (header{" "}
        <code>X-Svc-Signature</code>), and retries a failed delivery twice.
      </p>
      <Drawer title="New webhook" titleId="new-webhook" open={creating} onClose={closeCreate}>
        <NewWebhook
          onCreated={(hook) => {
            setCreating(false);
            setCreated(hook);
          }}
        />
      </Drawer>
      {created ? (
        <SecretDialog
          title="Your webhook's signing secret"
          label="Signing secret"
          value={created.secret}
          onClose={() => setCreated(null)}
        >
          <p>
            Webhook for <code>{created.url}</code> created. <Link href={`/webhooks/${created.id}`}>Open its page</Link> to send a
            test event and follow its deliveries.
          </p>
        </SecretDialog>
      ) : null}
      <h2>Your webhooks</h2>
      {hooks.isPending ? (
        <Loading what="Loading webhooks" />
      ) : hooks.error ? (
        <ErrorNote error={hooks.error} />
      ) : hooks.data.length === 0 ? (
        <EmptyState icon={WebhookIcon} title="No webhooks yet." action={newWebhook}>
          Register an HTTPS endpoint to hear about tool calls, workflow runs and spending as they happen.
        </EmptyState>
      ) : (
        <TableWrap label="Your webhooks">
          <table>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {hooks.data.map((w) => (
                <tr key={w.id}>
                  <td className="content-url">
                    <Link href={`/webhooks/${w.id}`}>{w.url}</Link>
                    {w.description ? <div className="muted">{w.description}</div> : null}
                  </td>
                  <td>
                    <ul className="content-plain-list">
                      {w.events.map((e) => (
                        <li key={e}>
                          <code>{e}</code>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <Badge value={w.is_active ? "active" : "paused"} />
                  </td>
                  <td>
                    <When at={w.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </Page>
  );
}

function NewWebhook({ onCreated }: { onCreated: (hook: CreatedWebhook) => void }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<EventName[]>([]);
  const [description, setDescription] = useState("");
  const [noEvents, setNoEvents] = useState(false);

  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/v1/webhooks", {
          body: { url: url.trim(), events, ...(description.trim() ? { description: description.trim() } : {}) },
        }),
      ),
    onSuccess: (hook) => {
      onCreated(hook);
      setUrl("");
      setEvents([]);
      setDescription("");
      void queryClient.invalidateQueries({ queryKey: ["webhooks"] });
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    if (events.length === 0) {
      setNoEvents(true);
      return;
    }
    setNoEvents(false);
    create.mutate();
  }

  const toggle = (name: EventName, on: boolean) =>
    setEvents((current) => (on ? [...current, name] : current.filter((x) => x !== name)));

  return (
    <form onSubmit={submit} className="content-form" aria-labelledby="new-webhook">
      <Field label="Endpoint URL" hint="HTTPS on a public address, e.g. https://example.com/hooks/toolport.">
        {(p) => (
          <input
            {...p}
            type="url"
            required
            maxLength={2048}
            placeholder="https://"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
        )}
      </Field>
      <fieldset aria-describedby={noEvents ? "webhook-events-problem" : undefined}>
        <legend>Events</legend>
        {EVENTS.map((ev) => (
          <label key={ev.name} className="checkbox">
            <input
              type="checkbox"
              checked={events.includes(ev.name)}
              onChange={(e) => {
                toggle(ev.name, e.target.checked);
                if (e.target.checked) setNoEvents(false);
              }}
            />
            <span>
              <code>{ev.name}</code> <span className="muted">{ev.means}</span>
            </span>
          </label>
        ))}
        {noEvents ? (
          <p id="webhook-events-problem" className="content-problem">
            Choose at least one event.
          </p>
        ) : null}
      </fieldset>
      <Field label="Description (optional)">
        {(p) => <input {...p} maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />}
      </Field>
      <button type="submit" disabled={create.isPending}>
        {create.isPending ? "Creating…" : "Create webhook"}
      </button>
      <ErrorNote error={create.error} />
    </form>
  );
}
