/**
 * The read side: lists, lookups, search and describe, each for one caller. Every path drops what the
 * caller may not see and tools past their sunset date, then computes readiness and reliability.
 */
import { invalidArgument, notFound } from "@toolport/kit/errors";
import { exampleObject } from "../publishing/json-schema.js";
import { type Caller, canSee, isPublic } from "./access.js";
import { isSunset } from "./deprecation.js";
import type { CatalogDeps } from "./deps.js";
import type { ToolWithService } from "./model.js";
import type { Page } from "./ports.js";
import { rankResults } from "./ranking.js";
import { passesMinSuccessRate } from "./reliability.js";
import { type ToolView, viewTools } from "./views.js";

/** Public search: default and maximum number of matches (spec "Limits"). */
export const PUBLIC_SEARCH_DEFAULT_LIMIT = 20;
export const PUBLIC_SEARCH_MAX = 30;
/**
 * Authenticated search (GET /tools/search, with or without a query): default and most matches. Tools
 * carry their schemas (about 7 KB each for real APIs), so the default answer stays near 150 KB.
 */
export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX = 50;

const listable = (p: ToolWithService, now: Date) =>
  p.tool.status === "active" && p.service.status !== "retired" && !isSunset(p.tool, now);

const toolNotFound = (id: string) => notFound("tool_not_found", `tool ${id} not found`, { details: { tool_id: id } });
const serviceNotFound = (id: string) => notFound("service_not_found", `service ${id} not found`, { details: { service_id: id } });

/**
 * The list routes' page size (GET /tools, /services/public, /services/public/{id}/tools): default and
 * most. A page of 20 real API tools is about 150 KB (100 were 800 KB, and took 80 ms end to end at
 * 100,000 tools: test/bench/catalog-scale.ts).
 */
export const LIST_DEFAULT_LIMIT = 20;
export const LIST_MAX_LIMIT = 500;

export interface PageInput {
  limit?: number;
  cursor?: string;
}

/** The page size asked for: absent = the default, above the most = the most, below 1 = a 400. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return LIST_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw invalidArgument("invalid_limit", `limit must be an integer from 1 to ${LIST_MAX_LIMIT}`, {
      details: { field: "limit" },
    });
  }
  return Math.min(limit, LIST_MAX_LIMIT);
}

/**
 * GET /tools: the active, not-sunset tools the caller may see (of one service, with `serviceId`), a page
 * at a time: real services before sample-data ones, tools the caller can call now first, then by service
 * and tool name.
 */
export async function listTools(
  deps: CatalogDeps,
  caller: Caller | null,
  input: PageInput & { serviceId?: string } = {},
): Promise<Page<ToolView>> {
  const limit = pageLimit(input.limit);
  const serviceId = input.serviceId ? await resolveServiceId(deps, input.serviceId.trim()) : undefined;
  if (input.serviceId && !serviceId) return { items: [] };
  const page = await deps.store.listToolPage(caller, { serviceId }, { limit, cursor: input.cursor || undefined });
  return { items: await viewTools(ctx(deps), page.items, caller), next: page.next };
}

/** GET /tools/{id}: by id or slug; unknown, invisible and sunset tools are 404. */
export async function getTool(deps: CatalogDeps, idOrSlug: string, caller: Caller | null): Promise<ToolView> {
  const pair = await deps.store.findTool(idOrSlug.trim());
  if (!pair || !canSee(pair.service, caller) || isSunset(pair.tool)) throw toolNotFound(idOrSlug);
  const [view] = await viewTools(ctx(deps), [pair], caller);
  return view as ToolView;
}

/**
 * GET /tools/name/{name}: names are not unique across services, so the match is chosen: case-
 * insensitive equality, visible and not sunset; an active tool of a real service before a demo one,
 * then the oldest.
 */
export async function getToolByName(deps: CatalogDeps, name: string, caller: Caller | null): Promise<ToolView> {
  const pair = await deps.store.toolNamed(caller, name);
  if (!pair) throw notFound("tool_not_found", `no tool named ${name}`, { details: { tool_name: name } });
  const [view] = await viewTools(ctx(deps), [pair], caller);
  return view as ToolView;
}

export interface SearchInput {
  query: string;
  serviceId?: string;
  tags?: string[];
  readyOnly: boolean;
  limit?: number;
  minSuccessRate?: number;
}

/**
 * GET /tools/search (authenticated; query optional: blank lists every match of the filters) and
 * GET /tools/public/search (public services only; blank query -> []; limit default 20, at most 30;
 * ready_only and min_success_rate applied before the limit).
 */
export async function searchTools(
  deps: CatalogDeps,
  input: SearchInput,
  caller: Caller | null,
  surface: "public" | "authenticated",
): Promise<ToolView[]> {
  const query = input.query.trim();
  if (input.limit !== undefined && (!Number.isInteger(input.limit) || input.limit < 0)) {
    throw invalidArgument("invalid_limit", "limit must be a non-negative integer", { details: { field: "limit" } });
  }
  if (input.minSuccessRate !== undefined && !(input.minSuccessRate >= 0 && input.minSuccessRate <= 1)) {
    throw invalidArgument("invalid_min_success_rate", "min_success_rate must be a number from 0 to 1", {
      details: { field: "min_success_rate" },
    });
  }
  const limit =
    surface === "public"
      ? Math.min(input.limit ?? PUBLIC_SEARCH_DEFAULT_LIMIT, PUBLIC_SEARCH_MAX)
      : Math.min(input.limit ?? SEARCH_DEFAULT_LIMIT, SEARCH_MAX);
  if (surface === "public" && query === "") return [];
  if (limit === 0) return [];

  const now = new Date();
  const visible = (p: ToolWithService) =>
    listable(p, now) &&
    (surface === "public" ? isPublic(p.service) : canSee(p.service, caller)) &&
    (!input.serviceId || p.service.id === input.serviceId || p.service.slug === input.serviceId) &&
    (!input.tags?.length || input.tags.every((t) => p.tool.tags.includes(t)));
  const keep = (v: ToolView) =>
    (!input.readyOnly || v.readiness === "ready") && passesMinSuccessRate(v.reliability, input.minSuccessRate);

  const serviceId = input.serviceId ? await resolveServiceId(deps, input.serviceId) : undefined;
  if (input.serviceId && !serviceId) return [];
  if (query === "") return blankSearch(deps, { ...input, serviceId }, caller, limit, keep);

  // The engine ranks by relevance over every indexed tool; what this caller may see is decided here,
  // so ask for more than needed and widen while filtering leaves too few.
  let want = Math.max(limit * 2, 20);
  let views: ToolView[] = [];
  const exact = await deps.store.exactMatchIds(caller, surface === "public", query, limit);
  for (let round = 0; round < 3; round++) {
    const hits = await deps.index.search(query, {
      limit: want,
      serviceId,
      tags: input.tags?.length ? input.tags : undefined,
      visibleTo:
        surface === "public" || caller === null
          ? { organizationId: null }
          : { organizationId: caller.organizationId, all: caller.isPlatformAdmin },
    });
    const ids = [...new Set([...exact, ...hits.map((h) => h.id)])];
    const byId = await deps.index.tools.get(ids, (missing) => deps.store.listToolsWithService({ toolIds: missing, light: true }));
    const pairs = ids.map((id) => byId.get(id)).filter((p): p is ToolWithService => p !== undefined && visible(p));
    views = (await viewTools(ctx(deps), pairs, caller)).filter(keep);
    if (views.length >= limit || hits.length < want) break;
    want *= 4;
  }
  const page = rankResults(query, views, caller !== null).slice(0, limit);
  if (surface === "public") return page;
  // The full Tool shape carries the declared output and the parameters' schemas: read the page's rows as a page.
  const full = new Map((await deps.store.pageToolsByIds(page.map((v) => v.tool.id))).map((p) => [p.tool.id, p.tool]));
  return page.map((v) => ({ ...v, tool: full.get(v.tool.id) ?? v.tool }));
}

/**
 * A search without words (authenticated surface): the first `limit` tools of the list order that the
 * filters keep, filtered in SQL (service, tags, readiness); the reliability filter reads further pages,
 * at most a few, when it drops tools.
 */
async function blankSearch(
  deps: CatalogDeps,
  input: SearchInput,
  caller: Caller | null,
  limit: number,
  keep: (v: ToolView) => boolean,
): Promise<ToolView[]> {
  const out: ToolView[] = [];
  let cursor: string | undefined;
  for (let round = 0; round < 4 && out.length < limit; round++) {
    const page = await deps.store.listToolPage(
      caller,
      { serviceId: input.serviceId, tags: input.tags, readyOnly: input.readyOnly },
      { limit, cursor },
    );
    out.push(...(await viewTools(ctx(deps), page.items, caller)).filter(keep));
    if (!page.next) break;
    cursor = page.next;
  }
  return out.slice(0, limit);
}

async function resolveServiceId(deps: CatalogDeps, idOrSlug: string): Promise<string | undefined> {
  return (await deps.store.findService(idOrSlug))?.id;
}

export interface Described {
  view: ToolView;
  exampleInput: Record<string, unknown>;
  requiresConfirmation: boolean;
  /** The OAuth client the publisher registered, when there is one: which scheme it connects, and how. */
  oauthConnect: { schemeName: string; flow: string } | null;
}

/** GET /tools/{id}/describe. */
export async function describeTool(deps: CatalogDeps, idOrSlug: string, caller: Caller | null): Promise<Described> {
  const view = await getTool(deps, idOrSlug, caller);
  const writes = view.tool.sideEffecting || (view.tool.method !== "" && !["GET", "HEAD"].includes(view.tool.method));
  const client = view.tool.security.length > 0 ? await deps.store.findOAuthClient(view.service.id) : null;
  return {
    view,
    exampleInput: view.tool.example ?? exampleObject(view.tool.inputSchema),
    requiresConfirmation: Boolean(caller?.requireConfirmation) && writes,
    oauthConnect: client ? { schemeName: client.schemeName, flow: client.flow } : null,
  };
}

/** GET /services/public/{id}/tools: listable tools of a public service by name, a page at a time. */
export async function listPublicServiceTools(
  deps: CatalogDeps,
  idOrSlug: string,
  caller: Caller | null,
  input: PageInput = {},
): Promise<Page<ToolView>> {
  const service = await deps.store.findService(idOrSlug.trim());
  if (!service || !isPublic(service)) throw serviceNotFound(idOrSlug);
  const page = await deps.store.serviceToolPage(service.id, {
    limit: pageLimit(input.limit),
    cursor: input.cursor || undefined,
  });
  return { items: await viewTools(ctx(deps), page.items, caller), next: page.next };
}

function ctx(deps: CatalogDeps) {
  return { store: deps.store, publicUrl: deps.publicUrl };
}
