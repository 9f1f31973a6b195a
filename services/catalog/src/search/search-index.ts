/**
 * Feeds the search engine and guards it. On start the index is loaded from the snapshot the last clean
 * stop wrote and brought up to date with Postgres (index-snapshot.ts), or else rebuilt from Postgres
 * (replaceAll, from a lean read: see store/search-sources.ts); then it follows the catalog through
 * toolport.catalog.tool.changed events; each change re-reads the tool from Postgres, so applying one
 * twice or late still ends in the current state. Until the index is first ready, and whenever the
 * engine fails, search answers UNAVAILABLE (503, Retry-After: 1).
 */
import { unavailable } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import { searchSeconds } from "@toolport/kit/metrics";
import { isSunset } from "../domain/deprecation.js";
import type { ToolRecord } from "../domain/model.js";
import { findTool, listToolsWithService } from "../store/catalog-store.js";
import type { Queryable } from "../store/rows.js";
import {
  type ServiceSearchFields,
  serviceSearchFields,
  type ToolSearchFields,
  toolSearchFieldsPage,
  toolVersionFields,
} from "../store/search-sources.js";
import { readSnapshot, serviceVersion, toolVersion, writeSnapshot } from "./index-snapshot.js";
import { ToolCache } from "./tool-cache.js";
import type { SearchDocument, SearchEngine, SearchHit, SearchOptions } from "./types.js";

/** Tools read per page by the rebuild: large enough that round trips do not count, small enough to stay a few MB. */
const REBUILD_PAGE_SIZE = 5000;

/** A tool's search document; whole records (ToolWithService) fit too. */
export function documentFor({
  tool,
  service,
}: {
  tool: Omit<ToolSearchFields, "serviceId">;
  service: ServiceSearchFields;
}): SearchDocument {
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
    // A parameter without a description has none (the engine would index the word "undefined").
    parameters: Object.entries(tool.parameters).map(([key, p]) => ({ name: key, description: p.description ?? "" })),
    isDemo: service.isDemo,
    active: tool.status === "active" && service.status !== "retired" && !isSunset(tool),
    visibility: service.visibility,
    organizationId: service.organizationId,
  };
}

/** Tools brought up to date per read when a snapshot is caught up with Postgres. */
const CATCH_UP_BATCH = 1000;

export class SearchIndex {
  private ready = false;
  private current: SearchEngine | undefined;
  /** Tool id -> the version of its indexed document (index-snapshot.ts), kept for the snapshot. */
  private versions = new Map<string, string>();
  /** Search candidates' records, invalidated with every change this index applies. */
  readonly tools = new ToolCache();

  /** `snapshotFile`: where the index is kept between runs (CATALOG_INDEX_SNAPSHOT); none, always rebuild. */
  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly snapshotFile?: string,
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

  /**
   * Replaces the engine's content with every tool in Postgres. Returns how many were indexed. Reads
   * only what the documents are made of, a page of tools at a time and each service once, so the
   * memory it takes beyond the documents (which the engine keeps anyway) is two pages. The next page
   * is asked for before the engine takes this one, so Postgres reads while the engine analyses (at
   * 100,000 tools each takes about half of the rebuild). Pages are not one snapshot: a change
   * committed during the rebuild may be missed or half-seen here, but its event is applied after the
   * rebuild (index-consumer.ts holds events until then), which re-reads the tool.
   */
  async rebuild(): Promise<number> {
    const started = performance.now();
    const counts = { tools: 0, services: 0, waitedMs: 0 };
    const versions = new Map<string, string>();
    await this.engine.replaceAll(this.documents(counts, versions));
    this.versions = versions;
    this.tools.clear();
    this.ready = true;
    this.log.info(
      {
        engine: this.engine.name,
        tools: counts.tools,
        services: counts.services,
        read_wait_ms: Math.round(counts.waitedMs),
        ms: Math.round(performance.now() - started),
      },
      "search index rebuilt",
    );
    return counts.tools;
  }

  /** Every tool's search document, a page at a time, the next page read while this one is used. */
  private async *documents(
    counts: { tools: number; services: number; waitedMs: number },
    versions: Map<string, string>,
  ): AsyncGenerator<SearchDocument[]> {
    const wait = async <T>(promise: Promise<T>): Promise<T> => {
      const from = performance.now();
      try {
        return await promise;
      } finally {
        counts.waitedMs += performance.now() - from;
      }
    };
    const services = await wait(serviceSearchFields(this.db));
    let next: Promise<ToolSearchFields[]> | undefined = toolSearchFieldsPage(this.db, null, REBUILD_PAGE_SIZE);
    try {
      while (next) {
        const page: ToolSearchFields[] = await wait(next);
        next =
          page.length < REBUILD_PAGE_SIZE
            ? undefined
            : toolSearchFieldsPage(this.db, (page.at(-1) as ToolSearchFields).id, REBUILD_PAGE_SIZE);
        // A service created after the services were read, with tools in this page.
        const unknown = [...new Set(page.filter((t) => !services.has(t.serviceId)).map((t) => t.serviceId))];
        if (unknown.length > 0) for (const [id, s] of await wait(serviceSearchFields(this.db, unknown))) services.set(id, s);
        const docs: SearchDocument[] = [];
        const pairs: { tool: ToolSearchFields; service: ServiceSearchFields }[] = [];
        for (const tool of page) {
          const service = services.get(tool.serviceId);
          if (!service) continue; // deleted meanwhile, with its tools
          docs.push(documentFor({ tool, service }));
          pairs.push({ tool, service });
        }
        this.noteVersions(pairs, versions);
        counts.tools += docs.length;
        yield docs;
      }
    } finally {
      // Stopped early (the engine failed): the page asked for ahead is not awaited, so its error is dropped here.
      next?.catch(() => {});
      counts.services = services.size;
    }
  }

  /** Brings one tool's entry up to date with Postgres (upsert, or remove when it is gone). */
  async refresh(toolIds: string[]): Promise<void> {
    if (toolIds.length === 0) return;
    this.tools.invalidate(toolIds);
    // Without the schemas (documentFor reads none): a publish refreshes hundreds of tools at once.
    const pairs = await listToolsWithService(this.db, { toolIds, includeUnavailable: true, light: true });
    const found = new Set(pairs.map((p) => p.tool.id));
    const gone = toolIds.filter((id) => !found.has(id));
    if (pairs.length > 0) {
      await this.engine.upsert(pairs.map(documentFor));
      this.noteVersions(pairs);
    }
    if (gone.length > 0) await this.remove(gone);
  }

  async refreshOne(toolId: string): Promise<void> {
    this.tools.invalidate([toolId]);
    const pair = await findTool(this.db, toolId);
    if (pair) {
      await this.engine.upsert([documentFor(pair)]);
      this.noteVersions([pair]);
    } else await this.remove([toolId]);
  }

  async remove(toolIds: string[]): Promise<void> {
    this.tools.invalidate(toolIds);
    if (toolIds.length > 0) await this.engine.remove(toolIds);
    for (const id of toolIds) this.versions.delete(id);
  }

  /** Records what these documents were made from (only where a snapshot will be written). */
  private noteVersions(
    pairs: { tool: Pick<ToolRecord, "id" | "revision" | "sunsetDate">; service: ServiceSearchFields }[],
    into = this.versions,
  ): void {
    if (!this.snapshotFile) return;
    const services = new Map<string, string>();
    for (const { tool, service } of pairs) {
      let version = services.get(service.id);
      if (version === undefined) {
        version = serviceVersion(service);
        services.set(service.id, version);
      }
      into.set(tool.id, toolVersion(tool.revision, isSunset(tool), version));
    }
  }

  /**
   * Loads the snapshot the last clean stop wrote (index-snapshot.ts) and brings it up to date with
   * Postgres: tools whose version differs are re-read, tools no longer there removed. Returns false,
   * never throwing, when there is none to use or it is too far behind (more than a quarter of the
   * tools changed, where a rebuild is as quick); the caller then rebuilds.
   */
  async restoreSnapshot(): Promise<boolean> {
    const engine = this.engine;
    const file = this.snapshotFile;
    if (!file || !engine.snapshotKey || !engine.restore) return false;
    const started = performance.now();
    try {
      const loaded = await readSnapshot(file, engine.snapshotKey());
      if ("unusable" in loaded) {
        this.log.info({ file, reason: loaded.unusable }, "search index snapshot not used; rebuilding the index");
        return false;
      }
      const readMs = performance.now() - started;
      const [tools, services] = await Promise.all([toolVersionFields(this.db), serviceSearchFields(this.db)]);
      const serviceVersions = new Map([...services].map(([id, service]) => [id, serviceVersion(service)]));
      const now = new Date();
      const stale: string[] = [];
      const present = new Set<string>();
      for (const t of tools) {
        present.add(t.id);
        const service = serviceVersions.get(t.serviceId);
        if (service === undefined || loaded.versions.get(t.id) !== toolVersion(t.revision, isSunset(t, now), service)) {
          stale.push(t.id);
        }
      }
      const gone = [...loaded.versions.keys()].filter((id) => !present.has(id));
      if (stale.length + gone.length > Math.max(CATCH_UP_BATCH, tools.length / 4)) {
        this.log.info(
          { file, tools: tools.length, changed: stale.length, removed: gone.length },
          "search index snapshot too far behind; rebuilding the index",
        );
        return false;
      }
      engine.restore(loaded.engine);
      this.versions = loaded.versions;
      this.tools.clear();
      await this.remove(gone);
      for (let i = 0; i < stale.length; i += CATCH_UP_BATCH) await this.refresh(stale.slice(i, i + CATCH_UP_BATCH));
      if (stale.length + gone.length > 0) engine.settle?.();
      this.ready = true;
      this.log.info(
        {
          file,
          tools: tools.length,
          changed: stale.length,
          removed: gone.length,
          written_at: loaded.writtenAt.toISOString(),
          read_ms: Math.round(readMs),
          ms: Math.round(performance.now() - started),
        },
        "search index loaded from its snapshot",
      );
      return true;
    } catch (err) {
      // The engine may hold part of it: the rebuild that follows replaces all of it.
      this.log.warn({ err, file }, "search index snapshot could not be loaded; rebuilding the index");
      return false;
    }
  }

  /**
   * Writes the snapshot the next start loads (on a clean stop, after the index stopped following
   * changes). Not while the index is not ready: that would persist a partial one.
   */
  async saveSnapshot(): Promise<void> {
    const engine = this.current;
    const file = this.snapshotFile;
    if (!file || !engine?.snapshot || !engine.snapshotKey || !this.ready) return;
    const started = performance.now();
    try {
      const bytes = await writeSnapshot(file, engine.snapshotKey(), engine.snapshot(), this.versions);
      this.log.info(
        { file, tools: this.versions.size, mb: Math.round(bytes / 2 ** 20), ms: Math.round(performance.now() - started) },
        "search index snapshot written",
      );
    } catch (err) {
      this.log.warn({ err, file }, "could not write the search index snapshot; the next start rebuilds the index");
    }
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
