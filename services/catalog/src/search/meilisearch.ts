/**
 * The Meilisearch engine, used when MEILI_URL is set. Index settings (searchable and filterable
 * attributes, ranking rules, stop words, synonyms, the optional embedder) are set by code when the
 * engine starts, so a fresh Meilisearch needs no manual setup. Every write waits for its task, so a
 * change is visible to the next search, as the contract requires.
 *
 * Meilisearch reads only the first ten words of a query, and catalog queries are often long requests
 * for several things. Queries are therefore cleaned the way the embedded engine cleans them (stop
 * words, request phrasing, repeats) and, when still longer than ten words, split into sentence-sized
 * chunks sent in one multi-search; a tool's score is the sum of its ranking scores over the chunks.
 */
import { createHash } from "node:crypto";
import { type Filter, Meilisearch, type Settings, type Task } from "meilisearch";
import { type Embedder, embeddingText } from "./embedding.js";
import { synonymGroups } from "./synonyms.js";
import { requestWords, stopWords, words } from "./text.js";
import type { Logger, SearchDocument, SearchEngine, SearchHit, SearchOptions } from "./types.js";

/** Meilisearch's limit on the words of one query. */
const QUERY_WORDS = 10;
const EMBEDDER = "default";

interface MeiliTool {
  /** Primary key: the tool id when Meilisearch accepts it as one, else a hash of it. */
  key: string;
  id: string;
  name: string;
  slug: string;
  description: string;
  serviceId: string;
  serviceName: string;
  serviceSlug: string;
  serviceDescription: string;
  tags: string[];
  parameters: string[];
  isDemo: boolean;
  active: boolean;
  visibility: string;
  organizationId: string | null;
  _vectors?: Record<string, number[] | null>;
}

export interface MeilisearchEngineOptions {
  url: string;
  key?: string;
  /** Index uid (tests use one of their own). */
  indexUid?: string;
  embedder?: Embedder;
  /** Share of the semantic ranking in hybrid search. */
  semanticRatio?: number;
  /** Deadline of each wait for a Meilisearch task. */
  taskTimeoutMs?: number;
}

export class MeilisearchEngine implements SearchEngine {
  readonly name = "meilisearch" as const;
  private readonly client: Meilisearch;
  private readonly uid: string;
  private readonly taskTimeoutMs: number;
  private ready: Promise<void> | undefined;
  private dimensions: number | undefined;

  constructor(
    private readonly options: MeilisearchEngineOptions,
    private readonly log: Logger,
  ) {
    this.client = new Meilisearch({ host: options.url, apiKey: options.key, timeout: 10_000 });
    this.uid = options.indexUid ?? "tools";
    this.taskTimeoutMs = options.taskTimeoutMs ?? 60_000;
  }

  async healthy(): Promise<boolean> {
    return this.client.isHealthy();
  }

  async upsert(docs: SearchDocument[]): Promise<void> {
    if (docs.length === 0) return;
    await this.ensureIndex();
    await this.wait(this.client.index(this.uid).addDocuments(await this.toMeili(docs), { primaryKey: "key" }));
  }

  async remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.ensureIndex();
    await this.wait(this.client.index(this.uid).deleteDocuments(ids.map(documentKey)));
  }

  /** Builds a fresh index beside the live one and swaps them, so searches never see a half-built index. */
  async replaceAll(docs: SearchDocument[] | AsyncIterable<SearchDocument[]>): Promise<void> {
    await this.ensureIndex();
    const next = `${this.uid}_rebuild`;
    await this.client.deleteIndexIfExists(next);
    await this.setUpIndex(next);
    for await (const batch of Array.isArray(docs) ? [docs] : docs) {
      if (batch.length === 0) continue;
      await this.wait(this.client.index(next).addDocuments(await this.toMeili(batch), { primaryKey: "key" }));
    }
    await this.wait(this.client.swapIndexes([{ indexes: [this.uid, next], rename: false }]));
    await this.wait(this.client.deleteIndex(next));
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const cleaned = cleanQuery(query);
    if (cleaned.length === 0 || options.limit <= 0) return [];
    if (options.candidateIds && options.candidateIds.length === 0) return [];
    await this.ensureIndex();
    const filter = filterOf(options);
    const perChunk = Math.max(options.limit * 3, 30);
    const queries = chunks(cleaned).map((words) => ({
      indexUid: this.uid,
      q: words.join(" "),
      filter,
      limit: perChunk,
      attributesToRetrieve: ["id"],
      showRankingScore: true,
      matchingStrategy: "frequency" as const,
    }));
    const vector = await this.queryVector(query);
    const ratio = this.options.semanticRatio ?? 0.3;
    if (vector) {
      queries.push({
        ...queries[0],
        q: "",
        vector: Array.from(vector),
        hybrid: { embedder: EMBEDDER, semanticRatio: 1 },
      } as unknown as (typeof queries)[number]);
    }
    const { results } = await this.client.multiSearch<{ queries: typeof queries }, { id: string }>({ queries });
    const scores = new Map<string, number>();
    results.forEach((result, i) => {
      const weight = vector && i === results.length - 1 ? ratio * (results.length - 1) : 1;
      for (const hit of result.hits) {
        const score = (hit._rankingScore ?? 0) * weight;
        if (score > 0) scores.set(hit.id, (scores.get(hit.id) ?? 0) + score);
      }
    });
    return [...scores]
      .map(([id, score]) => ({ id, score }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, options.limit);
  }

  /** Creates the index and applies the settings once per process; a failure is retried on the next call. */
  private ensureIndex(): Promise<void> {
    if (!this.ready) {
      this.ready = this.setUpIndex(this.uid).catch((err) => {
        this.ready = undefined;
        throw err;
      });
    }
    return this.ready;
  }

  private async setUpIndex(uid: string): Promise<void> {
    const created = await this.client
      .createIndex(uid, { primaryKey: "key" })
      .waitTask({ timeout: this.taskTimeoutMs, interval: 10 });
    if (created.status === "failed" && created.error?.code !== "index_already_exists") {
      throw new Error(`creating Meilisearch index ${uid} failed: ${created.error?.message}`);
    }
    await this.wait(this.client.index(uid).updateSettings(await this.settings()));
    this.log.debug({ index: uid }, "meilisearch index ready");
  }

  private async settings(): Promise<Settings> {
    const settings: Settings = {
      // Order matters: a match in an earlier attribute ranks higher (the "attribute" rule).
      searchableAttributes: ["name", "slug", "tags", "serviceName", "description", "parameters", "serviceDescription"],
      filterableAttributes: ["id", "serviceId", "tags", "visibility", "organizationId"],
      displayedAttributes: ["id", "name", "serviceId", "tags"],
      // Matched words first, then typos, then where they matched (a name beats a parameter), then closeness.
      rankingRules: ["words", "typo", "attribute", "proximity", "exactness"],
      stopWords: [...stopWords],
      synonyms: synonymSettings(),
    };
    const dimensions = await this.embeddingDimensions();
    if (dimensions) settings.embedders = { [EMBEDDER]: { source: "userProvided", dimensions } };
    return settings;
  }

  /** Dimensions of the configured embedder's vectors (probed once), or undefined without one. */
  private async embeddingDimensions(): Promise<number | undefined> {
    if (!this.options.embedder) return undefined;
    if (this.dimensions === undefined) {
      const [probe] = await this.options.embedder.embed(["probe"]);
      this.dimensions = probe?.length;
    }
    return this.dimensions;
  }

  private async toMeili(docs: SearchDocument[]): Promise<MeiliTool[]> {
    let vectors: (Float32Array | undefined)[] | undefined;
    if (this.options.embedder) {
      try {
        vectors = await this.options.embedder.embed(docs.map(embeddingText));
      } catch (err) {
        this.log.warn({ err, count: docs.length }, "embedding tools failed; indexed without vectors");
      }
    }
    return docs.map((doc, i) => {
      const tool: MeiliTool = {
        key: documentKey(doc.id),
        id: doc.id,
        name: doc.name,
        slug: doc.slug ?? "",
        description: doc.description,
        serviceId: doc.serviceId,
        serviceName: doc.serviceName,
        serviceSlug: doc.serviceSlug,
        serviceDescription: doc.serviceDescription,
        tags: doc.tags,
        parameters: doc.parameters.map((p) => `${p.name} ${p.description}`.trim()),
        isDemo: doc.isDemo,
        active: doc.active,
        visibility: doc.visibility,
        organizationId: doc.organizationId,
      };
      if (this.options.embedder) {
        const vector = vectors?.[i];
        tool._vectors = { [EMBEDDER]: vector ? Array.from(vector) : null };
      }
      return tool;
    });
  }

  private async queryVector(query: string): Promise<Float32Array | undefined> {
    if (!this.options.embedder) return undefined;
    try {
      return (await this.options.embedder.embed([query]))[0];
    } catch (err) {
      this.log.warn({ err }, "embedding the query failed; keyword ranking only");
      return undefined;
    }
  }

  /** Waits for a task and turns a failed one into an error naming Meilisearch's reason. */
  private async wait(enqueued: { waitTask(options?: { timeout?: number; interval?: number }): Promise<Task> }): Promise<void> {
    // Poll often: the catalog waits for the write before it answers.
    const task = await enqueued.waitTask({ timeout: this.taskTimeoutMs, interval: 10 });
    if (task.status !== "succeeded") {
      throw new Error(`Meilisearch task ${task.type} ${task.status}: ${task.error?.message ?? "no reason given"}`);
    }
  }
}

/** Meilisearch ids allow letters, digits, `-` and `_` (up to 511 bytes); anything else is hashed. */
function documentKey(id: string): string {
  return /^[A-Za-z0-9_-]{1,500}$/.test(id) ? id : `h_${createHash("sha256").update(id).digest("hex")}`;
}

function filterOf(options: SearchOptions): Filter | undefined {
  const parts: string[] = [];
  if (options.serviceId !== undefined) parts.push(`serviceId = ${JSON.stringify(options.serviceId)}`);
  for (const tag of options.tags ?? []) if (tag.length > 0) parts.push(`tags = ${JSON.stringify(tag)}`);
  if (options.candidateIds) parts.push(`id IN [${options.candidateIds.map((id) => JSON.stringify(id)).join(", ")}]`);
  const who = options.visibleTo;
  if (who && !who.all) {
    parts.push(
      who.organizationId === null
        ? 'visibility = "public"'
        : `(visibility IN ["public", "internal"] OR organizationId = ${JSON.stringify(who.organizationId)})`,
    );
  }
  return parts.length > 0 ? parts.join(" AND ") : undefined;
}

/** The query's words without stop words, request phrasing or repeats, split into sentences. */
function cleanQuery(query: string): string[][] {
  return query
    .split(/[.!?;\n]+/)
    .map((sentence) => {
      const seen = new Set<string>();
      return words(sentence).filter((w) => {
        if (stopWords.has(w) || requestWords.has(w) || seen.has(w)) return false;
        seen.add(w);
        return true;
      });
    })
    .filter((sentence) => sentence.length > 0);
}

/** Sentences packed into chunks of at most QUERY_WORDS words (a longer sentence is cut). */
function chunks(sentences: string[][]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  for (const sentence of sentences) {
    for (let i = 0; i < sentence.length; i += QUERY_WORDS) {
      const piece = sentence.slice(i, i + QUERY_WORDS);
      if (current.length + piece.length > QUERY_WORDS) {
        out.push(current);
        current = [];
      }
      current.push(...piece);
    }
  }
  if (current.length > 0) out.push(current);
  return out.filter((c) => c.length > 0);
}

/** The synonym table in Meilisearch's shape: every member of a group points to the others. */
function synonymSettings(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const group of synonymGroups) {
    for (const member of group) {
      const others = group.filter((m) => m !== member);
      out[member] = [...new Set([...(out[member] ?? []), ...others])];
    }
  }
  return out;
}
