/**
 * Shared by the webhooks, skills and workflows screens: an action that cannot be undone (delete, rotate
 * a secret) behind a second, explicit step, and a JSON value shown as text.
 */
import { type ReactNode, useEffect, useRef, useState } from "react";

/**
 * A button that first asks: the question and a "do it" button replace it (focus moves there, so a
 * keyboard or screen-reader user hears the question), with Cancel to go back.
 */
export function ConfirmAction({
  label,
  question,
  confirmLabel,
  busy = false,
  danger = false,
  onConfirm,
}: {
  label: string;
  /** The action destroys something (delete): its button is red from the start. */
  danger?: boolean;
  question: ReactNode;
  confirmLabel: string;
  busy?: boolean;
  onConfirm(): void;
}) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" className={danger ? "button-danger" : "button-secondary"} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <div className="content-confirm">
      <span>{question}</span>
      <button ref={confirm} type="button" className="button-danger" disabled={busy} onClick={onConfirm}>
        {confirmLabel}
      </button>
      <button type="button" className="button-secondary" disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}

/** A JSON value, indented (text as it is). */
export function JsonBlock({ value }: { value: unknown }) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return (
    // A scrollable region is focusable, so a keyboard can scroll it too.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: scrollable content must be reachable by keyboard
    <pre className="content-json" tabIndex={0}>
      {text ?? "null"}
    </pre>
  );
}
