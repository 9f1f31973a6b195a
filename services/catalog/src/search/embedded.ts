/**
 * The embedded search engine: in-process, no server, the default.
 *
 * Ranking is fielded BM25 (BM25F, Robertson & Zaragoza 2009) over each tool's name, description,
 * parameters, tags and service name, plus service-level evidence: every service is also scored as one
 * document made of its name, description and all its tools' text, because endpoints of one API share
 * vocabulary and a query about an API's job often names words only its sibling endpoints use. A tool's
 * score is its own BM25F score plus a share of its service's, each normalised by the best of the query.
 * Queries lose stop words and request phrasing ("could you please provide"), are stemmed like the
 * text, and gain related terms from a small synonym table at a reduced weight. Long queries that ask
 * for several things are also scored sentence by sentence, so a tool that answers one part well is
 * not drowned by tools that touch every part weakly.
 *
 * Hand-written rather than a library: the JavaScript full-text libraries (MiniSearch, Lunr, FlexSearch,
 * Orama) rank by per-field boosts or plain BM25 and cannot add the service-level score or the
 * per-sentence scoring above, which is where most of the measured gain over plain BM25 comes from
 * (test/bench/search-retrieval.ts prints the figures). The index is a plain inverted index; with
 * 10,000 tools a search takes a few milliseconds.
 */
import { type Embedder, embeddingText } from "./embedding.js";
import { relatedTerms } from "./synonyms.js";
import { queryTerms, terms } from "./text.js";
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
  /** Weight of the embedding similarity, when an embedder is configured. */
  semanticWeight: number;
  /** How a query term repeated in the query counts: once, or 1 + ln(repeats). */
  repeatedTerms: "once" | "log";
  /** Drop request phrasing ("could you please provide") from queries, not only stop words. */
  dropRequestWords: boolean;
}

export const defaultRankingParameters: RankingParameters = {
  k1: 1.2,
  toolFieldWeights: { name: 2, description: 1, parameters: 0.3, tags: 1, serviceName: 1.5 },
  toolFieldB: { name: 0.5, description: 0.75, parameters: 0.75, tags: 0.5, serviceName: 0.5 },
  serviceFieldWeights: { name: 2, description: 1, tools: 1 },
  serviceFieldB: { name: 0.5, description: 0.75, tools: 0.75 },
  serviceWeight: 0.5,
  topServices: 20,
  expansionWeight: 0.25,
  phraseExpansionBoost: 4,
  sentenceWeight: 0.5,
  semanticWeight: 0.3,
  repeatedTerms: "once",
  dropRequestWords: true,
};

interface IndexedTool {
  doc: SearchDocument;
  terms: string[];
  serviceSlot: number;
  vector?: Float32Array;
}

interface IndexedService {
  id: string;
  /** The service's most recently indexed tool: its service name and description are the current ones. */
  latest: SearchDocument;
  toolSlots: Set<number>;
  terms: string[];
}

export class EmbeddedEngine implements SearchEngine {
  readonly name = "embedded" as const;
  private readonly tools = new Slots<IndexedTool>();
  private readonly toolIndex: FieldIndex;
  private readonly services = new Slots<IndexedService>();
  private readonly serviceIndex: FieldIndex;
  private readonly dirtyServices = new Set<string>();
  private readonly params: RankingParameters;
  private readonly embedder: Embedder | undefined;
  // Scratch score buffers, reused by every search (the scoring part of a search never awaits).
  private readonly toolScores = new Accumulator();
  private readonly serviceScores = new Accumulator();
  private readonly queryScores = new Accumulator();
  private readonly bestSentence = new Accumulator();
  private readonly finalScores = new Accumulator();

  constructor(
    private readonly log: Logger,
    options: { params?: Partial<RankingParameters>; embedder?: Embedder } = {},
  ) {
    const p = { ...defaultRankingParameters, ...options.params };
    this.params = p;
    this.embedder = options.embedder;
    const t = p.toolFieldWeights;
    const tb = p.toolFieldB;
    this.toolIndex = new FieldIndex(
      [t.name, t.description, t.parameters, t.tags, t.serviceName],
      [tb.name, tb.description, tb.parameters, tb.tags, tb.serviceName],
      p.k1,
    );
    const sw = p.serviceFieldWeights;
    const sb = p.serviceFieldB;
    this.serviceIndex = new FieldIndex([sw.name, sw.description, sw.tools], [sb.name, sb.description, sb.tools], p.k1);
  }

  async upsert(docs: SearchDocument[]): Promise<void> {
    const vectors = await this.embedDocuments(docs);
    docs.forEach((doc, i) => {
      this.unindexTool(doc.id);
      this.indexTool(doc, vectors?.[i]);
    });
  }

  async remove(ids: string[]): Promise<void> {
    for (const id of ids) this.unindexTool(id);
  }

  async replaceAll(docs: SearchDocument[]): Promise<void> {
    const vectors = await this.embedDocuments(docs);
    this.tools.clear();
    this.toolIndex.clear();
    this.services.clear();
    this.serviceIndex.clear();
    this.dirtyServices.clear();
    docs.forEach((doc, i) => {
      this.unindexTool(doc.id); // a repeated id in the input: the last one wins
      this.indexTool(doc, vectors?.[i]);
    });
    // A rebuild happens on start: compile every posting list now rather than in the first searches.
    this.refreshServices();
    this.toolIndex.compileAll();
    this.serviceIndex.compileAll();
  }

  async healthy(): Promise<boolean> {
    return true;
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const p = this.params;
    const typed = queryTerms(query, p.dropRequestWords);
    if (typed.length === 0 || options.limit <= 0) return [];
    // The only await: everything after it runs to completion, so the scratch buffers are safe.
    const queryVector = this.embedder && p.semanticWeight > 0 ? await this.embedQuery(query) : undefined;
    this.refreshServices();

    const final = this.finalScores;
    final.reset();
    this.scoreQuery(queryWeights(typed, p));
    for (const slot of this.queryScores.touched) final.add(slot, this.queryScores.values[slot] as number);

    // Multi-intent queries: the best score any single sentence gives a tool, added to the whole's.
    if (p.sentenceWeight > 0) {
      const sentences = query
        .split(/[.!?;\n]+|\b(?:and also|as well as|additionally|furthermore|moreover)\b/i)
        .map((sentence) => queryTerms(sentence, p.dropRequestWords))
        .filter((t) => t.length > 0);
      if (sentences.length > 1) {
        const best = this.bestSentence;
        best.reset();
        for (const sentence of sentences) {
          this.scoreQuery(queryWeights(sentence, p));
          for (const slot of this.queryScores.touched) best.raise(slot, this.queryScores.values[slot] as number);
        }
        for (const slot of best.touched) final.add(slot, p.sentenceWeight * (best.values[slot] as number));
      }
    }

    if (queryVector) this.addSemantic(queryVector, final);

    const accept = this.filter(options);
    const accepted = final.touched.filter((slot) => accept((this.tools.items[slot] as IndexedTool).doc));
    const id = (slot: number) => (this.tools.items[slot] as IndexedTool).doc.id;
    return topSlots(accepted, final.values, options.limit, (a, b) => (id(a) < id(b) ? -1 : 1)).map((slot) => ({
      id: id(slot),
      score: final.values[slot] as number,
    }));
  }

  /** Scores one weighted query into `queryScores`: tool score / best + serviceWeight * service score / best. */
  private scoreQuery(weights: Map<string, number>): void {
    const p = this.params;
    const out = this.queryScores;
    out.reset();
    const tools = this.toolScores;
    tools.reset();
    this.toolIndex.score(weights, tools);
    const maxTool = tools.max();
    if (maxTool <= 0) return;
    for (const slot of tools.touched) out.add(slot, (tools.values[slot] as number) / maxTool);
    if (p.serviceWeight <= 0) return;

    const services = this.serviceScores;
    services.reset();
    this.serviceIndex.score(weights, services);
    const maxService = services.max();
    if (maxService <= 0) return;
    const share = p.serviceWeight / maxService;
    const matched = out.touched.length;
    for (let i = 0; i < matched; i++) {
      const slot = out.touched[i] as number;
      const serviceSlot = (this.tools.items[slot] as IndexedTool).serviceSlot;
      out.add(slot, share * (services.values[serviceSlot] as number));
    }
    // The best services' other tools join too: their names are often generic ("Search", "Latest").
    for (const serviceSlot of topSlots(services.touched, services.values, p.topServices, (a, b) => a - b)) {
      for (const slot of (this.services.items[serviceSlot] as IndexedService).toolSlots) {
        if (out.values[slot] === 0) out.add(slot, share * (services.values[serviceSlot] as number));
      }
    }
  }

  private filter(options: SearchOptions): (doc: SearchDocument) => boolean {
    const candidates = options.candidateIds ? new Set(options.candidateIds) : undefined;
    const tags = options.tags?.filter((t) => t.length > 0) ?? [];
    return (doc) =>
      (candidates === undefined || candidates.has(doc.id)) &&
      (options.serviceId === undefined || doc.serviceId === options.serviceId) &&
      visibleTo(doc, options.visibleTo) &&
      tags.every((t) => doc.tags.includes(t));
  }

  private indexTool(doc: SearchDocument, vector: Float32Array | undefined): void {
    const fields = [
      terms(doc.name),
      terms(doc.description),
      terms(doc.parameters.map((p) => `${p.name} ${p.description}`).join(" ")),
      terms(doc.tags.join(" ")),
      terms(doc.serviceName),
    ];
    let serviceSlot = this.services.slotOf(doc.serviceId);
    if (serviceSlot === undefined) {
      serviceSlot = this.services.add(doc.serviceId, {
        id: doc.serviceId,
        latest: doc,
        toolSlots: new Set(),
        terms: [],
      });
    }
    const slot = this.tools.add(doc.id, { doc, terms: [], serviceSlot, vector });
    (this.tools.items[slot] as IndexedTool).terms = this.toolIndex.add(slot, fields);
    const service = this.services.items[serviceSlot] as IndexedService;
    service.toolSlots.add(slot);
    service.latest = doc;
    this.dirtyServices.add(doc.serviceId);
  }

  private unindexTool(id: string): void {
    const slot = this.tools.slotOf(id);
    if (slot === undefined) return;
    const tool = this.tools.items[slot] as IndexedTool;
    this.toolIndex.remove(slot, tool.terms);
    this.services.items[tool.serviceSlot]?.toolSlots.delete(slot);
    this.dirtyServices.add(tool.doc.serviceId);
    this.tools.delete(id);
  }

  /** Re-indexes the aggregate document of every service whose tools changed since the last search. */
  private refreshServices(): void {
    for (const serviceId of this.dirtyServices) {
      const slot = this.services.slotOf(serviceId);
      if (slot === undefined) continue;
      const service = this.services.items[slot] as IndexedService;
      this.serviceIndex.remove(slot, service.terms);
      service.terms = [];
      if (service.toolSlots.size === 0) {
        this.services.delete(serviceId);
        continue;
      }
      const docs = [...service.toolSlots].map((s) => (this.tools.items[s] as IndexedTool).doc);
      const fields = [
        terms(service.latest.serviceName),
        terms(service.latest.serviceDescription),
        docs.flatMap((d) => terms(`${d.name} ${d.description}`)),
      ];
      service.terms = this.serviceIndex.add(slot, fields);
    }
    this.dirtyServices.clear();
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

/**
 * Fielded BM25 over owners (tools, or services) numbered by slot. Postings keep raw term frequencies
 * per field; scoring reads a compiled form of each term's postings (slots and the BM25F pseudo
 * frequency, length-normalised with the current averages), rebuilt lazily after the index changes, so
 * a search over 10,000 tools is a loop over typed arrays.
 */
class FieldIndex {
  /** Term -> slot -> frequency per field. */
  private readonly postings = new Map<string, Map<number, Float64Array>>();
  private readonly compiled = new Map<string, { generation: number; slots: Int32Array; tf: Float64Array; idf: number }>();
  private readonly lengths: (Float64Array | undefined)[] = [];
  private readonly totals: Float64Array;
  private count = 0;
  private generation = 0;

  constructor(
    private readonly fieldWeights: number[],
    private readonly fieldB: number[],
    private readonly k1: number,
  ) {
    this.totals = new Float64Array(fieldWeights.length);
  }

  /** Indexes one owner's fields (already analysed); returns its distinct terms, to remove it later. */
  add(slot: number, fields: string[][]): string[] {
    const perTerm = new Map<string, Float64Array>();
    fields.forEach((fieldTerms, f) => {
      for (const t of fieldTerms) {
        let tf = perTerm.get(t);
        if (!tf) {
          tf = new Float64Array(fields.length);
          perTerm.set(t, tf);
        }
        (tf[f] as number)++;
      }
    });
    for (const [t, tf] of perTerm) {
      let holders = this.postings.get(t);
      if (!holders) {
        holders = new Map();
        this.postings.set(t, holders);
      }
      holders.set(slot, tf);
    }
    const lengths = Float64Array.from(fields, (f) => f.length);
    this.lengths[slot] = lengths;
    for (let f = 0; f < lengths.length; f++) (this.totals[f] as number) += lengths[f] as number;
    this.count++;
    this.generation++;
    return [...perTerm.keys()];
  }

  remove(slot: number, terms: string[]): void {
    const lengths = this.lengths[slot];
    if (!lengths) return;
    for (const t of terms) {
      const holders = this.postings.get(t);
      if (!holders) continue;
      holders.delete(slot);
      if (holders.size === 0) {
        this.postings.delete(t);
        this.compiled.delete(t);
      }
    }
    for (let f = 0; f < lengths.length; f++) (this.totals[f] as number) -= lengths[f] as number;
    this.lengths[slot] = undefined;
    this.count--;
    this.generation++;
  }

  clear(): void {
    this.postings.clear();
    this.compiled.clear();
    this.lengths.length = 0;
    this.totals.fill(0);
    this.count = 0;
    this.generation++;
  }

  /** Adds sum over query terms of weight * idf * tf~ / (k1 + tf~) to every owner holding one. */
  score(weights: Map<string, number>, out: Accumulator): void {
    const k1 = this.k1;
    for (const [term, queryWeight] of weights) {
      const list = this.compile(term);
      if (!list) continue;
      const { slots, tf } = list;
      const factor = queryWeight * list.idf;
      for (let i = 0; i < slots.length; i++) {
        const x = tf[i] as number;
        out.add(slots[i] as number, (factor * x) / (k1 + x));
      }
    }
  }

  compileAll(): void {
    for (const term of this.postings.keys()) this.compile(term);
  }

  private compile(term: string) {
    const cached = this.compiled.get(term);
    if (cached && cached.generation === this.generation) return cached;
    const holders = this.postings.get(term);
    if (!holders) return undefined;
    const fields = this.fieldWeights.length;
    const averages = Array.from(this.totals, (total) => Math.max(total / Math.max(this.count, 1), 1e-9));
    const slots = new Int32Array(holders.size);
    const tf = new Float64Array(holders.size);
    let i = 0;
    holders.forEach((frequencies, slot) => {
      const lengths = this.lengths[slot] as Float64Array;
      let weighted = 0;
      for (let f = 0; f < fields; f++) {
        const n = frequencies[f] as number;
        if (n === 0) continue;
        const b = this.fieldB[f] as number;
        weighted += ((this.fieldWeights[f] as number) * n) / (1 - b + (b * (lengths[f] as number)) / (averages[f] as number));
      }
      slots[i] = slot;
      tf[i] = weighted;
      i++;
    });
    const idf = Math.log(1 + (this.count - holders.size + 0.5) / (holders.size + 0.5));
    const list = { generation: this.generation, slots, tf, idf };
    this.compiled.set(term, list);
    return list;
  }
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

/** Things numbered by small integers (reused after removal), so scores live in typed arrays. */
class Slots<T> {
  readonly items: (T | undefined)[] = [];
  private readonly byId = new Map<string, number>();
  private readonly freeSlots: number[] = [];

  get size(): number {
    return this.byId.size;
  }

  slotOf(id: string): number | undefined {
    return this.byId.get(id);
  }

  add(id: string, item: T): number {
    const slot = this.freeSlots.pop() ?? this.items.length;
    this.items[slot] = item;
    this.byId.set(id, slot);
    return slot;
  }

  delete(id: string): void {
    const slot = this.byId.get(id);
    if (slot === undefined) return;
    this.items[slot] = undefined;
    this.byId.delete(id);
    this.freeSlots.push(slot);
  }

  clear(): void {
    this.items.length = 0;
    this.byId.clear();
    this.freeSlots.length = 0;
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

/** Typed terms weigh 1 (or by their repeats, damped); related terms by expansionWeight. */
function queryWeights(typed: string[], p: RankingParameters): Map<string, number> {
  const weights = new Map<string, number>();
  for (const t of typed) weights.set(t, (weights.get(t) ?? 0) + 1);
  for (const [t, n] of weights) weights.set(t, p.repeatedTerms === "log" ? 1 + Math.log(n) : 1);
  if (p.expansionWeight > 0) {
    for (const [t, w] of relatedTerms(typed, p.phraseExpansionBoost)) if (!weights.has(t)) weights.set(t, p.expansionWeight * w);
  }
  return weights;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}
