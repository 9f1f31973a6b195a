/**
 * Fielded postings in typed arrays, for BM25F over 100,000 tools in a few hundred megabytes.
 *
 * Owners (tools, or services) are numbered by slot and terms by id (the engine's vocabulary). The bulk
 * of the postings sits in one compressed-row layout built at once: per term a range of owner slots, a
 * byte of raw frequency per field (saturating at 255: BM25 has long saturated by then), and the BM25F
 * pseudo-frequency compiled from them. A JavaScript Map of small arrays per term, as a plain inverted
 * index keeps, costs about a hundred bytes a posting; this costs 4 + fields + 4 bytes, with no object
 * per term, which is what lets the vocabulary hold every adjacent word pair.
 *
 * Changes after the build do not rewrite it: a removed owner is marked dead (its postings are skipped)
 * and an added one goes to a log, indexed by term, scored from its raw frequencies; slots are never
 * reused before the next rebuild, so a dead slot's old postings cannot be mistaken for a new owner's.
 * When the log or the dead grow past a small share of the whole, `maintain` merges them into a new
 * layout (a copy of arrays, no text analysis).
 *
 * Compiled pseudo-frequencies use the field-length averages of their compile; they are recompiled,
 * term by term as searches need them, only once the averages have moved by more than 1% (a single
 * upsert does not invalidate a 100,000-tool index; BM25 does not notice a 1% shift).
 */

/** FieldPostings' own fields as data (opaque outside this file: only `restore` reads it). */
export type FieldPostingsState = { readonly __state: "FieldPostings" };
/** PairTable's fields as data. */
export type PairTableState = { readonly __state: "PairTable" };

type Growable = Uint8Array | Uint32Array | Float32Array | Float64Array;

function grow<T extends Growable>(array: T, need: number): T {
  if (need <= array.length) return array;
  const next = new (array.constructor as new (n: number) => T)(Math.max(need, array.length * 2, 64));
  next.set(array);
  return next;
}

export class FieldPostings {
  readonly fields: number;
  /** Owners that are indexed and not removed. */
  count = 0;
  private readonly totals: Float64Array;
  private alive = new Uint8Array(0);
  private lengths = new Uint32Array(0);

  // The built layout: term t's postings are [offsets[t], offsets[t + 1]).
  private baseTerms = 0;
  private offsets = new Uint32Array(1);
  private slots = new Uint32Array(0);
  private freqs = new Uint8Array(0);
  private weights = new Float32Array(0);
  private compiledAt = new Uint32Array(0);

  // Postings added since the build, in arrival order, with their positions by term.
  private logLength = 0;
  private logTerm = new Uint32Array(0);
  private logSlot = new Uint32Array(0);
  private logFreqs = new Uint8Array(0);
  private readonly logByTerm = new Map<number, number[]>();
  private deadSinceBuild = 0;

  private generation = 1;
  private readonly averages: Float64Array;

  // Scratch per-term answer of `collect`.
  hitSlots = new Uint32Array(256);
  hitTf = new Float64Array(256);
  /** Sum of the raw frequencies of the first `rawFields` fields of each hit. */
  hitRaw = new Float64Array(256);

  // Scratch of `add`: the position of a term in the owner being added.
  private positionOf = new Int32Array(0);

  constructor(
    private readonly fieldWeights: readonly number[],
    private readonly fieldB: readonly number[],
    private readonly rawFields = 0,
  ) {
    this.fields = fieldWeights.length;
    this.totals = new Float64Array(this.fields);
    this.averages = new Float64Array(this.fields).fill(1);
  }

  /** Number of postings held (live or dead), for the memory report and the merge rule. */
  get size(): number {
    return this.slots.length + this.logLength;
  }

  /** A field's length (in terms) of an owner. */
  fieldLength(slot: number, field: number): number {
    return this.lengths[slot * this.fields + field] ?? 0;
  }

  isAlive(slot: number): boolean {
    return this.alive[slot] === 1;
  }

  /** Indexes one owner: term ids per field. `bulk` leaves the log unindexed (a rebuild merges it at once). */
  add(slot: number, fieldTerms: readonly (readonly number[])[], bulk = false): void {
    const F = this.fields;
    let total = 0;
    let maxTerm = -1;
    for (const list of fieldTerms) {
      total += list.length;
      for (const t of list) if (t > maxTerm) maxTerm = t;
    }
    if (maxTerm >= this.positionOf.length) {
      const next = new Int32Array(Math.max(maxTerm + 1, this.positionOf.length * 2, 1024)).fill(-1);
      next.set(this.positionOf);
      this.positionOf = next;
    }
    // Distinct terms go straight to the end of the log; repeats raise their frequencies there.
    this.logTerm = grow(this.logTerm, this.logLength + total);
    this.logSlot = grow(this.logSlot, this.logLength + total);
    this.logFreqs = grow(this.logFreqs, (this.logLength + total) * F);
    const start = this.logLength;
    const positionOf = this.positionOf;
    const freqs = this.logFreqs;
    for (let f = 0; f < F; f++) {
      const list = fieldTerms[f] as readonly number[];
      for (let k = 0; k < list.length; k++) {
        const t = list[k] as number;
        let at = positionOf[t] as number;
        if (at < 0) {
          at = this.logLength++;
          positionOf[t] = at;
          this.logTerm[at] = t;
          this.logSlot[at] = slot;
          freqs.fill(0, at * F, at * F + F);
        }
        const i = at * F + f;
        if ((freqs[i] as number) < 255) freqs[i] = (freqs[i] as number) + 1;
      }
    }
    for (let at = start; at < this.logLength; at++) {
      const t = this.logTerm[at] as number;
      positionOf[t] = -1;
      if (!bulk) {
        const list = this.logByTerm.get(t);
        if (list) list.push(at);
        else this.logByTerm.set(t, [at]);
      }
    }
    this.alive = grow(this.alive, slot + 1);
    this.lengths = grow(this.lengths, (slot + 1) * F);
    this.alive[slot] = 1;
    for (let f = 0; f < F; f++) {
      const n = fieldTerms[f]?.length ?? 0;
      this.lengths[slot * F + f] = n;
      (this.totals[f] as number) += n;
    }
    this.count++;
  }

  remove(slot: number): void {
    if (this.alive[slot] !== 1) return;
    this.alive[slot] = 0;
    for (let f = 0; f < this.fields; f++) (this.totals[f] as number) -= this.lengths[slot * this.fields + f] as number;
    this.count--;
    this.deadSinceBuild++;
  }

  clear(): void {
    this.count = 0;
    this.totals.fill(0);
    this.alive = new Uint8Array(0);
    this.lengths = new Uint32Array(0);
    this.baseTerms = 0;
    this.offsets = new Uint32Array(1);
    this.slots = new Uint32Array(0);
    this.freqs = new Uint8Array(0);
    this.weights = new Float32Array(0);
    this.compiledAt = new Uint32Array(0);
    this.logLength = 0;
    this.logTerm = new Uint32Array(0);
    this.logSlot = new Uint32Array(0);
    this.logFreqs = new Uint8Array(0);
    this.logByTerm.clear();
    this.deadSinceBuild = 0;
    this.generation++;
  }

  /**
   * Before a search: merges the log and drops the dead once they pass a share of the whole, and moves
   * the averages when they have drifted. `force` (after a rebuild or a bulk catch-up) merges always and
   * sets the averages exactly, so the result is laid out as a fresh build of the same owners would be.
   */
  maintain(force = false): void {
    const live = Math.max(this.count, 1);
    if (
      force ||
      this.logLength > Math.max(20_000, this.slots.length / 20) ||
      (this.deadSinceBuild > 1_000 && this.deadSinceBuild > live / 10)
    ) {
      this.merge();
    }
    let drifted = false;
    for (let f = 0; f < this.fields; f++) {
      const average = Math.max((this.totals[f] as number) / live, 1e-9);
      const off = Math.abs(average - (this.averages[f] as number));
      if (off > (force ? 0 : 0.01 * (this.averages[f] as number))) drifted = true;
    }
    if (drifted) {
      for (let f = 0; f < this.fields; f++) this.averages[f] = Math.max((this.totals[f] as number) / live, 1e-9);
      this.generation++;
    }
  }

  /** How many owners hold `term`, counting removed ones not merged away yet (cheap: for ordering terms). */
  df(term: number): number {
    const base = term < this.baseTerms ? (this.offsets[term + 1] as number) - (this.offsets[term] as number) : 0;
    return base + (this.logByTerm.get(term)?.length ?? 0);
  }

  /** Fills the hit arrays with the live owners holding `term` (and marked in `only`); returns how many. */
  collect(term: number, only?: Uint8Array): number {
    let n = 0;
    if (term < this.baseTerms) {
      const from = this.offsets[term] as number;
      const to = this.offsets[term + 1] as number;
      if (this.compiledAt[term] !== this.generation) {
        for (let i = from; i < to; i++) this.weights[i] = this.pseudoFrequency(this.slots[i] as number, this.freqs, i);
        this.compiledAt[term] = this.generation;
      }
      this.ensureHits(to - from);
      for (let i = from; i < to; i++) {
        const slot = this.slots[i] as number;
        if (this.alive[slot] !== 1 || (only && only[slot] !== 1)) continue;
        this.hitSlots[n] = slot;
        this.hitTf[n] = this.weights[i] as number;
        if (this.rawFields > 0) this.hitRaw[n] = this.rawSum(this.freqs, i);
        n++;
      }
    }
    const logged = this.logByTerm.get(term);
    if (logged) {
      this.ensureHits(n + logged.length);
      for (const at of logged) {
        const slot = this.logSlot[at] as number;
        if (this.alive[slot] !== 1 || (only && only[slot] !== 1)) continue;
        this.hitSlots[n] = slot;
        this.hitTf[n] = this.pseudoFrequency(slot, this.logFreqs, at);
        if (this.rawFields > 0) this.hitRaw[n] = this.rawSum(this.logFreqs, at);
        n++;
      }
    }
    return n;
  }

  /**
   * The postings as plain data (typed arrays and a Map), without the scratch buffers, laid out first so
   * the log and the dead do not travel: for a snapshot (see EmbeddedEngine.snapshot). It shares this
   * object's arrays, so it must be serialized before the next change.
   */
  snapshot(): FieldPostingsState {
    if (this.logLength > 0 || this.deadSinceBuild > 0) this.merge();
    const { hitSlots: _slots, hitTf: _tf, hitRaw: _raw, positionOf: _position, ...state } = this;
    return state as unknown as FieldPostingsState;
  }

  /** Postings from `snapshot`'s data. */
  static restore(state: FieldPostingsState): FieldPostings {
    const postings = Object.create(FieldPostings.prototype) as FieldPostings;
    Object.assign(postings, state, {
      hitSlots: new Uint32Array(256),
      hitTf: new Float64Array(256),
      hitRaw: new Float64Array(256),
      positionOf: new Int32Array(0),
    });
    return postings;
  }

  /** Bytes held in typed arrays (the vocabulary and the engine's per-tool records are apart). */
  bytes(): number {
    return [
      this.alive,
      this.lengths,
      this.offsets,
      this.slots,
      this.freqs,
      this.weights,
      this.compiledAt,
      this.logTerm,
      this.logSlot,
      this.logFreqs,
    ].reduce((sum, a) => sum + a.byteLength, 0);
  }

  /** sum over fields of weight * frequency / (1 - b + b * length / average length). */
  private pseudoFrequency(slot: number, freqs: Uint8Array, posting: number): number {
    const F = this.fields;
    let weighted = 0;
    for (let f = 0; f < F; f++) {
      const n = freqs[posting * F + f] as number;
      if (n === 0) continue;
      const b = this.fieldB[f] as number;
      const norm = 1 - b + (b * (this.lengths[slot * F + f] as number)) / (this.averages[f] as number);
      weighted += ((this.fieldWeights[f] as number) * n) / norm;
    }
    return weighted;
  }

  private rawSum(freqs: Uint8Array, posting: number): number {
    let sum = 0;
    for (let f = 0; f < this.rawFields; f++) sum += freqs[posting * this.fields + f] as number;
    return sum;
  }

  private ensureHits(n: number): void {
    if (n <= this.hitSlots.length) return;
    const size = Math.max(n, this.hitSlots.length * 2);
    const slots = new Uint32Array(size);
    slots.set(this.hitSlots);
    this.hitSlots = slots;
    const tf = new Float64Array(size);
    tf.set(this.hitTf);
    this.hitTf = tf;
    const raw = new Float64Array(size);
    raw.set(this.hitRaw);
    this.hitRaw = raw;
  }

  /** Rebuilds the layout from the live postings of the layout and the log (a counting sort by term). */
  private merge(): void {
    const F = this.fields;
    let terms = this.baseTerms;
    for (let at = 0; at < this.logLength; at++) terms = Math.max(terms, (this.logTerm[at] as number) + 1);
    const counts = new Uint32Array(terms + 1);
    for (let t = 0; t < this.baseTerms; t++) {
      for (let i = this.offsets[t] as number; i < (this.offsets[t + 1] as number); i++) {
        if (this.alive[this.slots[i] as number] === 1) (counts[t + 1] as number)++;
      }
    }
    for (let at = 0; at < this.logLength; at++) {
      if (this.alive[this.logSlot[at] as number] === 1) (counts[(this.logTerm[at] as number) + 1] as number)++;
    }
    for (let t = 0; t < terms; t++) counts[t + 1] = (counts[t + 1] as number) + (counts[t] as number);
    const total = counts[terms] as number;
    const offsets = counts.slice();
    const slots = new Uint32Array(total);
    const freqs = new Uint8Array(total * F);
    const fill = counts; // the next free position of each term
    for (let t = 0; t < this.baseTerms; t++) {
      for (let i = this.offsets[t] as number; i < (this.offsets[t + 1] as number); i++) {
        const slot = this.slots[i] as number;
        if (this.alive[slot] !== 1) continue;
        const to = (fill[t] as number)++;
        slots[to] = slot;
        freqs.set(this.freqs.subarray(i * F, i * F + F), to * F);
      }
    }
    for (let at = 0; at < this.logLength; at++) {
      const slot = this.logSlot[at] as number;
      if (this.alive[slot] !== 1) continue;
      const t = this.logTerm[at] as number;
      const to = (fill[t] as number)++;
      slots[to] = slot;
      freqs.set(this.logFreqs.subarray(at * F, at * F + F), to * F);
    }
    this.baseTerms = terms;
    this.offsets = offsets;
    this.slots = slots;
    this.freqs = freqs;
    this.weights = new Float32Array(total);
    this.compiledAt = new Uint32Array(terms);
    this.logLength = 0;
    this.logTerm = new Uint32Array(0);
    this.logSlot = new Uint32Array(0);
    this.logFreqs = new Uint8Array(0);
    this.logByTerm.clear();
    this.deadSinceBuild = 0;
    this.generation++;
  }
}

/**
 * Ordered pairs of term ids to ids, in open addressing over typed arrays: the vocabulary holds a few
 * hundred thousand word pairs at 100,000 tools, which as a Map with number keys (beyond the small
 * integers, so each key a heap number) cost about three times the memory and most of a rebuild's
 * lookups.
 */
export class PairTable {
  private mask = 1023;
  private first = new Int32Array(1024).fill(-1);
  private second = new Int32Array(1024);
  private ids = new Int32Array(1024);
  size = 0;

  get(a: number, b: number): number | undefined {
    let i = hashPair(a, b) & this.mask;
    for (;;) {
      const f = this.first[i] as number;
      if (f === -1) return undefined;
      if (f === a && this.second[i] === b) return this.ids[i] as number;
      i = (i + 1) & this.mask;
    }
  }

  set(a: number, b: number, id: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.resize();
    let i = hashPair(a, b) & this.mask;
    for (;;) {
      const f = this.first[i] as number;
      if (f === -1) break;
      if (f === a && this.second[i] === b) {
        this.ids[i] = id;
        return;
      }
      i = (i + 1) & this.mask;
    }
    this.first[i] = a;
    this.second[i] = b;
    this.ids[i] = id;
    this.size++;
  }

  clear(): void {
    this.mask = 1023;
    this.first = new Int32Array(1024).fill(-1);
    this.second = new Int32Array(1024);
    this.ids = new Int32Array(1024);
    this.size = 0;
  }

  bytes(): number {
    return this.first.byteLength + this.second.byteLength + this.ids.byteLength;
  }

  /** The table as plain data (its arrays, shared: serialize it before the next change). */
  snapshot(): PairTableState {
    return { ...this } as unknown as PairTableState;
  }

  static restore(state: PairTableState): PairTable {
    return Object.assign(Object.create(PairTable.prototype) as PairTable, state);
  }

  private resize(): void {
    const { first, second, ids } = this;
    const capacity = (this.mask + 1) * 2;
    this.mask = capacity - 1;
    this.first = new Int32Array(capacity).fill(-1);
    this.second = new Int32Array(capacity);
    this.ids = new Int32Array(capacity);
    this.size = 0;
    for (let i = 0; i < first.length; i++) {
      if (first[i] !== -1) this.set(first[i] as number, second[i] as number, ids[i] as number);
    }
  }
}

function hashPair(a: number, b: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77);
  h ^= h >>> 15;
  return h >>> 0;
}
