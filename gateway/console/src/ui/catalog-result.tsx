/**
 * A tool's answer as a person reads it: outcome and execution id, the redaction report highlighted (and
 * its paths marked in the tree), truncation explained (what was dropped, and that the whole result is
 * stored), and a reader for the stored result by path (GET /tools/executions/{id}/result, with the
 * person's own session: the console key acts for the same person).
 */
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { JsonTree, redactedPaths } from "./catalog-json";
import { Badge, CopyButton, ErrorNote, Field, TableWrap, When } from "./index";

type CallResult = components["schemas"]["SingleCallResult"];
type StoredResult = components["schemas"]["ExecutionResult"];
type Redaction = NonNullable<NonNullable<CallResult["_meta"]>["redaction"]>;
type ResponseMeta = NonNullable<CallResult["response_meta"]>;
type StoredMeta = NonNullable<StoredResult["stored_meta"]>;

function chars(n: number): string {
  return `${n.toLocaleString("en-US")} characters`;
}

export function RedactionReport({ redaction, onReadPath }: { redaction: Redaction; onReadPath?(path: string): void }) {
  const titleId = useId();
  return (
    <section className="note note-warning redaction" aria-labelledby={titleId}>
      <h3 id={titleId}>{redaction.count === 1 ? "1 secret was masked" : `${redaction.count} secrets were masked`}</h3>
      <p>
        The tool's answer held values that look like credentials. They were replaced with <code>[REDACTED:&lt;FIELD&gt;]</code>{" "}
        before being stored or shown, and are marked below.
      </p>
      <TableWrap label="Masked values">
        <table>
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Key</th>
              <th scope="col">Rule</th>
              {onReadPath ? (
                <th scope="col">
                  <span className="visually-hidden">Read</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {redaction.fields.map((f) => (
              <tr key={`${f.path}:${f.rule}`}>
                <td>
                  <code>{f.path}</code>
                </td>
                <td>
                  <code>{f.key}</code>
                </td>
                <td>{f.rule.replace(/_/g, " ")}</td>
                {onReadPath ? (
                  <td>
                    <button type="button" className="link-button" onClick={() => onReadPath(f.path)}>
                      Read <span className="visually-hidden">{f.path}</span> by path
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {redaction.count > redaction.fields.length ? <p>The first {redaction.fields.length} are listed.</p> : null}
    </section>
  );
}

function DroppedItems({ dropped }: { dropped: Record<string, { kept: number; total: number }> | undefined }) {
  const entries = Object.entries(dropped ?? {});
  if (entries.length === 0) return null;
  return (
    <ul>
      {entries.map(([path, d]) => (
        <li key={path}>
          <code>{path || "(the result itself)"}</code>: {d.kept} of {d.total} items kept, {d.total - d.kept} dropped from the end
        </li>
      ))}
    </ul>
  );
}

export function TruncationNote({ meta, note }: { meta: ResponseMeta; note?: string | undefined }) {
  const titleId = useId();
  return (
    <section className="note note-info" aria-labelledby={titleId}>
      <h3 id={titleId}>The answer was shortened</h3>
      <p>
        It was {chars(meta.original_response_chars)}; {chars(meta.response_chars)} are shown. Whole array entries were dropped
        from the end so the JSON stays valid. The whole result is stored: read any part of it by path below.
      </p>
      <DroppedItems dropped={meta.dropped_items} />
      {meta.cursor ? (
        <p>
          The upstream's next-page cursor: <code>{meta.cursor}</code>
        </p>
      ) : null}
      {note ? <p className="muted">{note}</p> : null}
    </section>
  );
}

function StoredCapNote({ meta }: { meta: StoredMeta }) {
  return (
    <p>
      The stored result itself is capped ({chars(meta.original_chars)} were cut to {chars(meta.stored_chars)}, limit{" "}
      {chars(meta.limit)}): dropped parts cannot be read back.
    </p>
  );
}

/** The answer of POST /tools/call/{tool_id}. */
export function CallResultView({ result, onReadPath }: { result: CallResult; onReadPath(path: string): void }) {
  const marked = redactedPaths(result._meta?.redaction?.fields);
  return (
    <section className="call-result" aria-labelledby="call-result-title">
      <h2 id="call-result-title">Result</h2>
      <p className="row">
        <Badge value={result.success ? "succeeded" : "failed"} />
        <span>
          Execution id <code data-testid="execution-id">{result.execution_id}</code>
        </span>
        <CopyButton text={result.execution_id} label="Copy id" />
      </p>
      {result.error ? (
        <div className="note note-error" role="alert">
          <strong>The tool failed:</strong> {result.error}
        </div>
      ) : null}
      {result.passthrough_reason ? (
        <p className="note">
          Returned as is (a tool whose purpose is to hand over a new credential): {result.passthrough_reason}
        </p>
      ) : null}
      {result._meta?.redaction ? <RedactionReport redaction={result._meta.redaction} onReadPath={onReadPath} /> : null}
      {result.truncated && result.response_meta ? (
        <TruncationNote meta={result.response_meta} note={result._meta?.truncation_note} />
      ) : null}
      {result.success || result.result !== null ? <JsonTree value={result.result} label="Result" marked={marked} /> : null}
    </section>
  );
}

/** Reads the stored result of `executionId` by path (and a character cap), and shows the answer. */
export function PathReader({
  executionId,
  path,
  setPath,
  request,
}: {
  executionId: string;
  path: string;
  setPath(path: string): void;
  /** Bumped to read `path` at once (a "Read by path" button elsewhere on the page). */
  request: number;
}) {
  const { api } = useSession();
  const [maxChars, setMaxChars] = useState("");
  const headingId = useId();
  const pathInput = useRef<HTMLInputElement>(null);
  const read = useMutation({
    mutationFn: (query: { path?: string; max_chars?: number }) =>
      unwrap(
        api.GET("/v1/tools/executions/{execution_id}/result", {
          params: { path: { execution_id: executionId }, query },
        }),
      ),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const cap = Number(maxChars);
    read.mutate({
      ...(path.trim() ? { path: path.trim() } : {}),
      ...(maxChars.trim() && Number.isInteger(cap) ? { max_chars: cap } : {}),
    });
  }

  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when a read is requested, with the path then set
  useEffect(() => {
    if (request === 0) return;
    pathInput.current?.focus();
    read.mutate(path.trim() ? { path: path.trim() } : {});
  }, [request]);

  const stored = read.data;
  return (
    <section aria-labelledby={headingId} className="path-reader">
      <h2 id={headingId}>Read the stored result by path</h2>
      <p className="muted">
        The whole result stays stored under its execution id. A path picks a part of it: <code>a.b.c</code> nested keys,{" "}
        <code>items[].name</code> every element, <code>items[0].name</code> one element, <code>*</code> every key or element at
        that level, and a key holding dots in backticks (<code>`v1.2`.name</code>).
      </p>
      <form onSubmit={submit} className="path-form">
        <div className="path-fields">
          <Field label="Path" hint="Empty reads the whole result.">
            {(p) => (
              <input
                {...p}
                ref={pathInput}
                className="mono"
                value={path}
                onChange={(e) => setPath(e.target.value)}
                placeholder="items[0].name"
              />
            )}
          </Field>
          <Field label="Characters at most" hint="Default 50,000 (100 to 2,000,000).">
            {(p) => (
              <input
                {...p}
                type="number"
                min={100}
                max={2_000_000}
                step={1}
                value={maxChars}
                onChange={(e) => setMaxChars(e.target.value)}
              />
            )}
          </Field>
        </div>
        <button type="submit" disabled={read.isPending}>
          {read.isPending ? "Reading…" : "Read"}
        </button>
      </form>
      <ErrorNote error={read.error} />
      {stored ? (
        <div className="stored-result" aria-live="polite">
          <p className="row">
            <Badge value={stored.status === "success" ? "succeeded" : "failed"} label={stored.status} />
            <span>
              Ran <When at={stored.executed_at} />
            </span>
            {stored.path ? (
              <span>
                at <code>{stored.path}</code>
              </span>
            ) : null}
          </p>
          {stored.path !== null && stored.path_matched === false ? (
            <p className="note note-warning">Nothing matched this path.</p>
          ) : null}
          {stored.error ? <p className="note note-error">{stored.error}</p> : null}
          {stored.truncated && stored.response_meta ? (
            <p className="note">
              Shortened to {chars(stored.response_meta.response_chars)} of {chars(stored.response_meta.original_response_chars)}:
              raise the cap or read a narrower path.
            </p>
          ) : null}
          {stored.stored_truncated && stored.stored_meta ? <StoredCapNote meta={stored.stored_meta} /> : null}
          {stored.path === null || stored.path_matched !== false ? (
            <JsonTree
              value={stored.result}
              label={stored.path ? `Stored result at ${stored.path}` : "Stored result"}
              marked={redactedPaths(stored._meta?.redaction?.fields)}
            />
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
