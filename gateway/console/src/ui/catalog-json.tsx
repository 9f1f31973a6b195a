/**
 * A collapsible JSON tree: objects and arrays are native <details>/<summary> (keyboard and screen reader
 * support for free), opened two levels deep, their children rendered only once opened so a large result
 * stays cheap. Each node knows its path in the result path language of GET /tools/executions/{id}/result
 * (`a.b`, `items[0].name`, keys holding dots in backticks), so a redaction report's paths can be marked;
 * any `[REDACTED:<FIELD>]` text is marked wherever it appears.
 */
import { type ReactNode, useState } from "react";

const REDACTED = /\[REDACTED:[A-Za-z0-9_]+\]/g;

/** A key as a path segment: plain when it is a simple name, otherwise quoted in backticks. */
function segment(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? key : `\`${key.replace(/`/g, "``")}\``;
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  return parent === "" ? segment(key) : `${parent}.${segment(key)}`;
}

/**
 * The paths a redaction report names, as this tree sees them: a `<json>` segment marks the descent into a
 * string holding JSON (an MCP tool's text block, which the call answer shows already parsed), so the part
 * after the last one is kept too.
 */
export function redactedPaths(fields: { path: string }[] | undefined): Set<string> {
  const paths = new Set<string>();
  for (const f of fields ?? []) {
    paths.add(f.path);
    const at = f.path.lastIndexOf("<json>.");
    if (at >= 0) paths.add(f.path.slice(at + "<json>.".length));
  }
  return paths;
}

/** A string with each masked secret in it marked. */
function MarkedText({ text }: { text: string }) {
  const parts: ReactNode[] = [];
  let last = 0;
  for (const m of text.matchAll(REDACTED)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(
      <mark key={m.index} className="redacted">
        {m[0]}
      </mark>,
    );
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return <>{parts}</>;
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === "string") {
    return (
      <span className="json-string">
        "<MarkedText text={value} />"
      </span>
    );
  }
  if (value === null) return <span className="json-null">null</span>;
  return <span className={`json-${typeof value}`}>{String(value)}</span>;
}

interface NodeProps {
  name: ReactNode;
  value: unknown;
  path: string;
  depth: number;
  marked: Set<string>;
}

function Node({ name, value, path, depth, marked }: NodeProps) {
  const isMarked = marked.has(path);
  const label = (
    <>
      {name}
      {isMarked ? <span className="redacted-flag">masked</span> : null}
    </>
  );
  if (value === null || typeof value !== "object") {
    return (
      <li className={isMarked ? "json-leaf json-marked" : "json-leaf"} data-path={path}>
        {label}
        <Scalar value={value} />
      </li>
    );
  }
  return (
    <li className={isMarked ? "json-marked" : undefined} data-path={path}>
      <Branch label={label} value={value as object} path={path} depth={depth} marked={marked} />
    </li>
  );
}

function Branch({
  label,
  value,
  path,
  depth,
  marked,
}: {
  label: ReactNode;
  value: object;
  path: string;
  depth: number;
  marked: Set<string>;
}) {
  const [open, setOpen] = useState(depth < 2);
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value as Record<string, unknown>);
  const shape = Array.isArray(value)
    ? `[${entries.length} item${entries.length === 1 ? "" : "s"}]`
    : `{${entries.length} key${entries.length === 1 ? "" : "s"}}`;
  return (
    <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        {label}
        <span className="json-shape">{shape}</span>
      </summary>
      {open && entries.length > 0 ? (
        <ul className="json-children">
          {entries.map(([key, child]) => (
            <Node
              key={key}
              name={<span className="json-key">{typeof key === "number" ? `[${key}]` : key}: </span>}
              value={child}
              path={childPath(path, key)}
              depth={depth + 1}
              marked={marked}
            />
          ))}
        </ul>
      ) : null}
    </details>
  );
}

/** The value as a tree; `marked` holds the paths to highlight (see redactedPaths). */
export function JsonTree({ value, label, marked = new Set() }: { value: unknown; label: string; marked?: Set<string> }) {
  return (
    <figure className="json-tree">
      <figcaption className="visually-hidden">{label}</figcaption>
      {value !== null && typeof value === "object" ? (
        <ul className="json-children json-root">
          <li>
            <Branch label={<span className="json-key">result </span>} value={value} path="" depth={0} marked={marked} />
          </li>
        </ul>
      ) : (
        <p className="json-leaf">
          <Scalar value={value} />
        </p>
      )}
    </figure>
  );
}
