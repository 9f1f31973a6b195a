/**
 * Projection (`fields`): keeps only the listed paths of a result, in the result's own shape
 * (`matches[].id` keeps `{"matches": [{"id": ...}, ...]}`), before the size cap. A path that descends
 * into a string holding JSON keeps the selected part of that document, as a document (no longer a
 * string). The report names the paths kept and those that matched nothing.
 */

import { type Location, locate, parsePath, type Step } from "@toolport/kit/json-path";
import { isObject, type Json, type JsonObject, setOwn } from "@toolport/kit/json-values";

export interface ProjectionReport {
  kept: string[];
  unmatched: string[];
}

/** Parses every field up front so a bad one is a 400 naming `fields[i]` before anything runs. */
export function parseFields(fields: string[]): Step[][] {
  return fields.map((field, i) => parsePath(field, `fields[${i}]`));
}

type Skeleton =
  | { kind: "whole"; value: Json }
  | { kind: "object"; children: Map<string, Skeleton> }
  | { kind: "array"; children: Map<number, Skeleton> };

export function project(
  root: Json,
  fields: string[],
  parsed: Step[][] = parseFields(fields),
): { value: Json; report: ProjectionReport } {
  const report: ProjectionReport = { kept: [], unmatched: [] };
  let skeleton: Skeleton | undefined;
  parsed.forEach((steps, i) => {
    const { matches } = locate(root, steps);
    if (matches.length === 0) {
      report.unmatched.push(fields[i]!);
      return;
    }
    report.kept.push(fields[i]!);
    for (const match of matches) skeleton = insert(skeleton, match.location, 0, match.value);
  });
  if (!skeleton) return { value: Array.isArray(root) ? [] : isObject(root) ? {} : null, report };
  return { value: materialize(skeleton), report };
}

/**
 * Adds one selected value at its location; a whole value wins over parts selected inside it. Here and in
 * materialize the recursion follows the location, never the value: it is as deep as the field's path,
 * which the path length limit (path.ts) bounds, however deep the result is.
 */
function insert(node: Skeleton | undefined, location: Location[], at: number, value: Json): Skeleton {
  if (at === location.length) return { kind: "whole", value };
  if (node?.kind === "whole") return node;
  const part = location[at]!;
  if (typeof part === "object") {
    // A descent into a JSON string: the projected document takes the string's place.
    return insert(node, location, at + 1, value);
  }
  if (typeof part === "number") {
    const arrayNode = node?.kind === "array" ? node : { kind: "array" as const, children: new Map<number, Skeleton>() };
    arrayNode.children.set(part, insert(arrayNode.children.get(part), location, at + 1, value));
    return arrayNode;
  }
  const objectNode = node?.kind === "object" ? node : { kind: "object" as const, children: new Map<string, Skeleton>() };
  objectNode.children.set(part, insert(objectNode.children.get(part), location, at + 1, value));
  return objectNode;
}

function materialize(node: Skeleton): Json {
  if (node.kind === "whole") return node.value;
  if (node.kind === "array") {
    // Elements keep their source order; unselected elements leave no holes.
    return [...node.children.entries()].sort((a, b) => a[0] - b[0]).map(([, child]) => materialize(child));
  }
  const out: JsonObject = {};
  for (const [key, child] of node.children) setOwn(out, key, materialize(child));
  return out;
}
