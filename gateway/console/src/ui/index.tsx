/**
 * The console's small shared pieces: page frame, fields, error and status notes, copy button, badges,
 * and a tidy date. Screens compose these; styles are in styles.css.
 */
import { type ReactNode, useId, useState } from "react";
import { ApiError } from "../api";

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <>
      <header className="page-head">
        <h1 id="page-title">{title}</h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </header>
      {children}
    </>
  );
}

/** An error from /v1 (its code and message) or any other thrown value, announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : null;
  return (
    <div className="note note-error" role="alert">
      {api ? (
        <>
          <strong>{api.message}</strong> <code>{api.code}</code>
          {api.status ? <span className="muted"> (HTTP {api.status})</span> : null}
        </>
      ) : (
        <strong>{error instanceof Error ? error.message : String(error)}</strong>
      )}
    </div>
  );
}

export function Note({ kind = "info", children }: { kind?: "info" | "success" | "warning"; children: ReactNode }) {
  return (
    <div className={`note note-${kind}`} role="status">
      {children}
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** A labelled control; `hint` is tied to it with aria-describedby. */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: ReactNode;
  children: (props: { id: string; "aria-describedby"?: string }) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(hint ? { "aria-describedby": hintId } : {}) })}
      {hint ? (
        <div className="hint" id={hintId}>
          {hint}
        </div>
      ) : null}
    </div>
  );
}

/** Copies `text` to the clipboard and says so; falls back to selecting it where the clipboard is closed. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className="button-secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState("copied");
        } catch {
          setState("failed");
        }
        setTimeout(() => setState("idle"), 2500);
      }}
    >
      {state === "copied" ? "Copied" : state === "failed" ? "Select and copy" : label}
      <span className="visually-hidden" aria-live="polite">
        {state === "copied" ? "copied to the clipboard" : ""}
      </span>
    </button>
  );
}

/** A secret shown once: the value, a copy button, and the warning that it will not be shown again. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div className="note note-success shown-once" role="status">
      <p>
        <strong>{label}</strong>: copy it now, it is shown only once.
      </p>
      <div className="copy-row">
        <code className="secret" data-testid="shown-once">
          {value}
        </code>
        <CopyButton text={value} />
      </div>
    </div>
  );
}

const badgeKinds: Record<string, string> = {
  ready: "good",
  active: "good",
  succeeded: "good",
  completed: "good",
  approved: "good",
  needs_credential: "warn",
  pending: "warn",
  paused: "warn",
  running: "warn",
  degraded: "warn",
  unavailable: "bad",
  failed: "bad",
  rejected: "bad",
  retired: "bad",
  revoked: "bad",
  expired: "bad",
  left_over: "warn",
};

export function Badge({ value, label }: { value: string; label?: string }) {
  return <span className={`badge badge-${badgeKinds[value] ?? "neutral"}`}>{label ?? value.replace(/_/g, " ")}</span>;
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">never</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toISOString()}>
      {date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}
    </time>
  );
}

/**
 * A table that may scroll sideways on a narrow screen: a named region that takes the keyboard focus, so
 * the columns past the edge can be reached with the arrow keys (axe: scrollable-region-focusable).
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to scroll it
    <section className="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

/** Cents as dollars (integers in, text out: money is never a float here). */
export function cents(value: number | string | null | undefined): string {
  if (value === null || value === undefined) return "none";
  const n = BigInt(value);
  const sign = n < 0n ? "-" : "";
  const abs = n < 0n ? -n : n;
  return `${sign}$${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}
