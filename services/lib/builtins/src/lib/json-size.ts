/** Size and shape of a JSON value, measured without recursion (a hostile document may nest 100,000 deep). */
export interface JsonShape {
  /** Objects, arrays and scalars in the value. */
  nodes: number;
  /** Deepest nesting of objects and arrays (a scalar is depth 0). */
  depth: number;
  /** Length of the longest array. */
  longestArray: number;
}

export function measureJson(value: unknown, stopAfterNodes = Number.POSITIVE_INFINITY): JsonShape {
  const shape: JsonShape = { nodes: 0, depth: 0, longestArray: 0 };
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0 && shape.nodes <= stopAfterNodes) {
    const [node, depth] = stack.pop()!;
    shape.nodes++;
    if (node === null || typeof node !== "object") continue;
    shape.depth = Math.max(shape.depth, depth + 1);
    const children = Array.isArray(node) ? node : Object.values(node);
    if (Array.isArray(node)) shape.longestArray = Math.max(shape.longestArray, node.length);
    for (const child of children) stack.push([child, depth + 1]);
  }
  return shape;
}

/** True when `schema` uses `keyword` anywhere (as a key of some object inside it). */
export function usesKeyword(schema: unknown, keyword: string): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    if (!Array.isArray(node) && Object.hasOwn(node, keyword) && (node as Record<string, unknown>)[keyword] !== false) return true;
    stack.push(...(Array.isArray(node) ? node : Object.values(node)));
  }
  return false;
}
