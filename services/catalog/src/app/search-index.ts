/**
 * Feeds the search engine and guards it. The index is rebuilt from Postgres on start (replaceAll),
 * then follows the catalog through toolport.catalog.tool.changed events; each change re-reads the
 * tool from Postgres, so applying one twice or late still ends in the current state. Until the first
 * rebuild completes, and whenever the engine fails, search answers UNAVAILABLE (503, Retry-After: 1).
 */
import { unavailable } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import { searchSeconds } from "@toolport/kit/metrics";
import { isSunset } from "../domain/deprecation.js";
import type { ToolWithService } from "../domain/model.js";
import type { SearchDocument, SearchEngine, SearchHit, SearchOptions } from "../search/types.js";
import { findTool, listToolsWithService } from "../store/catalog-store.js";
import type { Queryable } from "../store/rows.js";
import { ToolCache } from "./tool-cache.js";

export function documentFor({ tool, service }: ToolWithService): SearchDocument {
  return {
    id: tool.id,
    slug: tool.slug,
    name: tool.name,
    description: tool.description,
    serviceId: service.id,
    serviceName: service.name,
    serviceSlug: service.slug,
    serviceDescription: [service.summary, service.description].filter(Boolean).join("\n\n"),
    tags: tool.tags,
    parameters: Object.entries(tool.parameters).map(([key, p]) => ({ name: key, description: p.description })),
    isDemo: service.isDemo,
    active: tool.status === "active" && service.status !== "retired" && !isSunset(tool),
    visibility: service.visibility,
    organizationId: service.organizationId,
  };
}

export class SearchIndex {
  private ready = false;
  private current: SearchEngine | undefined;
  /** Search candidates' records, invalidated with every change this index applies. */
  readonly tools = new ToolCache();

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
  ) {}

  /** Set once at start-up, before the first rebuild. */
  attach(engine: SearchEngine): void {
    this.current = engine;
  }

  get engine(): SearchEngine {
    if (!this.current) throw unavailable("search_unavailable", "search is starting; try again in a moment");
    return this.current;
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** The index may have missed a change: search answers 503 until the next rebuild completes. */
  markStale(): void {
    this.ready = false;
  }

  /** Replaces the engine's content with every tool in Postgres. Returns how many were indexed. */
  async rebuild(): Promise<number> {
    const started = performance.now();
    const pairs = await listToolsWithService(this.db, { includeUnavailable: true });
    this.tools.clear();
    await this.engine.replaceAll(pairs.map(documentFor));
    this.ready = true;
    this.log.info(
      { engine: this.engine.name, tools: pairs.length, ms: Math.round(performance.now() - started) },
      "search index rebuilt",
    );
    return pairs.length;
  }

  /** Brings one tool's entry up to date with Postgres (upsert, or remove when it is gone). */
  async refresh(toolIds: string[]): Promise<void> {
    if (toolIds.length === 0) return;
    this.tools.invalidate(toolIds);
    // Without the schemas (documentFor reads none): a publish refreshes hundreds of tools at once.
    const pairs = await listToolsWithService(this.db, { toolIds, includeUnavailable: true, light: true });
    const found = new Set(pairs.map((p) => p.tool.id));
    const gone = toolIds.filter((id) => !found.has(id));
    if (pairs.length > 0) await this.engine.upsert(pairs.map(documentFor));
    if (gone.length > 0) await this.engine.remove(gone);
  }

  async refreshOne(toolId: string): Promise<void> {
    this.tools.invalidate([toolId]);
    const pair = await findTool(this.db, toolId);
    if (pair) await this.engine.upsert([documentFor(pair)]);
    else await this.engine.remove([toolId]);
  }

  async remove(toolIds: string[]): Promise<void> {
    this.tools.invalidate(toolIds);
    if (toolIds.length > 0) await this.engine.remove(toolIds);
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    if (!this.ready) throw unavailable("search_unavailable", "search is starting; try again in a moment");
    const started = performance.now();
    try {
      const hits = await this.engine.search(query, options);
      searchSeconds.observe({ engine: this.engine.name }, (performance.now() - started) / 1000);
      return hits;
    } catch (err) {
      this.log.error({ err, engine: this.engine.name }, "search engine failed");
      throw unavailable("search_unavailable", "search could not run; try again in a moment", { cause: err });
    }
  }
}
