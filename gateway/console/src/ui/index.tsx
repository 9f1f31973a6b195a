/**
 * The console's small shared pieces: page frame, fields, error and status notes, copy button, badges,
 * and a tidy date. Screens compose these; styles are in styles.css.
 */
import type { LucideIcon } from "lucide-react";
import { type ReactNode, useId, useLayoutEffect, useRef, useState } from "react";
import { ApiError } from "../api";

/** Toolport's mark: a port (the T of a tool's socket) on the primary colour. */
export function Logo({ size = 28 }: { size?: number }) {
  return (
    <svg className="logo-mark" width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="8" fill="#4338ca" />
      <path d="M9 10.5h14M16 10.5v9" stroke="#fff" strokeWidth="3.2" strokeLinecap="round" />
      <circle cx="16" cy="24" r="2.6" fill="#c7d2fe" />
    </svg>
  );
}

/** An empty list: what is missing and the first thing to do (`action`, usually the button that creates one). */
export function EmptyState({
  icon: Icon,
  title,
  children,
  action,
}: {
  icon: LucideIcon;
  title: string;
  children?: ReactNode;
  action?: ReactNode;
}) {
  return (
    <div className="empty">
      <Icon className="icon empty-icon" size={28} aria-hidden="true" />
      <p className="empty-title">{title}</p>
      {children ? <p className="muted">{children}</p> : null}
      {action}
    </div>
  );
}

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
 * A table: on a laptop one that may scroll sideways, a named region that takes the keyboard focus, so
 * the columns past the edge can be reached with the arrow keys (axe: scrollable-region-focusable); on a
 * phone each row is a card (styles.css), each cell named by its `data-label`. A cell a screen gave no
 * `data-label` gets its column's header text here, so every table of the console reads as cards.
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  const ref = useRef<HTMLElement>(null);
  useLayoutEffect(() => {
    const wrap = ref.current;
    if (!wrap) return;
    const labelCells = () => {
      for (const table of wrap.querySelectorAll(":scope > table")) {
        const heads = [...table.querySelectorAll(":scope > thead > tr > th")].map((th) => th.textContent?.trim() ?? "");
        for (const row of table.querySelectorAll(":scope > tbody > tr")) {
          let column = 0;
          for (const cell of row.children) {
            const span = (cell as HTMLTableCellElement).colSpan || 1;
            // A label this effect set (not the screen's) follows its header, whose text may change.
            if (!cell.hasAttribute("data-label") || cell.hasAttribute("data-label-auto")) {
              const label = span > 1 ? "" : (heads[column] ?? "");
              if (cell.getAttribute("data-label") !== label) cell.setAttribute("data-label", label);
              cell.setAttribute("data-label-auto", "");
            }
            column += span;
          }
        }
      }
    };
    labelCells();
    // Rows come and go (pages, filters), headers change their text; setting an attribute is not a change
    // this observer sees.
    const observer = new MutationObserver(labelCells);
    observer.observe(wrap, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, []);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to scroll it
    <section ref={ref} className="table-wrap" aria-label={label} tabIndex={0}>
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
