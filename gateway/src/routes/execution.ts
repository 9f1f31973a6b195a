/**
 * /v1 routes served by the execution service, with dedicated handlers rendering the spec's shapes:
 * - POST /tools/call/{tool_id}: body `tool_input` (or the parameters at the root), `fields`,
 *   `max_response_chars`, `confirm_token`; header `Idempotency-Key`. At the root, an `input`, `params` or
 *   `arguments` the tool does not declare is a 400 `misplaced_tool_input` (execution checks it). 200 = a batch element plus
 *   `truncated` and `response_meta` (DESIGN.md); a failed execution is still 200 with success false.
 *   409 confirmation_required carries `confirm_token` and `consent` at the top level besides the error body.
 * - POST /tools/call/batch: `{calls: [...]}` (1..10) -> `{results: [...]}` in input order; refusals,
 *   consent requests and failures stay inside their element (`error_code`, `consent`); only the
 *   caller's key being refused (revoked, owner left the organization) is a 401 for the whole batch.
 *   With `Prefer: respond-async` (RFC 7240) the same body, validated the same way, is recorded and run in
 *   the background instead (issue 31): 202 with the batch record, `Location` and `Preference-Applied`.
 * - GET /tools/call/batch/{batch_id}: the record `{batch_id, status, created_at, finished_at, calls_total,
 *   calls_done, results}`, `results` being exactly the sync route's `results` once the batch ended (null
 *   while working); a batch refused as a whole (`failed`) carries the error body the sync route would have
 *   answered in `error` and its status in `error_status`. Only the key that sent it sees it (404 otherwise).
 * - POST /tools/call/batch/{batch_id}/cancel: calls not started yet do not run (`batch_cancelled`).
 * The tool-call routes reuse API-key principals from a short-lived cache (middleware/auth.ts).
 * An MCP tool that asks a person a question fails with `error_code: mcp_input_required` and
 * `error_details: {questions, continuation, expires_at}` (200 as any failed execution, or in its batch
 * element); the same call repeated with `input_responses: {continuation, answers}` carries the answers
 * to it (services/execution/src/domain/continuation.ts).
 * - GET /tools/executions/{execution_id}/result?path=&max_chars=: the Execution result shape.
 * Beyond the spec's fields, present only when they apply: `projection`, `cursor`, `passthrough_reason`
 * and `_meta` {redaction, truncation_note, execution_id}, which the MCP surface shows.
 */

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { fromJsonBytes, jsonBytes } from "@toolport/kit/json-bytes";
import { isoTime } from "@toolport/kit/proto-json";
import { ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import type {
  CallResult,
  Consent,
  ExecutionResult,
  Redaction,
  ResponseMeta,
  StoredMeta,
} from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import { StoredKind } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import { type BatchRecord, BatchStatus } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import type { AppDeps } from "../deps.js";
import { ConsentRequired, errorBody, httpStatusFor } from "../http/errors.js";
import {
  badParameter,
  batchCallList,
  maxResponseChars,
  objectBody,
  parameterError,
  stringField,
  toolInputField,
} from "../http/input.js";
import { auth } from "../middleware/auth.js";
import { PrincipalCache } from "../middleware/principal-cache.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { executionOps as ops } from "../openapi/operations/execution.js";

/** Body keys of a single call that are not tool parameters. */
const CALL_OPTIONS = new Set([
  "tool_input",
  "fields",
  "max_response_chars",
  "confirm_token",
  "idempotency_key",
  "input_responses",
]);

export function executionRoutes(api: DescribedRouter, deps: AppDeps): void {
  const execution = deps.clients.execution;
  const identity = deps.clients.identity;
  // Tool calls only: each call's allowance check re-checks the key, so a revoked key is still refused
  // on its next call (middleware/auth.ts).
  const cache = new PrincipalCache({ ttlMs: deps.config.GATEWAY_AUTH_CACHE_MS });

  api.post("/tools/call/batch", ops.callBatch, auth(identity, "api_key", { cache }), async (ctx) => {
    const calls = batchCalls(objectBody(ctx));
    if (prefersAsync(ctx.get("prefer"))) {
      const res = await execution.startBatch({ calls });
      const batch = res.batch!;
      ctx.status = 202;
      ctx.set("Location", `/v1/tools/call/batch/${batch.batchId}`);
      ctx.set("Preference-Applied", "respond-async");
      ctx.body = batchJson(batch);
      return;
    }
    const res = await execution.callBatch({ calls });
    ctx.body = { results: res.results.map((r) => elementJson(r, true)) };
  });

  api.get("/tools/call/batch/:batch_id", ops.getBatch, auth(identity, "api_key", { cache }), async (ctx) => {
    const res = await execution.getBatch({ batchId: ctx.params.batch_id! });
    ctx.body = batchJson(res.batch!);
  });

  api.post("/tools/call/batch/:batch_id/cancel", ops.cancelBatch, auth(identity, "api_key", { cache }), async (ctx) => {
    const res = await execution.cancelBatch({ batchId: ctx.params.batch_id! });
    ctx.body = batchJson(res.batch!);
  });

  api.post("/tools/call/:tool_id", ops.callTool, auth(identity, "api_key", { cache }), async (ctx) => {
    const body = objectBody(ctx);
    let toolInput: JsonObject;
    const atRoot = body.tool_input === undefined;
    if (!atRoot) toolInput = toolInputField(body.tool_input, "tool_input");
    else toolInput = Object.fromEntries(Object.entries(body).filter(([k]) => !CALL_OPTIONS.has(k)));
    const header = ctx.get("idempotency-key").trim();
    const res = await execution
      .callTool({
        toolId: ctx.params.tool_id!,
        toolInputJson: jsonBytes(toolInput),
        // Execution refuses a root `input`/`params`/`arguments` the tool does not declare (misplaced_tool_input).
        parametersAtRoot: atRoot,
        ...callOptions(body, ""),
        idempotencyKey: header || stringField(body, "idempotency_key", "", badParameter),
      })
      // 409 with confirm_token and consent at the top level (middleware/errors.ts).
      .catch(ConsentRequired.rethrow);
    const result = res.result!;
    if (result.replayed) ctx.set("Idempotent-Replayed", "true");
    ctx.body = {
      ...elementJson(result, false),
      truncated: result.truncated,
      response_meta: responseMetaJson(result.responseMeta),
    };
  });

  api.get("/tools/executions/:execution_id/result", ops.getExecutionResult, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const path = typeof ctx.query.path === "string" ? ctx.query.path : undefined;
    const rawMax = ctx.query.max_chars;
    let maxChars: number | undefined;
    if (rawMax !== undefined) {
      maxChars = Number(rawMax);
      if (typeof rawMax !== "string" || rawMax.trim() === "" || !Number.isFinite(maxChars)) {
        throw parameterError("max_chars", "max_chars must be an integer (clamped to 100..2000000)");
      }
      maxChars = Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(maxChars)));
    }
    const res = await execution.getExecutionResult({ executionId: ctx.params.execution_id!, path, maxChars });
    ctx.body = executionResultJson(res.result!);
  });
}

/** The calls of a batch body (the same for the sync and the async route), each with a tool_id. */
function batchCalls(body: JsonObject) {
  const calls = batchCallList(body);
  return calls.map((call, i) => {
    if (typeof call !== "object" || call === null || Array.isArray(call))
      throw parameterError(`calls[${i}]`, `calls[${i}] must be an object`);
    const c = call as JsonObject;
    if (typeof c.tool_id !== "string" || c.tool_id.trim() === "")
      throw parameterError(`calls[${i}].tool_id`, `calls[${i}].tool_id is required`);
    return {
      toolId: c.tool_id,
      toolInputJson: jsonBytes(toolInputField(c.tool_input, `calls[${i}].tool_input`)),
      ...callOptions(c, `calls[${i}].`),
      idempotencyKey: stringField(c, "idempotency_key", `calls[${i}].`, badParameter),
    };
  });
}

/**
 * Whether the request's `Prefer` header (RFC 7240: comma-separated preferences, each a token with an
 * optional value and parameters, tokens case-insensitive) asks for `respond-async`.
 */
export function prefersAsync(header: string): boolean {
  return header.split(",").some((p) => (p.split(";")[0] ?? "").split("=")[0]?.trim().toLowerCase() === "respond-async");
}

const batchStatusNames: Record<BatchStatus, string | null> = {
  [BatchStatus.UNSPECIFIED]: null,
  [BatchStatus.WORKING]: "working",
  [BatchStatus.COMPLETED]: "completed",
  [BatchStatus.CANCELLED]: "cancelled",
  [BatchStatus.FAILED]: "failed",
};

/** An async batch record; `results` as the sync route's once it ended. */
function batchJson(b: BatchRecord): JsonObject {
  const ended = b.status === BatchStatus.COMPLETED || b.status === BatchStatus.CANCELLED;
  const out: JsonObject = {
    batch_id: b.batchId,
    status: batchStatusNames[b.status],
    created_at: iso(b.createdAt),
    finished_at: iso(b.finishedAt),
    calls_total: b.callsTotal,
    calls_done: b.callsDone,
    results: ended ? b.results.map((r) => elementJson(r, true)) : null,
  };
  if (b.status === BatchStatus.FAILED && b.error) {
    const details = (fromJsonBytes(b.error.detailsJson) ?? {}) as JsonObject;
    const detail = fromJsonBytes(b.error.detailJson);
    out.error_status = httpStatusFor(b.errorCode ?? 2, b.error.reason);
    out.error = errorBody(b.error.reason, b.errorMessage ?? "", details, detail) as unknown as JsonObject;
  }
  return out;
}

const ACTIONS = new Set(["accept", "decline", "cancel"]);

/**
 * `input_responses`: `{continuation: string, answers: {<key>: {action, content?}}}`, checked for shape
 * here (400); the continuation itself is checked by the execution service. Sent on as JSON text.
 */
function inputResponses(body: JsonObject, prefix: string): Uint8Array | undefined {
  const value = body.input_responses;
  const field = `${prefix}input_responses`;
  if (value === undefined || value === null) return undefined;
  const bad = (where: string, message: string) => parameterError(where, message, "invalid_input_responses");
  if (typeof value !== "object" || Array.isArray(value)) throw bad(field, `${field} must be an object {continuation, answers}`);
  if (typeof value.continuation !== "string" || value.continuation === "")
    throw bad(`${field}.continuation`, `${field}.continuation must be the continuation string of the mcp_input_required error`);
  const answers = value.answers;
  if (typeof answers !== "object" || answers === null || Array.isArray(answers))
    throw bad(`${field}.answers`, `${field}.answers must be an object of answers keyed by question key`);
  for (const [key, answer] of Object.entries(answers)) {
    const where = `${field}.answers.${key}`;
    if (typeof answer !== "object" || answer === null || Array.isArray(answer)) throw bad(where, `${where} must be an object`);
    if (typeof answer.action !== "string" || !ACTIONS.has(answer.action))
      throw bad(`${where}.action`, `${where}.action must be "accept", "decline" or "cancel"`);
    const content = answer.content;
    if (content !== undefined && content !== null && (typeof content !== "object" || Array.isArray(content)))
      throw bad(`${where}.content`, `${where}.content must be an object`);
  }
  return jsonBytes(value);
}

function callOptions(
  body: JsonObject,
  prefix: string,
): { fields: string[]; maxResponseChars?: number; confirmToken?: string; inputResponsesJson?: Uint8Array } {
  const fields = body.fields;
  if (fields !== undefined && fields !== null && (!Array.isArray(fields) || fields.some((f) => typeof f !== "string"))) {
    throw parameterError(`${prefix}fields`, `${prefix}fields must be an array of paths such as "matches[].id"`);
  }
  return {
    fields: (fields as string[] | undefined | null) ?? [],
    maxResponseChars: maxResponseChars(body, prefix),
    confirmToken: stringField(body, "confirm_token", prefix, badParameter),
    inputResponsesJson: inputResponses(body, prefix),
  };
}

const iso = isoTime;
const valueJson = (bytes: Uint8Array) => fromJsonBytes(bytes) ?? null;

export function responseMetaJson(meta: ResponseMeta | undefined): JsonValue {
  if (!meta) return null;
  const out: JsonObject = {
    truncated: meta.truncated,
    original_response_chars: meta.originalResponseChars,
    response_chars: meta.responseChars,
    dropped_items: Object.fromEntries(Object.entries(meta.droppedItems).map(([k, d]) => [k, { kept: d.kept, total: d.total }])),
  };
  if (meta.cursor !== undefined) out.cursor = meta.cursor;
  return out;
}

function redactionJson(r: Redaction): JsonObject {
  return { count: r.count, fields: r.fields.map((f) => ({ path: f.path, key: f.key, rule: f.rule })), mode: r.mode };
}

function metaJson(
  r: { redaction?: Redaction; truncationNote?: string },
  executionId: string | undefined,
): JsonObject | undefined {
  if (!r.redaction && !r.truncationNote) return undefined;
  const meta: JsonObject = {};
  if (r.redaction) meta.redaction = redactionJson(r.redaction);
  if (r.truncationNote) meta.truncation_note = r.truncationNote;
  if (executionId) meta.execution_id = executionId;
  return meta;
}

/** The consent object (DESIGN.md): the call was not run; repeat it with confirm_token. */
export function consentJson(c: Consent): JsonObject {
  return {
    tool_id: c.toolId,
    tool_name: c.toolName,
    parameters: fromJsonBytes(c.parametersJson) ?? {},
    confirm_token: c.confirmToken,
    expires_at: iso(c.expiresAt),
  };
}

/** A batch element (spec "Batch result element"); `inBatch` adds the element's own truncation facts. */
function elementJson(r: CallResult, inBatch: boolean): JsonObject {
  const out: JsonObject = {
    tool_id: r.toolId,
    success: r.success,
    result: valueJson(r.resultJson),
    error: r.error ?? null,
    execution_id: r.executionId ?? null,
  };
  if (r.errorDetail) out.error_code = r.errorDetail.reason;
  // The questions of an MCP tool that asks, and the continuation to answer them with.
  if (r.errorDetail?.reason === "mcp_input_required") out.error_details = fromJsonBytes(r.errorDetail.detailsJson) ?? {};
  if (r.consent) out.consent = consentJson(r.consent);
  if (r.projection) out.projection = { kept: r.projection.kept, unmatched: r.projection.unmatched };
  if (inBatch) {
    out.truncated = r.truncated;
    if (r.responseMeta) out.response_meta = responseMetaJson(r.responseMeta);
  }
  if (r.cursor !== undefined) out.cursor = r.cursor;
  if (r.passthroughReason !== undefined) out.passthrough_reason = r.passthroughReason;
  const meta = metaJson(r, r.executionId);
  if (meta) out._meta = meta;
  return out;
}

function storedMetaJson(m: StoredMeta): JsonObject {
  const out: JsonObject = {
    truncated: m.truncated,
    original_chars: m.originalChars,
    stored_chars: m.storedChars,
    limit: m.limit,
    kind: m.kind === StoredKind.TEXT ? "text" : "json",
  };
  if (Object.keys(m.droppedItems).length > 0) {
    out.dropped_items = Object.fromEntries(Object.entries(m.droppedItems).map(([k, d]) => [k, { kept: d.kept, total: d.total }]));
  }
  if (m.partialJsonOnly !== undefined) out.partial_json_only = m.partialJsonOnly;
  return out;
}

/** The spec's Execution result (stored handle). */
function executionResultJson(r: ExecutionResult): JsonObject {
  const out: JsonObject = {
    execution_id: r.executionId,
    tool_id: r.toolId,
    status: r.status === ExecutionStatus.SUCCESS ? "success" : "error",
    executed_at: iso(r.executedAt),
    error: r.error ?? null,
    path: r.path ?? null,
    result: valueJson(r.resultJson),
    truncated: r.truncated,
    response_meta: responseMetaJson(r.responseMeta),
  };
  if (r.pathMatched !== undefined) out.path_matched = r.pathMatched;
  if (r.storedTruncated) {
    out.stored_truncated = true;
    if (r.storedMeta) out.stored_meta = storedMetaJson(r.storedMeta);
  }
  if (r.cursor !== undefined) out.cursor = r.cursor;
  if (r.passthroughReason !== undefined) out.passthrough_reason = r.passthroughReason;
  const meta = metaJson(r, r.executionId);
  if (meta) out._meta = meta;
  return out;
}
