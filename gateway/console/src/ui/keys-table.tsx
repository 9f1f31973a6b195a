/**
 * A table that may scroll sideways on a phone: a named region that takes keyboard focus, so the
 * columns past the edge can be reached with the arrow keys.
 */
import type { ReactNode } from "react";

export function ScrollTable({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to scroll by keyboard
    <section className="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
