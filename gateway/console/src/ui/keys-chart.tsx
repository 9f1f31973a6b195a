/**
 * Two small bar charts for the key usage screen, drawn as SVG by hand: a chart library would cost more
 * than the whole first-load budget (200 KB compressed) for two charts this simple. Each chart has a
 * caption, an accessible name that states what it shows, and the same numbers in a table under
 * "Show the numbers".
 */
import { useId } from "react";
import { TableWrap } from "./index";

export interface Bar {
  /** What the bar is for (a date, a tool). */
  label: string;
  /** Its height; null draws no bar (e.g. a success rate on a day without calls). */
  value: number | null;
  /** The value as a person reads it ("12 calls", "95%", "no calls"). */
  text: string;
}

const HEIGHT = 120;

/** Vertical bars in order (days, oldest first), scaled to `max` (default: the largest value). */
export function ColumnChart({
  title,
  summary,
  bars,
  max,
  maxText,
  valueHeading,
}: {
  title: string;
  /** The accessible name's second half: what the bars add up to ("12 calls in 7 days, most on …"). */
  summary: string;
  bars: Bar[];
  max?: number;
  /** The top of the scale as text (default: the largest bar's text). */
  maxText?: string;
  valueHeading: string;
}) {
  const captionId = useId();
  const top = max ?? Math.max(0, ...bars.map((b) => b.value ?? 0));
  // Nothing to draw: no scale either (a "100%" over an empty plot reads as a value).
  const empty = bars.every((b) => b.value === null || b.value === 0);
  const width = Math.max(bars.length, 1) * 10;
  const first = bars[0];
  const last = bars[bars.length - 1];
  return (
    <figure className="chart" aria-labelledby={captionId}>
      <figcaption id={captionId} className="chart-title">
        {title}
      </figcaption>
      <div className="chart-plot">
        <span className="chart-max muted" aria-hidden="true">
          {empty ? "no data" : (maxText ?? bars.find((b) => b.value === top)?.text ?? "")}
        </span>
        <svg
          role="img"
          aria-label={`${title}: ${summary}`}
          viewBox={`0 0 ${width} ${HEIGHT}`}
          preserveAspectRatio="none"
          className="chart-svg"
        >
          <title>{`${title}: ${summary}`}</title>
          <line x1={0} x2={width} y1={HEIGHT - 0.5} y2={HEIGHT - 0.5} className="chart-axis" />
          {bars.map((bar, i) => {
            if (bar.value === null || top <= 0) return null;
            const h = Math.max(bar.value > 0 ? 2 : 0, (bar.value / top) * (HEIGHT - 4));
            return (
              <rect key={bar.label} x={i * 10 + 1.5} y={HEIGHT - h} width={7} height={h} className="chart-bar">
                <title>{`${bar.label}: ${bar.text}`}</title>
              </rect>
            );
          })}
        </svg>
      </div>
      {first && last ? (
        <div className="chart-axis-labels muted" aria-hidden="true">
          <span>{first.label}</span>
          <span>{last.label}</span>
        </div>
      ) : null}
      <NumbersTable bars={bars} labelHeading="Day" valueHeading={valueHeading} />
    </figure>
  );
}

/**
 * Horizontal bars for ranked items (top tools), largest first, each with its name and number; the
 * screen shows the same numbers as a table beside it.
 */
export function RankChart({ title, bars }: { title: string; bars: Bar[] }) {
  const captionId = useId();
  const top = Math.max(1, ...bars.map((b) => b.value ?? 0));
  const summary = bars.map((b) => `${b.label} ${b.text}`).join(", ");
  return (
    <figure className="chart" aria-labelledby={captionId}>
      <figcaption id={captionId} className="chart-title">
        {title}
      </figcaption>
      <div className="rank-chart" role="img" aria-label={`${title}: ${summary}`}>
        {bars.map((bar) => (
          <div key={bar.label} className="rank-row">
            <span className="rank-label">{bar.label}</span>
            <svg viewBox="0 0 100 10" preserveAspectRatio="none" className="rank-svg" aria-hidden="true">
              <rect x={0} y={0} height={10} width={((bar.value ?? 0) / top) * 100} className="chart-bar" />
            </svg>
            <span className="rank-value">{bar.text}</span>
          </div>
        ))}
      </div>
    </figure>
  );
}

function NumbersTable({ bars, labelHeading, valueHeading }: { bars: Bar[]; labelHeading: string; valueHeading: string }) {
  return (
    <details className="chart-numbers">
      <summary>Show the numbers</summary>
      <TableWrap label={`${valueHeading} by day`}>
        <table>
          <thead>
            <tr>
              <th scope="col">{labelHeading}</th>
              <th scope="col">{valueHeading}</th>
            </tr>
          </thead>
          <tbody>
            {bars.map((bar) => (
              <tr key={bar.label}>
                <td>{bar.label}</td>
                <td>{bar.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </details>
  );
}
