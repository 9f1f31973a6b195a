/**
 * GET /tools/recommended. With tool_id: tools the same callers used together with it, then tools of
 * the same service, then tools sharing a tag. Without: for a signed-in caller who has used tools,
 * tools used by the callers of its tools, then more of its services' tools; otherwise popular tools
 * (by successful calls in 30 days); and on a catalog nobody has called yet, credential-free tools.
 * Each result says why, in words, with a score (higher is stronger).
 */
import { invalidArgument, notFound } from "@toolport/kit/errors";
import { type Caller, canSee, isPublic } from "../domain/access.js";
import { isSunset } from "../domain/deprecation.js";
import type { ToolWithService } from "../domain/model.js";
import { needsCredential } from "../domain/readiness.js";
import { WINDOW_DAYS } from "../domain/reliability.js";
import { findTool, listToolsWithService } from "../store/catalog-store.js";
import { popularTools, toolsUsedBy, usedTogether } from "../store/executions-store.js";
import type { CatalogDeps } from "./deps.js";

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
  const now = new Date();
  const all = await listToolsWithService(deps.pool);
  const usable = new Map(
    all
      .filter((p) => !isSunset(p.tool, now) && (caller ? canSee(p.service, caller) : isPublic(p.service)))
      .map((p) => [p.tool.id, p]),
  );
  const out: RecommendationOut[] = [];
  const taken = new Set<string>();
  const add = (toolId: string, reason: string, score: number) => {
    const pair = usable.get(toolId);
    if (!pair || taken.has(toolId) || out.length >= limit) return;
    taken.add(toolId);
    out.push({ pair, reason, score: Math.round(score * 1000) / 1000 });
  };

  if (input.toolId) {
    const anchor = await findTool(deps.pool, input.toolId.trim());
    if (!anchor || !(caller ? canSee(anchor.service, caller) : isPublic(anchor.service)) || isSunset(anchor.tool, now)) {
      throw notFound("tool_not_found", `tool ${input.toolId} not found`, { details: { tool_id: input.toolId } });
    }
    taken.add(anchor.tool.id);
    for (const t of await usedTogether(deps.pool, [anchor.tool.id], WINDOW_DAYS, limit * 3)) {
      add(
        t.toolId,
        `Used together with ${anchor.tool.name} by ${t.sharedCallers} ${t.sharedCallers === 1 ? "caller" : "callers"} in the last 30 days`,
        0.6 + Math.min(t.sharedCallers, 40) / 100,
      );
    }
    for (const p of usable.values()) {
      if (p.service.id === anchor.service.id)
        add(p.tool.id, `Another tool of ${anchor.service.name}, the service of ${anchor.tool.name}`, 0.5);
    }
    for (const p of usable.values()) {
      const shared = p.tool.tags.find((t) => anchor.tool.tags.includes(t));
      if (shared) add(p.tool.id, `Shares the tag "${shared}" with ${anchor.tool.name}`, 0.3);
    }
    return out;
  }

  if (caller) {
    const used = await toolsUsedBy(deps.pool, caller.accountId, WINDOW_DAYS);
    if (used.length > 0) {
      const usedIds = used.map((u) => u.toolId);
      for (const id of usedIds) taken.add(id);
      const top = usable.get(usedIds[0] as string);
      for (const t of await usedTogether(deps.pool, usedIds, WINDOW_DAYS, limit * 3)) {
        add(
          t.toolId,
          `Used by ${t.sharedCallers} ${t.sharedCallers === 1 ? "caller" : "callers"} who also use tools you use${top ? `, such as ${top.tool.name}` : ""}`,
          0.6 + Math.min(t.sharedCallers, 40) / 100,
        );
      }
      const usedServices = new Map(
        usedIds
          .map((id) => usable.get(id))
          .filter((p): p is ToolWithService => !!p)
          .map((p) => [p.service.id, p.service.name]),
      );
      for (const p of usable.values()) {
        const name = usedServices.get(p.service.id);
        if (name) add(p.tool.id, `More from ${name}, a service you use`, 0.45);
      }
    }
  }

  const popular = await popularTools(deps.pool, WINDOW_DAYS, limit * 4);
  const most = Math.max(1, ...popular.map((p) => p.successes));
  for (const p of popular) {
    const rate = p.calls > 0 ? Math.round((p.successes / p.calls) * 100) : 0;
    add(
      p.toolId,
      `Popular: ${p.calls} ${p.calls === 1 ? "call" : "calls"} in the last 30 days, ${rate}% successful`,
      0.2 + (0.4 * p.successes) / most,
    );
  }

  // Nobody has called anything yet (or too little): tools that run with no credential and no funding.
  const starters = [...usable.values()]
    .filter((p) => !needsCredential(p.tool) && p.tool.pricePerCallCents === 0n)
    .sort((a, b) => Number(a.service.isDemo) - Number(b.service.isDemo));
  for (const p of starters) add(p.tool.id, "Works without a credential or funding: a good first call", 0.1);
  return out;
}
