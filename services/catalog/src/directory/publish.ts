/**
 * Publishing a directory entry as a catalog service through a gateway's `POST /v1/services`, as any
 * publisher would: the gateway authenticates the key, the catalog converts, validates and stores, and
 * every check and event of publishing applies. Used by the operator command (`npm run catalog`) and the
 * directory benchmark; plain `fetch`, no workspace dependency.
 */
import { type Directory, type DirectoryEntry, serviceName } from "./directory.js";

export interface PublishOptions {
  /** The gateway's address, without `/v1` (e.g. http://localhost:8080). */
  gateway: string;
  /** An API key allowed to publish (a platform admin's or an organization owner's). */
  apiKey: string;
  visibility?: "public" | "private";
  /** The document text to send instead of the entry's own (e.g. the same document as YAML). */
  documentText?: string;
  /** Send as this service name instead of serviceName(directory, entry). */
  name?: string;
}

export type PublishOutcome =
  | {
      ok: true;
      entry: DirectoryEntry;
      status: number;
      serviceId: string;
      tools: { name: string; method: string; path: string }[];
      warnings: string[];
      ms: number;
    }
  | {
      ok: false;
      entry: DirectoryEntry;
      /** The HTTP status, or 0 when no answer came (connection refused or reset). */
      status: number;
      code: string;
      message: string;
      ms: number;
    };

export async function publishEntry(
  directory: Directory,
  entry: DirectoryEntry,
  options: PublishOptions,
): Promise<PublishOutcome> {
  const text = options.documentText ?? (await directory.readDocument(entry.name));
  const body = JSON.stringify({
    name: options.name ?? serviceName(directory, entry),
    visibility: options.visibility ?? "private",
    ...(entry.categories[0] ? { category: entry.categories[0] } : {}),
    api: { document_text: text },
  });
  const started = performance.now();
  let status = 0;
  let answer: unknown;
  try {
    const res = await fetch(`${options.gateway.replace(/\/+$/, "")}/v1/services`, {
      method: "POST",
      headers: { "content-type": "application/json", "svc-api-key": options.apiKey },
      body,
    });
    status = res.status;
    const raw = await res.text();
    try {
      answer = JSON.parse(raw);
    } catch {
      answer = raw;
    }
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return {
      ok: false,
      entry,
      status: 0,
      code: cause?.code ?? "no_answer",
      message: cause?.message ?? (err as Error).message,
      ms: performance.now() - started,
    };
  }
  const ms = performance.now() - started;
  const json = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  if (status === 201 || status === 200) {
    const service = (json.service ?? {}) as { id?: string };
    const tools = (Array.isArray(json.tools) ? json.tools : []) as { name: string; method: string; path: string }[];
    return {
      ok: true,
      entry,
      status,
      serviceId: String(service.id ?? ""),
      tools: tools.map((t) => ({ name: t.name, method: t.method, path: t.path })),
      warnings: (Array.isArray(json.warnings) ? json.warnings : []) as string[],
      ms,
    };
  }
  const error = (json.error ?? {}) as { code?: string; message?: string };
  return {
    ok: false,
    entry,
    status,
    code: error.code ?? `http_${status}`,
    message: error.message ?? (typeof json.detail === "string" ? json.detail : String(answer).slice(0, 300)),
    ms,
  };
}
