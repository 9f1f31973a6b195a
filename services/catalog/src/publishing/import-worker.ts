/**
 * The body of an import-pool thread (import-pool.ts): parses, converts (Swagger 2.0), validates and
 * turns an OpenAPI document into tool drafts, off the catalog's event loop. A refusal travels back as a
 * value, not a thrown error: a thrown DomainError would reach the other side as a plain Error, its
 * code, reason and details lost to structured cloning.
 */
import { threadId } from "node:worker_threads";
import { DomainError, invalidArgument } from "@toolport/kit/errors";
import { replaceNul } from "@toolport/kit/json-guard";
import { type ImportedApi, importOpenApi, parseDocumentText, validateDocument } from "./openapi.js";

export interface ImportTask {
  text: string;
  documentUrl?: string;
  baseUrl?: string;
  /** Most schema JSON the document's tools may store, in MiB (absent: no bound). */
  maxStoredMb?: number;
}

/** A DomainError as plain data (kit/errors.ts DomainError's fields). */
export interface RefusalData {
  code: number;
  reason: string;
  message: string;
  details: DomainError["details"];
  detail: DomainError["detail"];
}

export type ImportOutcome = { ok: true; api: ImportedApi; threadId: number } | { ok: false; refusal: RefusalData };

/** Asks a thread only to answer, which it does once its modules are loaded (ImportPool.warm). */
export interface WarmTask {
  warm: true;
}

/**
 * What publishing reads from a document, with U+0000 in any text replaced (Postgres cannot hold it;
 * domain/publishing.ts readSource). Runs the same on the main thread when the pool is disabled.
 */
export async function importDocument(task: ImportTask): Promise<ImportedApi> {
  const api = await validateDocument(parseDocumentText(task.text));
  const imported = importOpenApi(api, { documentUrl: task.documentUrl, baseUrl: task.baseUrl });
  if (task.maxStoredMb !== undefined) checkStoredSize(imported, task.maxStoredMb);
  return replaceNul(imported);
}

/**
 * Refuses a document whose tools would store more schema JSON than `maxMb`. Each tool stores its input
 * schema, request body schema, parameters and output whole (each bounded on its own, openapi.ts), so a
 * document of thousands of operations over a large shared model stores its model thousands of times:
 * Microsoft Graph's 20 MB document made 11,422 tools and 1.2 GB of schemas, and publishing it ran the
 * one-process catalog out of its 4 GB heap. Counted per tool, stopping at the first past the bound.
 */
function checkStoredSize(api: ImportedApi, maxMb: number): void {
  const limit = maxMb * 1024 * 1024;
  let stored = 0;
  for (const [i, tool] of api.tools.entries()) {
    for (const part of [tool.inputSchema, tool.requestBodySchema, tool.parameters, tool.output]) {
      if (part !== null && part !== undefined) stored += JSON.stringify(part).length;
    }
    if (stored > limit) {
      throw invalidArgument(
        "document_too_large",
        `this OpenAPI document's ${api.tools.length} operations would store more than ${maxMb} MiB of schemas (the first ${i + 1} already do): more than one import may store. Publish a part of it (fewer paths)`,
        { details: { field: "api", limit_mb: maxMb, operations: api.tools.length } },
      );
    }
  }
}

/**
 * Imports a one-operation document of each version the importer reads, so the thread's first real
 * document does not pay for compiling the OpenAPI schemas (about 0.4 s, openapi-schema.ts) and for cold code.
 */
async function warmUp(): Promise<void> {
  const paths = { "/ping": { get: { operationId: "ping", responses: { "200": { description: "ok" } } } } };
  for (const head of [{ openapi: "3.0.3" }, { openapi: "3.1.0" }, { swagger: "2.0" }]) {
    await importDocument({ text: JSON.stringify({ ...head, info: { title: "warm-up", version: "1" }, paths }) });
  }
}

export default async function run(task: ImportTask | WarmTask): Promise<ImportOutcome | { warmed: number }> {
  if ("warm" in task) {
    await warmUp();
    return { warmed: threadId };
  }
  try {
    return { ok: true, api: await importDocument(task), threadId };
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return {
      ok: false,
      refusal: { code: err.code, reason: err.reason, message: err.message, details: err.details, detail: err.detail },
    };
  }
}
