/**
 * The body of an import-pool thread (import-pool.ts): parses, converts (Swagger 2.0), validates and
 * turns an OpenAPI document into tool drafts, off the catalog's event loop. A refusal travels back as a
 * value, not a thrown error: a thrown DomainError would reach the other side as a plain Error, its
 * code, reason and details lost to structured cloning.
 */
import { threadId } from "node:worker_threads";
import { DomainError } from "@toolport/kit/errors";
import { replaceNul } from "@toolport/kit/json-guard";
import { type ImportedApi, importOpenApi, parseDocumentText, validateDocument } from "./openapi.js";

export interface ImportTask {
  text: string;
  documentUrl?: string;
  baseUrl?: string;
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

/**
 * What publishing reads from a document, with U+0000 in any text replaced (Postgres cannot hold it;
 * app/publishing.ts readSource). Runs the same on the main thread when the pool is disabled.
 */
export async function importDocument(task: ImportTask): Promise<ImportedApi> {
  const api = await validateDocument(parseDocumentText(task.text));
  return replaceNul(importOpenApi(api, { documentUrl: task.documentUrl, baseUrl: task.baseUrl }));
}

export default async function run(task: ImportTask): Promise<ImportOutcome> {
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
