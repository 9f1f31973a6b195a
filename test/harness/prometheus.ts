/** Reading Prometheus's text exposition (GET /metrics) in tests. */

/** The value of the first sample line of `name` whose labels include `labels`, or undefined. */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf("}"));
    if (Object.entries(labels).every(([k, v]) => inside.includes(`${k}="${v}"`))) return Number(line.split(" ").at(-1));
  }
  return undefined;
}
