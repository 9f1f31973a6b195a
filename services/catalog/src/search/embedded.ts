/**
 * The embedded search engine: in-process, no server, the default.
 *
 * Ranking is fielded BM25 (BM25F, Robertson & Zaragoza 2009) over each tool's name, description,
 * parameters, tags and service name, plus service-level evidence: every service is also scored as one
 * document made of its name, description and all its tools' names and descriptions, because endpoints
 * of one API share vocabulary and a query about an API's job often names words only its sibling
 * endpoints use. A tool's score is its own BM25F score plus a share of its service's, each normalised
 * by the best of the query. Adjacent word pairs of names, descriptions and service names are terms
 * too, so a query that repeats a phrase ("prayer times", "terrain tiles") prefers the tools that say
 * it over those that merely hold both words (a sequential-dependence model in its simplest form,
 * Metzler & Croft 2005). Queries lose stop words and request phrasing ("could you please provide"),
 * are stemmed like the text, and gain related terms from a small synonym table at a reduced weight.
 * Long queries that ask for several things are also scored sentence by sentence, so a tool that
 * answers one part well is not drowned by tools that touch every part weakly.
 *
 * Hand-written rather than a library: the JavaScript full-text libraries (MiniSearch, Lunr, FlexSearch,
 * Orama) rank by per-field boosts or plain BM25 and cannot add the service-level score or the
 * per-sentence scoring above, which is where most of the measured gain over plain BM25 comes from
 * (test/bench/search-retrieval.ts prints the figures). The postings are typed arrays (postings.ts)
 * and the engine keeps no tool text, only ids, service and tags: 100,000 tools fit in a few hundred
 * megabytes (test/bench/search-latency.ts prints the figures).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Embedder, embeddingText } from "./embedding.js";
import { FieldPostings, type FieldPostingsState, PairTable, type PairTableState } from "./postings.js";
import { relatedTermSources } from "./synonyms.js";
import { queryTerms, terms, withoutValues } from "./text.js";
import { type Logger, type SearchDocument, type SearchEngine, type SearchHit, type SearchOptions, visibleTo } from "./types.js";

/** Tunable constants; the defaults are the measured best (see the benchmark's variants). */
export interface RankingParameters {
  /** BM25 term-frequency saturation. */
  k1: number;
  /** BM25F weights of a tool's fields. */
  toolFieldWeights: { name: number; description: number; parameters: number; tags: number; serviceName: number };
  /** BM25F length normalisation of each tool field (0 none .. 1 full). */
  toolFieldB: { name: number; description: number; parameters: number; tags: number; serviceName: number };
  /** BM25F weights of a service's fields. */
  serviceFieldWeights: { name: number; description: number; tools: number };
  /** Length normalisation of the service fields. */
  serviceFieldB: { name: number; description: number; tools: number };
  /**
   * The service size, in tools, whose "tools" field counts as of average length for its length
   * normalisation: that field is normalised against this many average tools, not against the mean
   * service. The mean service is a poor pivot: it is set by the few huge APIs (a cloud provider's
   * thousands of operations), so adding them made every small service look a fraction of average,
   * its terms saturated at once, and service evidence became "how many query words the service has
   * anywhere", which the huge APIs win for any query. With a fixed pivot and full normalisation
   * (serviceFieldB.tools 1) a service's tools field weighs what share of its tools speak of the term,
   * whatever else the catalog holds (toolbench with the APIs.guru directory beside it: nDCG@10
   * 63.2 -> 68.7; alone 77.9 -> 78.4).
   */
  serviceToolsPivot: number;
  /** Share of the (normalised) service score added to each of its tools' (normalised) own score. */
  serviceWeight: number;
  /** Services whose tools join the candidates though their own text did not match. */
  topServices: number;
  /** Weight of a synonym-table term relative to a typed one. */
  expansionWeight: number;
  /** Multiplies expansionWeight when the query matched a synonym phrase of several words ("text message"). */
  phraseExpansionBoost: number;
  /** Weight of the best single-sentence score added to the whole-query score (multi-intent queries). */
  sentenceWeight: number;
  /**
   * A query term held by more than this share of the tools scores only the tools a rarer query term
   * matched (Lucene's common-terms query): "get" or "list" in a long query then refines the ranking
   * without making every tool a candidate, which at 100,000 tools is most of a search's cost.
   */
  commonTermShare: number;
  /**
   * How many of the best tools by the whole query the per-sentence scoring re-scores (at least the
   * limit): a tool that answers one part of a request well is among them, and the sentences then
   * cost a pass over these tools rather than over every tool a word matches.
   */
  candidates: number;
  /** Multiplies a tool's score for each tool of its service ranked above it (1: no effect). */
  serviceDecay: number;
  /** Weight of an adjacent pair of query terms found adjacent in a tool's text (a phrase match). */
  pairWeight: number;
  /** Weight of the embedding similarity, when an embedder is configured. */
  semanticWeight: number;
  /** How a query term repeated in the query counts: once, or 1 + ln(repeats). */
  repeatedTerms: "once" | "log";
  /**
   * A related term scores only the tools that do not already hold (every word of) a typed phrase it
   * was added for: it fills in for the caller's words where a tool uses other ones, rather than adding
   * to them. Otherwise a tool that says both "QR code" and "qrcode" (a generator API's twenty
   * near-identical operations) counts one idea twice and outranks every tool that says it once, and a
   * large catalog holds many such tools (toolbench beside the APIs.guru directory: nDCG@10
   * 68.7 -> 70.9; alone 78.4 -> 78.9).
   */
  expansionFillsIn: boolean;
  /** Drop request phrasing ("could you please provide") from queries, not only stop words. */
  dropRequestWords: boolean;
}

export const defaultRankingParameters: RankingParameters = {
  k1: 1.2,
  toolFieldWeights: { name: 2, description: 1, parameters: 0.3, tags: 1, serviceName: 1.5 },
  toolFieldB: { name: 0.5, description: 0.75, parameters: 0.75, tags: 0.5, serviceName: 0.5 },
  serviceFieldWeights: { name: 2, description: 1, tools: 1 },
  serviceFieldB: { name: 0.5, description: 0.75, tools: 1 },
  serviceWeight: 0.5,
  serviceToolsPivot: 3,
  topServices: 20,
  expansionWeight: 0.1,
  phraseExpansionBoost: 10,
  sentenceWeight: 0.5,
  pairWeight: 0.5,
  commonTermShare: 0.005,
  candidates: 1000,
  serviceDecay: 1,
  semanticWeight: 0.3,
  repeatedTerms: "once",
  dropRequestWords: true,
  expansionFillsIn: true,
};

/** Query term ids with their weights; related terms with the typed phrases they were added for. */
interface QueryWeights {
  weights: Map<number, number>;
  sources: Map<number, number[][]>;
}

/** What the engine keeps of a tool: no text (the postings hold it), only what filters and answers need. */
interface IndexedTool {
  id: string;
  serviceSlot: number;
  tags: readonly string[];
  /** The service's visibility and organization, for SearchOptions.visibleTo. */
  visibility: string;
  organizationId: string | null;
  vector?: Float32Array;
}

interface IndexedService {
  id: string;
  /** Name and description as last indexed (a tool carrying other ones re-indexes the service). */
  name: string;
  description: string;
  /** The name's term ids: every tool of the service has them as its service-name field. */
  nameTerms: number[];
  toolSlots: Set<number>;
}

/** The embedded engine's content as data: see EmbeddedEngine.snapshot. */
export interface EmbeddedSnapshot {
  tools: SlotsState<IndexedTool>;
  toolService: Int32Array;
  toolIndex: FieldPostingsState;
  services: SlotsState<IndexedService>;
  serviceIndex: FieldPostingsState;
  serviceToolsLength: Float64Array;
  serviceToolsTotal: number;
  vocabulary: Map<string, number>;
  pairVocabulary: PairTableState;
  nextTermId: number;
}

const noTags: readonly string[] = [];

/** Tool fields in the postings, in this order; the first two are also the service's "tools" field. */
const TOOL_NAME = 0;
const TOOL_DESCRIPTION = 1;

export class EmbeddedEngine implements SearchEngine {
  readonly name = "embedded" as const;
  private readonly tools = new Slots<IndexedTool>();
  /** serviceSlot by tool slot, for the service-level scoring's inner loop. */
  private toolService: Int32Array = new Int32Array(1024);
  private readonly toolIndex: FieldPostings;
  private readonly services = new Slots<IndexedService>();
  /** Name and description of each service (one owner per service). */
  private readonly serviceIndex: FieldPostings;
  /** Per service slot: total length of its tools' names and descriptions (its "tools" field). */
  private serviceToolsLength: Float64Array = new Float64Array(1024);
  private serviceToolsTotal = 0;
  /** Term -> id; an adjacent pair of terms has an id too, keyed by the two ids. */
  private readonly vocabulary = new Map<string, number>();
  private readonly pairVocabulary = new PairTable();
  private nextTermId = 0;
  private readonly params: RankingParameters;
  private readonly embedder: Embedder | undefined;
  // Scratch score buffers, reused by every search (the scoring part of a search never awaits).
  private readonly toolScores = new Accumulator();
  private readonly serviceScores = new Accumulator();
  private readonly serviceTf = new Accumulator();
  private readonly serviceTerm = new Accumulator();
  private readonly queryScores = new Accumulator();
  private readonly bestSentence = new Accumulator();
  private readonly finalScores = new Accumulator();
  private toolMask: Uint8Array = new Uint8Array(1024);
  private parameterCache: Map<string, number[]> | undefined;
  private serviceMask: Uint8Array = new Uint8Array(1024);
  /** Scratch tool masks of the related-term rule (see expansionFillsIn). */
  private skipMask: Uint8Array = new Uint8Array(1024);
  private phraseMask: Uint8Array = new Uint8Array(1024);

  constructor(
    private readonly log: Logger,
    options: { params?: Partial<RankingParameters>; embedder?: Embedder } = {},
  ) {
    const p = { ...defaultRankingParameters, ...options.params };
    this.params = p;
    this.embedder = options.embedder;
    const t = p.toolFieldWeights;
    const tb = p.toolFieldB;
    this.toolIndex = new FieldPostings(
      [t.name, t.description, t.parameters, t.tags, t.serviceName],
      [tb.name, tb.description, tb.parameters, tb.tags, tb.serviceName],
      2,
    );
    const sw = p.serviceFieldWeights;
    const sb = p.serviceFieldB;
    this.serviceIndex = new FieldPostings([sw.name, sw.description], [sb.name, sb.description]);
  }

  async upsert(docs: SearchDocument[]): Promise<void> {
    const vectors = await this.embedDocuments(docs);
    docs.forEach((doc, i) => {
      this.unindexTool(doc.id);
      this.indexTool(doc, vectors?.[i], false);
    });
  }

  async remove(ids: string[]): Promise<void> {
    for (const id of ids) this.unindexTool(id);
  }

  /**
   * Builds the new content aside, batch by batch as they arrive (the rebuild on start analyses one page
   * of tools while Postgres reads the next), then takes it over in one step: until then, searches and
   * changes see the previous content. A rebuild of a live index holds both for that moment.
   */
  async replaceAll(docs: SearchDocument[] | AsyncIterable<SearchDocument[]>): Promise<void> {
    const next = new EmbeddedEngine(this.log, { params: this.params, embedder: this.embedder });
    next.parameterCache = new Map();
    for await (const batch of Array.isArray(docs) ? [docs] : docs) {
      const vectors = await next.embedDocuments(batch);
      batch.forEach((doc, i) => {
        next.unindexTool(doc.id); // a repeated id in the input: the last one wins
        next.indexTool(doc, vectors?.[i], true);
      });
    }
    next.parameterCache = undefined;
    // Lay the postings out now rather than in the first search.
    next.settle();
    // Every field is the index's state (the parameters and the embedder are the same objects).
    Object.assign(this, next);
  }

  async healthy(): Promise<boolean> {
    return true;
  }

  /**
   * The index's content as plain data (typed arrays, Maps, Sets, plain objects) that v8.serialize
   * writes and `restore` takes back: what a restart loads instead of analysing every tool again
   * (search/index-snapshot.ts). It shares the engine's arrays, so serialize it before the next change.
   * Neither the ranking parameters nor the embedder travel: a snapshot is read only by an engine
   * built with the same ones (the snapshot's fingerprint).
   */
  snapshot(): EmbeddedSnapshot {
    return {
      tools: this.tools.snapshot(),
      toolService: this.toolService,
      toolIndex: this.toolIndex.snapshot(),
      services: this.services.snapshot(),
      serviceIndex: this.serviceIndex.snapshot(),
      serviceToolsLength: this.serviceToolsLength,
      serviceToolsTotal: this.serviceToolsTotal,
      vocabulary: this.vocabulary,
      pairVocabulary: this.pairVocabulary.snapshot(),
      nextTermId: this.nextTermId,
    };
  }

  /**
   * What a snapshot must have been made with to be read by this engine: the ranking parameters, the
   * embedder, and the analysis and index code itself (this folder's files and the stemmer), so an
   * upgrade that changes how text becomes terms never loads terms made the old way.
   */
  snapshotKey(): string {
    return createHash("sha256")
      .update(searchCodeDigest())
      .update(JSON.stringify(this.params))
      .update(this.embedder ? (this.embedder.identity ?? "an embedder") : "no embedder")
      .digest("hex");
  }

  /** Takes over a snapshot's content (see `snapshot`), replacing this engine's. */
  restore(state: EmbeddedSnapshot): void {
    Object.assign(this, {
      tools: Slots.restore(state.tools),
      toolService: state.toolService,
      toolIndex: FieldPostings.restore(state.toolIndex),
      services: Slots.restore(state.services),
      serviceIndex: FieldPostings.restore(state.serviceIndex),
      serviceToolsLength: state.serviceToolsLength,
      serviceToolsTotal: state.serviceToolsTotal,
      vocabulary: state.vocabulary,
      pairVocabulary: PairTable.restore(state.pairVocabulary),
      nextTermId: state.nextTermId,
    });
  }

  /**
   * Merges the postings and sets the field averages exactly, as replaceAll ends: a restored snapshot
   * caught up with Postgres then ranks as a rebuild does (removed tools no longer count in a term's
   * holders, and no average is left up to 1% off).
   */
  settle(): void {
    this.toolIndex.maintain(true);
    this.serviceIndex.maintain(true);
  }

  /** Sizes of the index, for the benchmarks' memory report. */
  stats(): { tools: number; services: number; terms: number; postings: number; postingBytes: number } {
    return {
      tools: this.tools.size,
      services: this.services.size,
      terms: this.nextTermId,
      postings: this.toolIndex.size + this.serviceIndex.size,
      postingBytes: this.toolIndex.bytes() + this.serviceIndex.bytes() + this.pairVocabulary.bytes(),
    };
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const p = this.params;
    query = withoutValues(query);
    const typed = queryTerms(query, p.dropRequestWords);
    if (typed.length === 0 || options.limit <= 0) return [];
    // The only await: everything after it runs to completion, so the scratch buffers are safe.
    const queryVector = this.embedder && p.semanticWeight > 0 ? await this.embedQuery(query) : undefined;
    this.toolIndex.maintain();
    this.serviceIndex.maintain();

    const final = this.finalScores;
    final.reset();
    // Within one service every tool shares the service's score: there it tells tools apart only when
    // no tool's own text matched (otherwise the service's other tools would tie, in id order, behind
    // the matches, and the catalog's ready-first order would lift those ties above them).
    const within = options.serviceId === undefined ? undefined : (this.services.slotOf(options.serviceId) ?? -1);
    this.scoreQuery(this.queryWeights(typed), undefined, within);
    for (const slot of this.queryScores.touched) final.add(slot, this.queryScores.values[slot] as number);
    if (queryVector) this.addSemantic(queryVector, final);

    // The candidates: the best by the whole query among the tools the options let through.
    const id = (slot: number) => (this.tools.items[slot] as IndexedTool).id;
    const byId = (a: number, b: number) => (id(a) < id(b) ? -1 : 1);
    const accepted = this.accepted(final.touched, options);
    const pool = Math.max(options.limit, p.candidates);
    const candidates = accepted.length > pool ? topSlots(accepted, final.values, pool, byId) : accepted;

    // Multi-intent queries: the best score any single sentence gives a candidate, added to the whole's.
    const sentences = p.sentenceWeight > 0 ? splitSentences(query, p) : [];
    if (sentences.length > 1) {
      const only = this.mark(candidates);
      const best = this.bestSentence;
      best.reset();
      for (const sentence of sentences) {
        this.scoreQuery(this.queryWeights(sentence), only);
        for (const slot of this.queryScores.touched) best.raise(slot, this.queryScores.values[slot] as number);
      }
      for (const slot of candidates) final.add(slot, p.sentenceWeight * (best.values[slot] as number));
      this.unmark(candidates);
    }

    if (p.serviceDecay < 1)
      return this.spreadServices(topSlots(candidates, final.values, options.limit * 3, byId), options.limit);
    return topSlots(candidates, final.values, options.limit, byId).map((slot) => ({
      id: id(slot),
      score: final.values[slot] as number,
    }));
  }

  /**
   * Orders the best tools so one service does not fill the answer with near copies (a cloud API's
   * hundred variants of one operation): each tool's score is multiplied by serviceDecay for every
   * tool of its service placed above it. Scores only fall as tools are placed, so the answer's
   * scores still descend.
   */
  private spreadServices(ranked: number[], limit: number): SearchHit[] {
    const decay = this.params.serviceDecay;
    const final = this.finalScores.values;
    const placed = new Map<number, number>();
    const remaining = [...ranked];
    const out: SearchHit[] = [];
    while (out.length < limit && remaining.length > 0) {
      let best = 0;
      let bestScore = -1;
      for (let i = 0; i < remaining.length; i++) {
        const slot = remaining[i] as number;
        const score = (final[slot] as number) * decay ** (placed.get(this.toolService[slot] as number) ?? 0);
        if (score > bestScore) {
          bestScore = score;
          best = i;
        }
      }
      const slot = remaining.splice(best, 1)[0] as number;
      const service = this.toolService[slot] as number;
      placed.set(service, (placed.get(service) ?? 0) + 1);
      out.push({ id: (this.tools.items[slot] as IndexedTool).id, score: bestScore });
    }
    return out;
  }

  /** Marks tool slots (and their services) in the scratch masks `scoreQuery` can be limited to. */
  private mark(slots: number[]): { tools: Uint8Array; services: Uint8Array } {
    this.toolMask = growUint8(this.toolMask, this.tools.items.length);
    this.serviceMask = growUint8(this.serviceMask, this.services.items.length);
    for (const slot of slots) {
      this.toolMask[slot] = 1;
      this.serviceMask[this.toolService[slot] as number] = 1;
    }
    return { tools: this.toolMask, services: this.serviceMask };
  }

  private unmark(slots: number[]): void {
    for (const slot of slots) {
      this.toolMask[slot] = 0;
      this.serviceMask[this.toolService[slot] as number] = 0;
    }
  }

  /**
   * Scores one weighted query into `queryScores`: tool score / best + serviceWeight * service score /
   * best; with `only`, for the marked tools and services alone (the bests then among them). The best
   * services' tools that no term found join with their service's share; with `within` (a service
   * slot), only when none of that service's tools matched by its own text.
   */
  private scoreQuery(
    { weights, sources }: QueryWeights,
    only?: { tools: Uint8Array; services: Uint8Array },
    within?: number,
  ): void {
    const p = this.params;
    const out = this.queryScores;
    out.reset();
    const tools = this.toolScores;
    tools.reset();
    const services = this.serviceScores;
    services.reset();
    const byService = p.serviceWeight > 0;
    // Rare terms first; a term most tools hold only adds to the tools a rarer one found (see commonTermShare).
    const index = this.toolIndex;
    const cutoff = Math.max(p.commonTermShare * index.count, 100);
    const ordered = [...weights].sort((a, b) => index.df(a[0]) - index.df(b[0]));
    const said = new Map<string, Uint32Array>();
    for (const [term, queryWeight] of ordered) {
      const phrases = sources.get(term);
      if (!phrases) {
        this.scoreTerm(term, queryWeight, tools, byService ? services : undefined, cutoff, only);
        continue;
      }
      // A related term fills in where the typed words are missing (see expansionFillsIn).
      this.skipMask = growUint8(this.skipMask, this.tools.items.length);
      const skip = this.skipMask;
      const holders = phrases.map((phrase) => this.holdersOf(phrase, only?.tools, said));
      for (const list of holders) for (const slot of list) skip[slot] = 1;
      this.scoreTerm(term, queryWeight, tools, byService ? services : undefined, cutoff, only, skip);
      for (const list of holders) for (const slot of list) skip[slot] = 0;
    }
    const maxTool = tools.max();
    if (maxTool <= 0) return;
    for (const slot of tools.touched) out.add(slot, (tools.values[slot] as number) / maxTool);
    if (!byService) return;

    const maxService = services.max();
    if (maxService <= 0) return;
    const share = p.serviceWeight / maxService;
    const matched = out.touched.length;
    for (let i = 0; i < matched; i++) {
      const slot = out.touched[i] as number;
      out.add(slot, share * (services.values[this.toolService[slot] as number] as number));
    }
    // The best services' other tools join too: their names are often generic ("Search", "Latest").
    if (within !== undefined && out.touched.some((slot) => this.toolService[slot] === within)) return;
    for (const serviceSlot of topSlots(services.touched, services.values, p.topServices, (a, b) => a - b)) {
      for (const slot of (this.services.items[serviceSlot] as IndexedService).toolSlots) {
        if (only && only.tools[slot] !== 1) continue;
        // Unscored: 0, or past the end of the scratch array (it grows only as far as the slots scored so far).
        if (!((out.values[slot] ?? 0) > 0)) out.add(slot, share * (services.values[serviceSlot] as number));
      }
    }
  }

  /**
   * Adds one term's BM25F score to the tools holding it and, when `services` is given, to the
   * services: a service is scored as one document made of its name, its description and all its
   * tools' names and descriptions (the "tools" field, whose frequencies are summed from the tools'
   * postings here rather than indexed twice).
   */
  private scoreTerm(
    term: number,
    queryWeight: number,
    tools: Accumulator,
    services: Accumulator | undefined,
    commonCutoff: number,
    only: { tools: Uint8Array; services: Uint8Array } | undefined,
    skip?: Uint8Array,
  ): void {
    const k1 = this.params.k1;
    const index = this.toolIndex;
    const n = index.collect(term, only?.tools);
    const tf = this.serviceTf;
    if (n > 0) {
      // Holders in the whole index: all hits, or (limited to `only`) the count that includes removed
      // tools not merged away yet.
      const holders = only ? index.df(term) : n;
      const common = tools.touched.length > 0 && holders > commonCutoff;
      const factor = queryWeight * idf(index.count, holders);
      const values = tools.values;
      const matched = services?.values;
      for (let i = 0; i < n; i++) {
        const slot = index.hitSlots[i] as number;
        if (skip && skip[slot] === 1) continue;
        if (services) {
          // A common term adds to the services a rarer term found, as to the tools.
          const service = this.toolService[slot] as number;
          if (!common || (service < (matched as Float64Array).length && (matched as Float64Array)[service] !== 0)) {
            tf.add(service, index.hitRaw[i] as number);
          }
        }
        if (common && (slot >= values.length || values[slot] === 0)) continue;
        const x = index.hitTf[i] as number;
        tools.add(slot, (factor * x) / (k1 + x));
      }
    }
    if (!services) return;

    const p = this.params;
    const pseudo = this.serviceTerm;
    const m = this.serviceIndex.collect(term);
    for (let i = 0; i < m; i++) {
      const slot = this.serviceIndex.hitSlots[i] as number;
      if (!only || only.services[slot] === 1) pseudo.add(slot, this.serviceIndex.hitTf[i] as number);
    }
    const count = this.services.size;
    if (tf.touched.length > 0) {
      const b = p.serviceFieldB.tools;
      // serviceToolsPivot average tools, not the mean service (see there).
      const average = Math.max((p.serviceToolsPivot * this.serviceToolsTotal) / Math.max(this.tools.size, 1), 1e-9);
      for (const slot of tf.touched) {
        const norm = 1 - b + (b * (this.serviceToolsLength[slot] as number)) / average;
        pseudo.add(slot, (p.serviceFieldWeights.tools * (tf.values[slot] as number)) / norm);
      }
    }
    if (pseudo.touched.length > 0) {
      const factor = queryWeight * idf(count, pseudo.touched.length);
      for (const slot of pseudo.touched) {
        const x = pseudo.values[slot] as number;
        services.add(slot, (factor * x) / (k1 + x));
      }
    }
    tf.reset();
    pseudo.reset();
  }

  /** The scored slots the search options let through. */
  private accepted(slots: number[], options: SearchOptions): number[] {
    const candidates = options.candidateIds ? new Set(options.candidateIds) : undefined;
    const tags = options.tags?.filter((t) => t.length > 0) ?? [];
    const serviceSlot = options.serviceId === undefined ? undefined : (this.services.slotOf(options.serviceId) ?? -1);
    const who = options.visibleTo;
    if (candidates === undefined && serviceSlot === undefined && tags.length === 0 && (who === undefined || who.all)) {
      return slots;
    }
    return slots.filter((slot) => {
      const tool = this.tools.items[slot] as IndexedTool;
      return (
        (serviceSlot === undefined || tool.serviceSlot === serviceSlot) &&
        (candidates === undefined || candidates.has(tool.id)) &&
        visibleTo(tool, who) &&
        tags.every((t) => tool.tags.includes(t))
      );
    });
  }

  /**
   * Term ids of one parameter's name and description. Large APIs repeat the same parameter on every
   * operation (an api-version, a page token), so a rebuild analyses each text once (the cache is
   * dropped after it).
   */
  private parameterTerms(text: string): number[] {
    const cached = this.parameterCache?.get(text);
    if (cached) return cached;
    const ids = terms(text).map((t) => this.termId(t));
    this.parameterCache?.set(text, ids);
    return ids;
  }

  private termId(term: string): number {
    let id = this.vocabulary.get(term);
    if (id === undefined) {
      id = this.nextTermId++;
      this.vocabulary.set(term, id);
    }
    return id;
  }

  /** Term ids of a text's terms, then of each adjacent pair (a phrase the query may repeat). */
  private withPairs(list: string[]): number[] {
    const ids = list.map((t) => this.termId(t));
    const n = ids.length;
    for (let i = 1; i < n; i++) {
      const a = ids[i - 1] as number;
      const b = ids[i] as number;
      let id = this.pairVocabulary.get(a, b);
      if (id === undefined) {
        id = this.nextTermId++;
        this.pairVocabulary.set(a, b, id);
      }
      ids.push(id);
    }
    return ids;
  }

  /**
   * Typed terms weigh 1 (or by their repeats, damped); adjacent typed pairs pairWeight; related
   * terms by expansionWeight, with the typed phrases they stand for (see expansionFillsIn). Terms no
   * tool has are left out.
   */
  private queryWeights(typed: string[]): QueryWeights {
    const p = this.params;
    const sources = new Map<number, number[][]>();
    const counts = new Map<string, number>();
    for (const t of typed) counts.set(t, (counts.get(t) ?? 0) + 1);
    const weights = new Map<number, number>();
    for (const [t, n] of counts) {
      const id = this.vocabulary.get(t);
      if (id !== undefined) weights.set(id, p.repeatedTerms === "log" ? 1 + Math.log(n) : 1);
    }
    if (p.pairWeight > 0) {
      for (let i = 1; i < typed.length; i++) {
        const a = this.vocabulary.get(typed[i - 1] as string);
        const b = this.vocabulary.get(typed[i] as string);
        if (a === undefined || b === undefined) continue;
        const id = this.pairVocabulary.get(a, b);
        if (id !== undefined && !weights.has(id)) weights.set(id, p.pairWeight);
      }
    }
    if (p.expansionWeight > 0) {
      for (const [t, related] of relatedTermSources(typed, p.phraseExpansionBoost)) {
        const id = this.vocabulary.get(t);
        if (id === undefined || weights.has(id)) continue;
        weights.set(id, p.expansionWeight * related.weight);
        if (p.expansionFillsIn) {
          const phrases = related.sources
            .map((phrase) => phrase.map((w) => this.vocabulary.get(w)))
            .filter((ids): ids is number[] => ids.every((x) => x !== undefined));
          if (phrases.length > 0) sources.set(id, phrases);
        }
      }
    }
    return { weights, sources };
  }

  /**
   * The tools that hold every word of a typed phrase (see expansionFillsIn), marked in the scratch
   * `phraseMask`, cached by phrase for one scoreQuery: several related terms share a phrase ("company"
   * brings "business", "firm" and "enterprise").
   */
  private holdersOf(phrase: number[], only: Uint8Array | undefined, cache: Map<string, Uint32Array>): Uint32Array {
    const key = phrase.join(",");
    const cached = cache.get(key);
    if (cached) return cached;
    const index = this.toolIndex;
    const words = [...new Set(phrase)].sort((a, b) => index.df(a) - index.df(b));
    // The rarest word's holders, narrowed by each other word's.
    let n = index.collect(words[0] as number, only);
    let holders = index.hitSlots.slice(0, n);
    if (words.length > 1) {
      this.phraseMask = growUint8(this.phraseMask, this.tools.items.length);
      const mask = this.phraseMask;
      for (const word of words.slice(1)) {
        for (const slot of holders) mask[slot] = 1;
        const m = index.collect(word, only);
        n = 0;
        const next = new Uint32Array(Math.min(holders.length, m));
        for (let i = 0; i < m; i++) {
          const slot = index.hitSlots[i] as number;
          if (mask[slot] === 1) next[n++] = slot;
        }
        for (const slot of holders) mask[slot] = 0;
        holders = next.subarray(0, n);
      }
    }
    cache.set(key, holders);
    return holders;
  }

  private indexTool(doc: SearchDocument, vector: Float32Array | undefined, bulk: boolean): void {
    const serviceSlot = this.serviceFor(doc, bulk);
    const service = this.services.items[serviceSlot] as IndexedService;
    const fields = [
      this.withPairs(terms(doc.name)),
      this.withPairs(terms(doc.description)),
      doc.parameters.flatMap((p) => this.parameterTerms(`${p.name} ${p.description}`)),
      terms(doc.tags.join(" ")).map((t) => this.termId(t)),
      service.nameTerms,
    ];
    const slot = this.tools.add(doc.id, {
      id: doc.id,
      serviceSlot,
      tags: doc.tags.length > 0 ? doc.tags : noTags,
      visibility: doc.visibility,
      organizationId: doc.organizationId,
      vector,
    });
    this.toolIndex.add(slot, fields, bulk);
    this.toolService = growInt32(this.toolService, slot + 1);
    this.toolService[slot] = serviceSlot;
    service.toolSlots.add(slot);
    const length = (fields[TOOL_NAME] as number[]).length + (fields[TOOL_DESCRIPTION] as number[]).length;
    this.serviceToolsLength[serviceSlot] = (this.serviceToolsLength[serviceSlot] as number) + length;
    this.serviceToolsTotal += length;
  }

  /**
   * The slot of the tool's service, indexing the service (its name and description) when it is new
   * or the tool carries another name or description for it (the latest indexed tool has the current
   * ones). Such a service moves to a new slot with its tools: slots are not reused (see postings.ts).
   */
  private serviceFor(doc: SearchDocument, bulk: boolean): number {
    const existing = this.services.slotOf(doc.serviceId);
    const current = existing === undefined ? undefined : (this.services.items[existing] as IndexedService);
    if (current && current.name === doc.serviceName && current.description === doc.serviceDescription) {
      return existing as number;
    }
    const toolSlots = current?.toolSlots ?? new Set<number>();
    if (existing !== undefined) {
      this.serviceIndex.remove(existing);
      this.services.delete(doc.serviceId);
    }
    const nameTerms = this.withPairs(terms(doc.serviceName));
    const slot = this.services.add(doc.serviceId, {
      id: doc.serviceId,
      name: doc.serviceName,
      description: doc.serviceDescription,
      nameTerms,
      toolSlots,
    });
    this.serviceIndex.add(slot, [nameTerms, this.withPairs(terms(doc.serviceDescription))], bulk);
    this.serviceToolsLength = growFloat64(this.serviceToolsLength, slot + 1);
    if (existing !== undefined) {
      this.serviceToolsLength[slot] = this.serviceToolsLength[existing] as number;
      this.serviceToolsLength[existing] = 0;
      for (const toolSlot of toolSlots) {
        this.toolService[toolSlot] = slot;
        (this.tools.items[toolSlot] as IndexedTool).serviceSlot = slot;
      }
    }
    return slot;
  }

  private unindexTool(id: string): void {
    const slot = this.tools.slotOf(id);
    if (slot === undefined) return;
    const tool = this.tools.items[slot] as IndexedTool;
    const length = this.toolIndex.fieldLength(slot, TOOL_NAME) + this.toolIndex.fieldLength(slot, TOOL_DESCRIPTION);
    this.toolIndex.remove(slot);
    this.tools.delete(id);
    const service = this.services.items[tool.serviceSlot];
    if (!service) return;
    service.toolSlots.delete(slot);
    this.serviceToolsLength[tool.serviceSlot] = (this.serviceToolsLength[tool.serviceSlot] as number) - length;
    this.serviceToolsTotal -= length;
    if (service.toolSlots.size === 0) {
      this.serviceIndex.remove(tool.serviceSlot);
      this.services.delete(service.id);
    }
  }

  private async embedDocuments(docs: SearchDocument[]): Promise<(Float32Array | undefined)[] | undefined> {
    if (!this.embedder || docs.length === 0) return undefined;
    try {
      return await this.embedder.embed(docs.map(embeddingText));
    } catch (err) {
      // Lexical search still works; the tools get no semantic signal until they are indexed again.
      this.log.warn({ err, count: docs.length }, "embedding tools failed; indexed without vectors");
      return undefined;
    }
  }

  private async embedQuery(query: string): Promise<Float32Array | undefined> {
    try {
      return (await (this.embedder as Embedder).embed([query]))[0];
    } catch (err) {
      this.log.warn({ err }, "embedding the query failed; lexical ranking only");
      return undefined;
    }
  }

  /**
   * Adds the cosine similarity to the query to every tool's score, scaled so the most similar tool
   * gains semanticWeight times the best lexical score; the cube keeps weak similarities from adding
   * a little to everything.
   */
  private addSemantic(queryVector: Float32Array, scores: Accumulator): void {
    const similarities = new Accumulator();
    this.tools.items.forEach((tool, slot) => {
      if (!tool?.vector || tool.vector.length !== queryVector.length) return;
      const s = dot(tool.vector, queryVector);
      if (s > 0) similarities.add(slot, s);
    });
    const best = similarities.max();
    if (best <= 0) return;
    const scale = this.params.semanticWeight * (scores.max() || 1);
    for (const slot of similarities.touched) scores.add(slot, scale * ((similarities.values[slot] as number) / best) ** 3);
  }
}

let codeDigest: string | undefined;

/** A digest of the search code that decides an index's content: this folder's modules and the stemmer's. */
function searchCodeDigest(): string {
  if (codeDigest) return codeDigest;
  const hash = createHash("sha256");
  const folder = path.dirname(fileURLToPath(import.meta.url));
  for (const name of readdirSync(folder).sort()) {
    if (/\.(js|ts)$/.test(name) && !name.endsWith(".d.ts") && !name.includes(".test.")) {
      hash.update(name).update(readFileSync(path.join(folder, name)));
    }
  }
  hash.update(readFileSync(createRequire(import.meta.url).resolve("stemmer")));
  codeDigest = hash.digest("hex");
  return codeDigest;
}

/** Lucene's BM25 idf, with `n` of `count` owners holding the term. */
function idf(count: number, n: number): number {
  return Math.log(1 + (count - n + 0.5) / (n + 0.5));
}

function growInt32(array: Int32Array, need: number): Int32Array {
  if (need <= array.length) return array;
  const next = new Int32Array(Math.max(need, array.length * 2));
  next.set(array);
  return next;
}

function growUint8(array: Uint8Array, need: number): Uint8Array {
  if (need <= array.length) return array;
  const next = new Uint8Array(Math.max(need, array.length * 2));
  next.set(array);
  return next;
}

function growFloat64(array: Float64Array, need: number): Float64Array {
  if (need <= array.length) return array;
  const next = new Float64Array(Math.max(need, array.length * 2));
  next.set(array);
  return next;
}

/**
 * The `k` slots with the highest values, best first (ties broken by `tieBreak`), without sorting all
 * of them: most candidates fall below the k-th best seen so far and cost one comparison.
 */
function topSlots(slots: number[], values: Float64Array, k: number, tieBreak: (a: number, b: number) => number): number[] {
  const better = (a: number, b: number) => {
    const d = (values[b] as number) - (values[a] as number);
    return d !== 0 ? d : tieBreak(a, b);
  };
  const top: number[] = [];
  for (const slot of slots) {
    if (top.length === k && better(slot, top[k - 1] as number) >= 0) continue;
    let i = top.length === k ? k - 1 : top.length;
    while (i > 0 && better(slot, top[i - 1] as number) < 0) {
      top[i] = top[i - 1] as number;
      i--;
    }
    top[i] = slot;
  }
  return top;
}

/**
 * Things numbered by small integers, so scores live in typed arrays. A removed thing's number is not
 * reused before `clear` (the postings of a removed tool stay, marked dead, until they are merged away).
 */
interface SlotsState<T> {
  items: (T | undefined)[];
  byId: Map<string, number>;
}

class Slots<T> {
  readonly items: (T | undefined)[] = [];
  private readonly byId = new Map<string, number>();

  snapshot(): SlotsState<T> {
    return { items: this.items, byId: this.byId };
  }

  static restore<T>(state: SlotsState<T>): Slots<T> {
    return Object.assign(Object.create(Slots.prototype) as Slots<T>, state);
  }

  get size(): number {
    return this.byId.size;
  }

  slotOf(id: string): number | undefined {
    return this.byId.get(id);
  }

  add(id: string, item: T): number {
    const slot = this.items.length;
    this.items[slot] = item;
    this.byId.set(id, slot);
    return slot;
  }

  delete(id: string): void {
    const slot = this.byId.get(id);
    if (slot === undefined) return;
    this.items[slot] = undefined;
    this.byId.delete(id);
  }

  clear(): void {
    this.items.length = 0;
    this.byId.clear();
  }
}

/** Positive scores by slot, with the list of slots that hold one (cheap to reset). */
class Accumulator {
  values = new Float64Array(1024);
  readonly touched: number[] = [];

  add(slot: number, value: number): void {
    if (value <= 0) return;
    if (slot >= this.values.length) this.grow(slot);
    if (this.values[slot] === 0) this.touched.push(slot);
    (this.values[slot] as number) += value;
  }

  raise(slot: number, value: number): void {
    if (value <= 0) return;
    if (slot >= this.values.length) this.grow(slot);
    if (this.values[slot] === 0) this.touched.push(slot);
    if (value > (this.values[slot] as number)) this.values[slot] = value;
  }

  max(): number {
    let m = 0;
    for (const slot of this.touched) if ((this.values[slot] as number) > m) m = this.values[slot] as number;
    return m;
  }

  reset(): void {
    for (const slot of this.touched) this.values[slot] = 0;
    this.touched.length = 0;
  }

  private grow(slot: number): void {
    const next = new Float64Array(Math.max(slot + 1, this.values.length * 2));
    next.set(this.values);
    this.values = next;
  }
}

/** The sentences (parts) of a query that asks for several things, as query terms; empty ones dropped. */
function splitSentences(query: string, p: RankingParameters): string[][] {
  return query
    .split(/[.!?;\n]+|\b(?:and also|as well as|additionally|furthermore|moreover)\b/i)
    .map((sentence) => queryTerms(sentence, p.dropRequestWords))
    .filter((t) => t.length > 0);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}
