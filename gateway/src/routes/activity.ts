/**
 * GET /v1/activity: the call log (issue 33), served by the execution service's ListActivity, which decides
 * whose calls the caller sees. The gateway names the keys on the page (identity's key list as the caller
 * sees it: a key it may not list stays unnamed) and links each call it may open to its stored result.
 * Body `{calls, next_cursor}` and the `Link: <...>; rel="next"` header of the other list routes.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { isoTime } from "@toolport/kit/proto-json";
import type { ActivityEntry } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import type { AppDeps } from "../deps.js";
import { intQuery, linkNext, queryString, timeValue } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { activityOps as ops } from "../openapi/operations/activity.js";

export function activityRoutes(api: DescribedRouter, deps: AppDeps): void {
  const { execution, identity } = deps.clients;

  api.get("/activity", ops.listActivity, auth(identity, "api_key_or_jwt"), async (ctx) => {
    const page = await execution.listActivity({
      toolId: queryString(ctx, "tool_id"),
      keyId: queryString(ctx, "key_id"),
      status: queryString(ctx, "status"),
      since: timeValue(queryString(ctx, "since"), "since"),
      until: timeValue(queryString(ctx, "until"), "until"),
      limit: intQuery(ctx.query.limit, "limit"),
      cursor: queryString(ctx, "cursor"),
    });
    const names = await keyNames(page.entries, ctx.state.principal?.organizationId);
    const reader = ctx.state.principal?.accountId;
    linkNext(ctx, deps.config.PUBLIC_URL, page.nextCursor);
    ctx.body = {
      calls: page.entries.map((e) => callJson(e, names, reader)),
      next_cursor: page.nextCursor ?? null,
    };
  });

  /**
   * Names of the page's keys, from the organization's keys as the caller may list them (revoked ones
   * included): an owner or admin lists every member's, anyone else their own.
   */
  async function keyNames(entries: ActivityEntry[], organizationId: string | undefined): Promise<Map<string, string>> {
    if (!entries.some((e) => e.keyId)) return new Map();
    const { keys } = await identity.listApiKeys({ organizationId: organizationId || undefined, includeRevoked: true });
    return new Map(keys.map((k) => [k.id, k.name]));
  }
}

function callJson(e: ActivityEntry, names: Map<string, string>, reader: string | undefined): JsonObject {
  const ran = e.status !== "refused";
  return {
    id: e.id,
    at: isoTime(e.at),
    status: e.status,
    reason: e.reason ?? null,
    error_class: e.errorClass ?? null,
    message: e.message ?? null,
    account_id: e.accountId,
    key: e.keyId ? { id: e.keyId, name: names.get(e.keyId) ?? null } : null,
    tool: { id: e.toolId, name: e.toolName },
    service: { id: e.serviceId, name: e.serviceName },
    duration_ms: e.durationMs,
    cost_cents: Number(e.costCents),
    execution_id: ran ? e.id : null,
    // A stored result is readable by the account that made the call only (GetExecutionResult).
    result_url: ran && e.accountId === reader ? `/v1/tools/executions/${e.id}/result` : null,
  };
}
