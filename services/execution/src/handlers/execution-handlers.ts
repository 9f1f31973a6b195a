/** ExecutionService handlers: thin, proto in -> Executor / stored results -> proto out. */

import type { ServiceImpl } from "@connectrpc/connect";
import { invalidArgument, notFound } from "@toolport/kit/errors";
import { fromJsonBytes } from "@toolport/kit/json-bytes";
import type { JsonObject } from "@toolport/kit/json-values";
import { principalKey } from "@toolport/kit/rpc";
import type { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { type InputResponses, parseInputResponses } from "../domain/continuation.js";
import type { CallRequest, Executor } from "../domain/executor.js";
import { permits } from "../domain/executor.js";
import { readStoredResult } from "../domain/results.js";
import type { PgExecutionStore } from "../store/executions-store.js";
import { callerFromPrincipal, outcomeToProto, resultViewToProto } from "./convert.js";

export const MAX_BATCH = 10;

export interface HandlerDeps {
  executor: Executor;
  store: PgExecutionStore;
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
  },
  field: string,
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
  };
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

export function createExecutionHandlers(deps: HandlerDeps): ServiceImpl<typeof ExecutionService> {
  return {
    async callTool(req, context) {
      const caller = callerFromPrincipal(context.values.get(principalKey));
      const outcome = await deps.executor.call(caller, callRequest(req, "tool_id"));
      return { result: outcomeToProto(outcome) };
    },

    async callBatch(req, context) {
      const caller = callerFromPrincipal(context.values.get(principalKey));
      if (req.calls.length < 1 || req.calls.length > MAX_BATCH) {
        throw invalidArgument("invalid_batch", `calls must hold 1 to ${MAX_BATCH} calls (got ${req.calls.length})`, {
          details: { field: "calls", count: req.calls.length },
        });
      }
      // Validate every element's shape first: a batch with a malformed element is a 400 as a whole.
      const requests = req.calls.map((call, i) => callRequest(call, `calls[${i}].tool_id`));
      const outcomes = await deps.executor.batch(caller, requests);
      return { results: outcomes.map(outcomeToProto) };
    },

    async getExecutionResult(req, context) {
      const caller = callerFromPrincipal(context.values.get(principalKey));
      const stored = await deps.store.find(req.executionId.trim());
      // Another caller's handle reads exactly like one that does not exist; so does a result of a tool the
      // caller's key may not call (README "Permissions": results follow the allow-lists).
      if (!stored || stored.accountId !== caller.accountId || !permits(caller, stored.toolId, stored.serviceId)) {
        throw notFound("execution_not_found", "no execution with this id", { details: { execution_id: req.executionId } });
      }
      return { result: resultViewToProto(readStoredResult(stored, req.path, req.maxChars)) };
    },
  };
}
