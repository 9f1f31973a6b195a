/**
 * The real API descriptions in shared/openapi-corpus (beside the repository root, as CI lays it out):
 * read by the import tests and the import benchmark. A missing corpus fails loudly, naming where it was
 * looked for, instead of skipping.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CORPUS_DIR = fileURLToPath(new URL("../../../shared/openapi-corpus/", import.meta.url));
export const BOX = "box-platform-api.openapi3.json";
export const SLACK = "slack-web-api.swagger2.json";

export function corpusText(name: string): string {
  const file = `${CORPUS_DIR}${name}`;
  if (!existsSync(file)) {
    throw new Error(
      `the OpenAPI corpus document ${name} is missing: expected it at ${file} (shared/openapi-corpus beside the repository root)`,
    );
  }
  return readFileSync(file, "utf8");
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Operations counted from the raw document (JSON): every path item times every HTTP method it has. */
export function countOperations(text: string): number {
  const doc = JSON.parse(text) as { paths: Record<string, Record<string, unknown>> };
  return Object.values(doc.paths).reduce((n, item) => n + METHODS.filter((m) => item[m] !== undefined).length, 0);
}
