/** Internal RPCs other services call: resolve a tool for a call, starter tools, id checks. */
import { notFound } from "@toolport/kit/errors";
import { exampleObject } from "../publishing/json-schema.js";
import { type Caller, canSee } from "./access.js";
import { isSunset } from "./deprecation.js";
import type { CatalogDeps } from "./deps.js";
import type { ToolWithService } from "./model.js";
import { type ToolView, viewTools } from "./views.js";

/**
 * The tool the execution service is about to run, with readiness for the named account. Unknown,
 * invisible and sunset tools are NOT_FOUND (reason tool_not_found): the call is refused with 404.
 */
export async function resolveToolForCall(
  deps: CatalogDeps,
  toolId: string,
  accountId: string,
  organizationId: string,
  principal: Caller | null,
): Promise<ToolView> {
  const pair = await deps.store.findTool(toolId.trim());
  const caller: Caller | null =
    principal ??
    (accountId
      ? {
          accountId,
          organizationId,
          orgRole: null,
          isPlatformAdmin: false,
          allowedServices: null,
          allowedTools: null,
          requireConfirmation: false,
          // Resolving a tool for a call reads; it grants nothing.
          authority: { grants: new Set(), roleGrants: new Set(), role: null },
        }
      : null);
  if (!pair || !canSee(pair.service, caller) || isSunset(pair.tool)) {
    throw notFound("tool_not_found", `tool ${toolId} not found`, { details: { tool_id: toolId } });
  }
  const [view] = await viewTools(deps, [pair], caller, { reliability: false });
  return view as ToolView;
}

export interface StarterTool {
  pair: ToolWithService;
  exampleInput: Record<string, unknown>;
}

/**
 * Up to `limit` credential-free, free, public tools for a new agent's first call, one per service
 * where possible, the most used first within each rank below.
 */
export async function listStarterTools(deps: CatalogDeps, limit: number): Promise<StarterTool[]> {
  const popular = (await deps.store.popularTools(30, 200)).map((p) => p.toolId);
  // Built-in tools run with no network, so they cannot fail a first call for reasons outside our
  // control: real built-ins first, then the sample-data ones, then verified, then other public tools
  // (the order is starterTools', in SQL: only `limit` rows are read).
  const picked = await deps.store.starterTools(popular, limit);
  return picked.map((pair) => ({ pair, exampleInput: pair.tool.example ?? exampleObject(pair.tool.inputSchema) }));
}

/**
 * Public, not retired services whose documentation URL or base URL is on `domain` (its host is the
 * domain or a subdomain of it), by name. An empty or malformed domain finds nothing.
 */
export async function findServicesOnDomain(deps: CatalogDeps, domain: string): Promise<{ id: string; name: string }[]> {
  const d = domain.trim().toLowerCase();
  if (!/^[a-z0-9.-]{1,253}$/.test(d) || d.startsWith(".")) return [];
  return deps.store.servicesOnDomain(d);
}

export async function checkCatalogIds(deps: CatalogDeps, serviceIds: string[], toolIds: string[]) {
  return {
    unknownServiceIds: await deps.store.unknownIds("services", serviceIds),
    unknownToolIds: await deps.store.unknownIds("tools", toolIds),
  };
}
