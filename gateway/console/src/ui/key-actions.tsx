/**
 * A key's actions on the keys screen, for an API key and for an app connected through OAuth alike (a
 * grant is a key): its usage page, and Revoke, asked twice.
 */
import { Link } from "wouter";

export interface KeyActionsProps {
  keyId: string;
  /** What the key is called on screen (the key's name, or the app's). */
  label: string;
  /** An expired key cannot be revoked any more. */
  expired: boolean;
  confirming: boolean;
  setConfirming: (confirming: boolean) => void;
  revoke: { isPending: boolean; mutate: () => void };
}

export function KeyActions({ keyId, label, expired, confirming, setConfirming, revoke }: KeyActionsProps) {
  return (
    <div className="row">
      <Link href={`/keys/${keyId}`} className="button button-secondary">
        Usage<span className="visually-hidden"> of {label}</span>
      </Link>
      {expired ? null : confirming ? (
        <>
          <button type="button" className="button-danger" disabled={revoke.isPending} onClick={() => revoke.mutate()}>
            Revoke {label}?
          </button>
          <button type="button" className="button-secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </>
      ) : (
        <button type="button" className="button-danger" onClick={() => setConfirming(true)}>
          Revoke<span className="visually-hidden"> {label}</span>
        </button>
      )}
    </div>
  );
}
