/**
 * GET /tools/recommended. With tool_id: tools the same callers used together with it, then tools of
 * the same service, then tools sharing a tag. Without: for a signed-in caller who has used tools,
 * tools used by the callers of its tools, then more of its services' tools; otherwise popular tools
 * (by successful calls in 30 days); and on a catalog nobody has called yet, credential-free tools.
 * Each result says why, in words, with a score (higher is stronger). Every step reads only as many
 * tools as may still fit (usableTools), never the whole catalog.
 */
import { invalidArgument, notFound } from "@toolport/kit/errors";
import { type Caller, canSee, isPublic } from "./access.js";
import { isSunset } from "./deprecation.js";
import type { CatalogDeps } from "./deps.js";
import type { ToolWithService } from "./model.js";
import type { UsableFilter } from "./ports.js";
import { WINDOW_DAYS } from "./reliability.js";

export const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 50;

export interface RecommendationOut {
  pair: ToolWithService;
  reason: string;
  score: number;
}

export async function recommend(
  deps: CatalogDeps,
  input: { toolId?: string; limit?: number },
  caller: Caller | null,
): Promise<RecommendationOut[]> {
  if (input.limit !== undefined && (!Number.isInteger(input.limit) || input.limit < 0)) {
    throw invalidArgument("invalid_limit", "limit must be a non-negative integer", { details: { field: "limit" } });
  }
  const limit = Math.min(input.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  if (limit === 0) return [];
  const reader = caller;
  const out: RecommendationOut[] = [];
  const taken = new Set<string>();
  const push = (pair: ToolWithService, reason: string, score: number) => {
    if (taken.has(pair.tool.id) || out.length >= limit) return;
    taken.add(pair.tool.id);
    out.push({ pair, reason, score: Math.round(score * 1000) / 1000 });
  };
  /** The listed tools the caller may use (others are dropped), by id. */
  const usableById = async (ids: string[]) =>
    new Map((await deps.store.usableTools(reader, { toolIds: ids }, ids.length)).map((p) => [p.tool.id, p]));
  /** More tools of the filter, in list order, besides those already chosen: only as many as still fit. */
  const more = (filter: UsableFilter) => deps.store.usableTools(reader, { ...filter, exceptIds: [...taken] }, limit - out.length);

  if (input.toolId) {
    const anchor = await deps.store.findTool(input.toolId.trim());
    if (!anchor || !(caller ? canSee(anchor.service, caller) : isPublic(anchor.service)) || isSunset(anchor.tool)) {
      throw notFound("tool_not_found", `tool ${input.toolId} not found`, { details: { tool_id: input.toolId } });
    }
    taken.add(anchor.tool.id);
    const together = await deps.store.usedTogether([anchor.tool.id], WINDOW_DAYS, limit * 3);
    const pairs = await usableById(together.map((t) => t.toolId));
    for (const t of together) {
      const pair = pairs.get(t.toolId);
      if (pair)
        push(
          pair,
          `Used together with ${anchor.tool.name} by ${t.sharedCallers} ${t.sharedCallers === 1 ? "caller" : "callers"} in the last 30 days`,
          0.6 + Math.min(t.sharedCallers, 40) / 100,
        );
    }
    for (const p of await more({ serviceIds: [anchor.service.id] })) {
      push(p, `Another tool of ${anchor.service.name}, the service of ${anchor.tool.name}`, 0.5);
    }
    if (anchor.tool.tags.length > 0) {
      for (const p of await more({ anyTag: anchor.tool.tags })) {
        const shared = p.tool.tags.find((t) => anchor.tool.tags.includes(t));
        push(p, `Shares the tag "${shared}" with ${anchor.tool.name}`, 0.3);
      }
    }
    return out;
  }

  if (caller) {
    const used = await deps.store.toolsUsedBy(caller.accountId, WINDOW_DAYS);
    if (used.length > 0) {
      const usedIds = used.map((u) => u.toolId);
      for (const id of usedIds) taken.add(id);
      const together = await deps.store.usedTogether(usedIds, WINDOW_DAYS, limit * 3);
      const pairs = await usableById([...usedIds, ...together.map((t) => t.toolId)]);
      const top = pairs.get(usedIds[0] as string);
      for (const t of together) {
        const pair = pairs.get(t.toolId);
        if (pair)
          push(
            pair,
            `Used by ${t.sharedCallers} ${t.sharedCallers === 1 ? "caller" : "callers"} who also use tools you use${top ? `, such as ${top.tool.name}` : ""}`,
            0.6 + Math.min(t.sharedCallers, 40) / 100,
          );
      }
      const usedServices = new Map(
        usedIds
          .map((id) => pairs.get(id))
          .filter((p): p is ToolWithService => !!p)
          .map((p) => [p.service.id, p.service.name]),
      );
      if (usedServices.size > 0 && out.length < limit) {
        for (const p of await more({ serviceIds: [...usedServices.keys()] })) {
          push(p, `More from ${usedServices.get(p.service.id)}, a service you use`, 0.45);
        }
      }
    }
  }

  if (out.length < limit) {
    const popular = await deps.store.popularTools(WINDOW_DAYS, limit * 4);
    const pairs = await usableById(popular.map((p) => p.toolId).filter((id) => !taken.has(id)));
    const most = Math.max(1, ...popular.map((p) => p.successes));
    for (const p of popular) {
      const pair = pairs.get(p.toolId);
      if (!pair) continue;
      const rate = p.calls > 0 ? Math.round((p.successes / p.calls) * 100) : 0;
      push(
        pair,
        `Popular: ${p.calls} ${p.calls === 1 ? "call" : "calls"} in the last 30 days, ${rate}% successful`,
        0.2 + (0.4 * p.successes) / most,
      );
    }
  }

  // Nobody has called anything yet (or too little): tools that run with no credential and no funding,
  // real services' before sample-data ones'.
  if (out.length < limit) {
    for (const p of await more({ credentialFree: true })) {
      push(p, "Works without a credential or funding: a good first call", 0.1);
    }
  }
  return out;
}
