/** ExecutionService handlers: thin, proto in -> Executor / stored results -> proto out. */

import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { currentRequestId } from "@toolport/kit/context";
import { invalidArgument, notFound, unauthenticated } from "@toolport/kit/errors";
import { fromJsonBytes, jsonBytes } from "@toolport/kit/json-bytes";
import type { JsonObject } from "@toolport/kit/json-values";
import { principalKey } from "@toolport/kit/rpc";
import { ErrorDetailSchema } from "@toolport/proto/toolport/common/v1/errors_pb";
import { OrgRole, type Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { CallResultSchema } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import {
  ActivityEntrySchema,
  type BatchRecord,
  BatchRecordSchema,
  BatchStatus,
  type ExecutionService,
} from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import type { BatchRunner } from "../batches/batch-runner.js";
import { cancelledElement } from "../batches/batch-runner.js";
import {
  type ActivityEntry,
  activityLimit,
  activityScope,
  activityStatus,
  checkTimeRange,
  decodeCursor,
  encodeCursor,
  usageWindowStart,
} from "../domain/activity.js";
import { type InputResponses, parseInputResponses } from "../domain/continuation.js";
import type { CallRequest, Executor } from "../domain/executor.js";
import { permits } from "../domain/executor.js";
import { readStoredResult } from "../domain/results.js";
import type { PgActivityStore } from "../store/activity-store.js";
import type { BatchRow, BatchState, PgBatchStore } from "../store/batches-store.js";
import { isUuid, type PgExecutionStore } from "../store/executions-store.js";
import { callerFromPrincipal, outcomeToProto, resultViewToProto } from "./convert.js";

export const MAX_BATCH = 10;

export interface HandlerDeps {
  executor: Executor;
  store: PgExecutionStore;
  activity: PgActivityStore;
  batches: BatchRunner;
  batchStore: PgBatchStore;
}

/** The tool parameters: a JSON object sent as JSON text; absent means `{}`. */
function toolInput(bytes: Uint8Array, field: string): JsonObject {
  let value: unknown;
  try {
    value = fromJsonBytes(bytes);
  } catch {
    throw invalidArgument("invalid_parameters", `${field}.tool_input is not valid JSON`, { details: { field } });
  }
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidArgument("invalid_parameters", `${field}.tool_input must be a JSON object`, { details: { field } });
  }
  return value as JsonObject;
}

function callRequest(
  call: {
    toolId: string;
    toolInputJson: Uint8Array;
    fields: string[];
    maxResponseChars?: number;
    confirmToken?: string;
    idempotencyKey?: string;
    inputResponsesJson: Uint8Array;
    parametersAtRoot?: boolean;
  },
  field: string,
  answerBy?: number,
): CallRequest {
  const toolId = call.toolId.trim();
  if (toolId === "") throw invalidArgument("invalid_parameters", `${field} is required`, { details: { field } });
  return {
    toolId,
    input: toolInput(call.toolInputJson, field),
    fields: call.fields,
    maxResponseChars: call.maxResponseChars,
    confirmToken: call.confirmToken || undefined,
    idempotencyKey: call.idempotencyKey,
    inputResponses: inputResponses(call.inputResponsesJson, field),
    parametersAtRoot: call.parametersAtRoot ?? false,
    answerBy,
  };
}

/** When the caller stops listening: its deadline as a time, or undefined when it set none. */
function answerByOf(context: { timeoutMs(): number | undefined }): number | undefined {
  const left = context.timeoutMs();
  return left === undefined ? undefined : Date.now() + left;
}

/** A batch's calls, validated as CallBatch validates them (a malformed batch is refused as a whole). */
function batchRequests(calls: Parameters<typeof callRequest>[0][], answerBy?: number): CallRequest[] {
  if (calls.length < 1 || calls.length > MAX_BATCH) {
    throw invalidArgument("invalid_batch", `calls must hold 1 to ${MAX_BATCH} calls (got ${calls.length})`, {
      details: { field: "calls", count: calls.length },
    });
  }
  return calls.map((call, i) => callRequest(call, `calls[${i}].tool_id`, answerBy));
}

const batchStatuses: Record<BatchState, BatchStatus> = {
  working: BatchStatus.WORKING,
  completed: BatchStatus.COMPLETED,
  cancelled: BatchStatus.CANCELLED,
  failed: BatchStatus.FAILED,
};

function batchToProto(row: BatchRow): BatchRecord {
  const ended = row.status === "completed" || row.status === "cancelled";
  return create(BatchRecordSchema, {
    batchId: row.id,
    status: batchStatuses[row.status],
    createdAt: timestampFromDate(row.createdAt),
    finishedAt: row.finishedAt ? timestampFromDate(row.finishedAt) : undefined,
    callsTotal: row.callsTotal,
    callsDone: row.callsDone,
    results: ended ? row.outcomes.map((o) => fromBinary(CallResultSchema, o ?? new Uint8Array())) : [],
    ...(row.error
      ? {
          errorCode: row.error.code,
          errorMessage: row.error.message,
          error: create(ErrorDetailSchema, {
            reason: row.error.reason,
            detailsJson: jsonBytes(row.error.details),
            detailJson: row.error.detail === undefined ? new Uint8Array() : jsonBytes(row.error.detail),
          }),
        }
      : {}),
  });
}

/** `input_responses` (JSON text; empty = a fresh call), checked for shape: 400 otherwise. */
function inputResponses(bytes: Uint8Array, field: string): InputResponses | undefined {
  if (bytes.length === 0) return undefined;
  let value: unknown;
  try {
    value = fromJsonBytes(bytes);
  } catch {
    value = null;
  }
  const parsed = parseInputResponses(value);
  if (typeof parsed === "string")
    throw invalidArgument("invalid_input_responses", parsed, {
      details: { field: `${field.replace(/tool_id$/, "")}input_responses` },
    });
  return parsed;
}

/** Who is reading the log (domain/activity.ts decides what they see). */
function activityReader(p: Principal | undefined) {
  if (!p?.accountId) throw unauthenticated("unauthenticated", "an API key or a sign-in is required");
  return activityScope({
    accountId: p.accountId,
    organizationId: p.organizationId || p.personalOrganizationId,
    keyId: p.keyId,
    managesOrganization: p.orgRole === OrgRole.OWNER || p.orgRole === OrgRole.ADMIN,
  });
}

function activityEntryToProto(e: ActivityEntry) {
  return create(ActivityEntrySchema, {
    id: e.id,
    at: timestampFromDate(e.at),
    accountId: e.accountId,
    keyId: e.keyId,
    toolId: e.toolId,
    toolName: e.toolName,
    serviceId: e.serviceId,
    serviceName: e.serviceName,
    status: e.status,
    reason: e.reason,
    errorClass: e.errorClass,
    message: e.message,
    durationMs: e.durationMs,
    costCents: e.costCents,
  });
}

export function createExecutionHandlers(deps: HandlerDeps): ServiceImpl<typeof ExecutionService> {
  /** The caller's own batch: another caller's (account, organization and key), or an unknown id, is NOT_FOUND. */
  const ownBatch = async (batchId: string, principal: Parameters<typeof callerFromPrincipal>[0]): Promise<BatchRow> => {
    const caller = callerFromPrincipal(principal);
    const id = batchId.trim();
    if (!isUuid(id))
      throw invalidArgument("invalid_batch_id", "batch_id must be the UUID a batch was answered with", {
        details: { field: "batch_id" },
      });
    const row = await deps.batchStore.find(id);
    if (
      !row ||
      row.accountId !== caller.accountId ||
      row.organizationId !== caller.organizationId ||
      (row.keyId ?? "") !== (caller.keyId ?? "")
    ) {
      throw notFound("batch_not_found", "no batch with this id", { details: { batch_id: id } });
    }
    return row;
  };

  return {
    async callTool(req, context) {
      const caller = callerFromPrincipal(context.values.get(principalKey));
      const outcome = await deps.executor.call(caller, callRequest(req, "tool_id", answerByOf(context)));
      return { result: outcomeToProto(outcome) };
    },

    async callBatch(req, context) {
      const caller = callerFromPrincipal(context.values.get(principalKey));
      // Validate every element's shape first: a batch with a malformed element is a 400 as a whole.
      const requests = batchRequests(req.calls, answerByOf(context));
      const outcomes = await deps.executor.batch(caller, requests);
      return { results: outcomes.map(outcomeToProto) };
    },

    async getExecutionResult(req, context) {
      const caller = callerFromPrincipal(context.values.get(principalKey));
      const stored = await deps.store.find(req.executionId.trim());
      // Another caller's handle reads exactly like one that does not exist; so does a result of a tool the
      // caller's key may not call (docs/permissions.md: results follow the allow-lists).
      if (!stored || stored.accountId !== caller.accountId || !permits(caller, stored.toolId, stored.serviceId)) {
        throw notFound("execution_not_found", "no execution with this id", { details: { execution_id: req.executionId } });
      }
      return { result: resultViewToProto(readStoredResult(stored, req.path, req.maxChars)) };
    },

    async listActivity(req, context) {
      const scope = activityReader(context.values.get(principalKey));
      const since = req.since ? timestampDate(req.since) : undefined;
      const until = req.until ? timestampDate(req.until) : undefined;
      checkTimeRange(since, until);
      const page = await deps.activity.list(scope, {
        toolId: req.toolId?.trim() || undefined,
        keyId: req.keyId?.trim() || undefined,
        status: activityStatus(req.status?.trim()),
        since,
        until,
        limit: activityLimit(req.limit),
        after: req.cursor ? decodeCursor(req.cursor) : undefined,
      });
      return { entries: page.entries.map(activityEntryToProto), nextCursor: page.next ? encodeCursor(page.next) : undefined };
    },

    async countRefusals(req, context) {
      const scope = activityReader(context.values.get(principalKey));
      const reasons = await deps.activity.countRefusals(scope, req.keyId.trim(), usageWindowStart(req.days));
      return { refused: reasons.reduce((n, r) => n + r.calls, 0n), reasons };
    },

    async startBatch(req, context) {
      const principal = context.values.get(principalKey);
      if (!principal?.accountId) throw unauthenticated("unauthenticated", "an API key is required");
      const requests = batchRequests(req.calls);
      const row = await deps.batches.start(principal, currentRequestId() ?? "", requests);
      return { batch: batchToProto(row) };
    },

    async getBatch(req, context) {
      return { batch: batchToProto(await ownBatch(req.batchId, context.values.get(principalKey))) };
    },

    async cancelBatch(req, context) {
      const row = await ownBatch(req.batchId, context.values.get(principalKey));
      if (row.status !== "working") return { batch: batchToProto(row) };
      await deps.batchStore.cancel(row.id, cancelledElement);
      return { batch: batchToProto((await deps.batchStore.find(row.id)) ?? row) };
    },
  };
}
