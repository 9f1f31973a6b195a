/** proto <-> domain for the execution service's handlers. */

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { unauthenticated } from "@toolport/kit/errors";
import { authorityOf, Grant, grantRefusal } from "@toolport/kit/grants";
import { jsonBytes } from "@toolport/kit/json-bytes";
import { ErrorDetailSchema } from "@toolport/proto/toolport/common/v1/errors_pb";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { ErrorClass, ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import {
  type CallResult,
  CallResultSchema,
  ConsentSchema,
  type ExecutionResult,
  ExecutionResultSchema,
  ProjectionSchema,
  RedactionSchema,
  ResponseMetaSchema,
  StoredKind,
  StoredMetaSchema,
} from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import type { ResponseMeta, StoredMeta } from "../domain/cap.js";
import type { CallOutcome } from "../domain/executor.js";
import type { ErrorClassName } from "../domain/failure.js";
import type { Caller } from "../domain/model.js";
import type { RedactionReport } from "../domain/redaction/redact.js";
import type { ResultView } from "../domain/results.js";

export function callerFromPrincipal(p: Principal | undefined): Caller {
  if (!p?.accountId) throw unauthenticated("unauthenticated", "an API key is required");
  const perms = p.keyPermissions;
  return {
    accountId: p.accountId,
    organizationId: p.organizationId || p.personalOrganizationId,
    keyId: p.keyId,
    tier: p.tier,
    allowedServices: perms?.allowedServices ? perms.allowedServices.values : undefined,
    allowedTools: perms?.allowedTools ? perms.allowedTools.values : undefined,
    maxCostPerCallCents: perms?.maxCostPerCallCents,
    dailySpendLimitCents: perms?.dailySpendLimitCents,
    requireConfirmation: perms?.requireConfirmation ?? false,
    callRefusal: grantRefusal(authorityOf(p), Grant.CALL_TOOLS, "call this organization's tools"),
  };
}

const errorClasses: Record<ErrorClassName, ErrorClass> = {
  auth: ErrorClass.AUTH,
  caller: ErrorClass.CALLER,
  platform: ErrorClass.PLATFORM,
  upstream: ErrorClass.UPSTREAM,
};

function responseMetaToProto(meta: ResponseMeta | null) {
  if (!meta) return undefined;
  return create(ResponseMetaSchema, {
    truncated: meta.truncated,
    originalResponseChars: meta.original_response_chars,
    responseChars: meta.response_chars,
    droppedItems: meta.dropped_items,
    cursor: meta.cursor,
  });
}

function redactionToProto(report: RedactionReport | undefined | null) {
  if (!report) return undefined;
  return create(RedactionSchema, { count: report.count, fields: report.fields, mode: report.mode });
}

function storedMetaToProto(meta: StoredMeta | undefined) {
  if (!meta) return undefined;
  return create(StoredMetaSchema, {
    truncated: meta.truncated,
    originalChars: meta.original_chars,
    storedChars: meta.stored_chars,
    limit: meta.limit,
    kind: meta.kind === "text" ? StoredKind.TEXT : StoredKind.JSON,
    droppedItems: meta.dropped_items ?? {},
    partialJsonOnly: meta.partial_json_only,
  });
}

export function outcomeToProto(o: CallOutcome): CallResult {
  return create(CallResultSchema, {
    toolId: o.toolId,
    success: o.success,
    resultJson: jsonBytes(o.result),
    error: o.error ?? undefined,
    executionId: o.executionId,
    consent: o.consent
      ? create(ConsentSchema, {
          toolId: o.consent.tool_id,
          toolName: o.consent.tool_name,
          parametersJson: jsonBytes(o.consent.parameters),
          confirmToken: o.consent.confirm_token,
          expiresAt: timestampFromDate(new Date(o.consent.expires_at)),
        })
      : undefined,
    projection: o.projection ? create(ProjectionSchema, o.projection) : undefined,
    truncated: o.truncated,
    responseMeta: responseMetaToProto(o.responseMeta),
    cursor: o.cursor,
    redaction: redactionToProto(o.redaction),
    truncationNote: o.truncationNote,
    passthroughReason: o.passthroughReason,
    errorDetail: o.refusal
      ? create(ErrorDetailSchema, { reason: o.refusal.reason, detailsJson: jsonBytes(o.refusal.details) })
      : undefined,
    errorClass: o.errorClass ? errorClasses[o.errorClass] : ErrorClass.UNSPECIFIED,
    replayed: o.replayed,
    costCents: o.costCents,
  });
}

export function resultViewToProto(v: ResultView): ExecutionResult {
  return create(ExecutionResultSchema, {
    executionId: v.executionId,
    toolId: v.toolId,
    status: v.status === "success" ? ExecutionStatus.SUCCESS : ExecutionStatus.ERROR,
    executedAt: timestampFromDate(v.executedAt),
    error: v.error ?? undefined,
    path: v.path ?? undefined,
    resultJson: jsonBytes(v.result),
    truncated: v.truncated,
    responseMeta: responseMetaToProto(v.responseMeta),
    pathMatched: v.pathMatched,
    storedTruncated: v.storedTruncated,
    storedMeta: storedMetaToProto(v.storedMeta),
    redaction: redactionToProto(v.redaction),
    passthroughReason: v.passthroughReason,
    cursor: v.cursor,
    truncationNote: v.truncationNote,
  });
}
