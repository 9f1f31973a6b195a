/**
 * The execution service as the workflow runner calls it (ExecutionPort, domain/ports.ts): one CallBatch
 * of one call a step, and a stored result read back by path. Called in the run's scope, so with the
 * principal stored with the run.
 */
import { toJson } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { readError } from "@toolport/kit/errors";
import { fromJsonBytes, jsonBytes } from "@toolport/kit/json-bytes";
import type { Json, JsonObject } from "@toolport/kit/json-values";
import { ResponseMetaSchema } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import type { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import type { ExecutionPort, StepCall, StoredRead } from "../domain/ports.js";

/** Failures of the call itself (not the step's outcome) that a later attempt may not meet. */
const TRANSIENT = new Set([Code.Unavailable, Code.DeadlineExceeded, Code.Internal, Code.Unknown, Code.Aborted, Code.Canceled]);

export class ExecutionClient implements ExecutionPort {
  constructor(private readonly client: Client<typeof ExecutionService>) {}

  async callStep(call: Parameters<ExecutionPort["callStep"]>[0]): Promise<StepCall> {
    let res: Awaited<ReturnType<Client<typeof ExecutionService>["callBatch"]>>;
    try {
      res = await this.client.callBatch({
        calls: [
          {
            toolId: call.toolId,
            toolInputJson: jsonBytes(call.input),
            maxResponseChars: call.maxResponseChars,
            confirmToken: call.confirmToken,
            idempotencyKey: call.idempotencyKey,
          },
        ],
      });
    } catch (err) {
      const e = ConnectError.from(err);
      if (TRANSIENT.has(e.code)) return { kind: "unreachable", why: e.rawMessage };
      const keyRefused = e.code === Code.Unauthenticated;
      return { kind: "refused", keyRefused, reason: keyRefused ? "unauthenticated" : readError(e).reason, message: e.rawMessage };
    }
    const result = res.results[0]!;
    const toolId = result.toolId || call.toolId;
    if (result.consent) {
      const c = result.consent;
      const consent: JsonObject = {
        tool_id: c.toolId,
        tool_name: c.toolName,
        parameters: fromJsonBytes(c.parametersJson) ?? {},
        confirm_token: c.confirmToken,
        expires_at: c.expiresAt ? new Date(Number(c.expiresAt.seconds) * 1000).toISOString() : null,
      };
      return { kind: "consent", toolId, consent };
    }
    const reason = result.errorDetail?.reason;
    if (!result.success && !result.executionId) return { kind: "not_run", toolId, reason, error: result.error };
    const executionId = result.executionId ?? null;
    if (!result.success) return { kind: "failed", toolId, executionId, reason, error: result.error };
    return {
      kind: "completed",
      toolId,
      executionId,
      value: fromJsonBytes<Json>(result.resultJson) ?? null,
      truncated: result.truncated,
      responseMeta: result.responseMeta ? (toJson(ResponseMetaSchema, result.responseMeta) as JsonObject) : null,
    };
  }

  async readStored(executionId: string, path: string | undefined, maxChars: number): Promise<StoredRead> {
    const res = await this.client.getExecutionResult({ executionId, path, maxChars });
    const stored = res.result!;
    if (stored.pathMatched === false) return { kind: "unmatched" };
    if (stored.truncated) return { kind: "too_large" };
    return { kind: "value", value: fromJsonBytes<Json>(stored.resultJson) ?? null };
  }
}
