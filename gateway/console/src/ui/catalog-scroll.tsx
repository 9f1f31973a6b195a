/**
 * A table that may scroll sideways on a narrow screen: a named region that takes the keyboard focus, so
 * it can be scrolled with the arrow keys (axe: scrollable-region-focusable).
 */
import type { ReactNode } from "react";

export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to scroll it
    <section className="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
