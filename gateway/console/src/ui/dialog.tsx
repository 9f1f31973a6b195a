/**
 * The console's two dialogs, both the native <dialog> opened as a modal (focus moves in and stays, Escape
 * closes, the page behind is inert):
 * - Drawer: a create form, opened from a button beside the page's title so the list comes first. Its
 *   content stays mounted while closed, so what was typed or picked is still there when it opens again.
 * - SecretDialog: a secret shown once (a new API key, a webhook's signing secret), which cannot scroll
 *   out of view or be missed: it stays until dismissed, and then the page no longer holds it.
 */
import { X } from "lucide-react";
import { type ReactNode, useEffect, useId, useRef } from "react";
import { ShownOnce } from "./index";

function useModal(open: boolean, onClose: () => void) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const closed = () => onClose();
    dialog.addEventListener("close", closed);
    return () => dialog.removeEventListener("close", closed);
  }, [onClose]);
  return ref;
}

export function Drawer({
  title,
  titleId: givenId,
  open,
  onClose,
  children,
}: {
  title: string;
  /** The title's id, for a form inside to be labelled by it. */
  titleId?: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useModal(open, onClose);
  const ownId = useId();
  const titleId = givenId ?? ownId;
  return (
    <dialog ref={ref} className="drawer" aria-labelledby={titleId}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="button-ghost icon-button" onClick={onClose} aria-label="Close">
          <X className="icon" size={20} aria-hidden="true" />
        </button>
      </div>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}

export function SecretDialog({
  title,
  label,
  value,
  onClose,
  children,
}: {
  title: string;
  /** What the secret is, e.g. `The key "deploy bot"`. */
  label: string;
  value: string;
  onClose: () => void;
  children?: ReactNode;
}) {
  const ref = useModal(true, onClose);
  const titleId = useId();
  return (
    <dialog ref={ref} className="modal secret-dialog" aria-labelledby={titleId}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
      </div>
      <div className="dialog-body">
        <ShownOnce label={label} value={value} />
        {children}
      </div>
      <div className="dialog-foot">
        <button type="button" onClick={onClose}>
          Done, I have copied it
        </button>
      </div>
    </dialog>
  );
}
