/**
 * Reading a page (extract.ts: cheerio and parse5) is CPU in proportion to its size: a 3.3 MB page took
 * 1.7 s, and on the event loop of the default one-process layout every role waited that long, the
 * gateway included. Pages are read here on a bounded pool of worker threads (piscina, as the catalog's
 * import pool): at most `threads` pages at once and at most `queue` more waiting. A page beyond that is
 * not read (the crawl skips it, saying why) rather than piling page bodies of up to 5 MiB into memory;
 * crawls are bounded themselves (CONTENT_CRAWL_CONCURRENCY crawls, a few pages each at once), so the
 * default queue is never full in practice. Each thread's heap is capped: a page that would need more
 * fails alone instead of taking the process down. `threads: 0` reads on the event loop (an escape hatch).
 *
 * The thread runs extract-worker.js from dist/; from TypeScript source (tests through the
 * `@toolport/source` condition) it runs extract-worker.ts through tsx, as import-pool.ts does.
 */
import { Piscina } from "piscina";
import { extractPage, type PageFacts } from "./extract.js";
import { type ExtractTask, type PageFactsWire, toPageFacts } from "./extract-worker.js";

export interface ExtractPoolOptions {
  /** Worker threads reading pages at once; 0 reads on the event loop (no pool). */
  threads: number;
  /** Pages that may wait for a thread; one more is refused (ExtractBusy). */
  queue: number;
  /** Heap limit of each thread (old generation), in MiB. */
  heapMb: number;
  /** How long an idle thread beyond the first lives. */
  idleMs?: number;
}

/** Every thread busy and the queue full: the page is not read. */
export class ExtractBusy extends Error {
  override name = "ExtractBusy";
}

export class ExtractPool {
  /** Null: no threads; undefined: not started yet (the first page starts it). */
  private pool: Piscina<ExtractTask, PageFactsWire> | null | undefined;
  private pending = 0;
  private closed = false;
  /** The thread that read the last page (tests: not the caller's own). */
  lastThreadId: number | undefined;

  constructor(private readonly options: ExtractPoolOptions) {
    if (options.threads <= 0) this.pool = null;
  }

  /** Pages being read or waiting now. */
  get load(): number {
    return this.pending;
  }

  private threads(): Piscina<ExtractTask, PageFactsWire> | null {
    if (this.pool !== undefined) return this.pool;
    const fromSource = import.meta.url.endsWith(".ts");
    this.pool = new Piscina({
      filename: new URL(fromSource ? "./extract-worker.ts" : "./extract-worker.js", import.meta.url).href,
      execArgv: fromSource ? ["--conditions=@toolport/source", "--import", "tsx"] : [],
      minThreads: 1,
      maxThreads: this.options.threads,
      // Our own count refuses first (see extract); this is the library's backstop.
      maxQueue: Math.max(this.options.queue, 1),
      idleTimeout: this.options.idleMs ?? 30_000,
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
    });
    return this.pool;
  }

  /** The page's facts, read on a thread (or here with threads: 0); rejects with ExtractBusy when full. */
  async extract(body: Buffer, url: URL, charset?: string, signal?: AbortSignal): Promise<PageFacts> {
    const pool = this.closed ? undefined : this.threads();
    if (pool === null) return extractPage(body, url, charset);
    if (pool === undefined || this.pending >= this.options.threads + this.options.queue) {
      throw new ExtractBusy(
        this.closed
          ? "the content service is shutting down"
          : `${this.pending} pages are being read or waiting, the most at once`,
      );
    }
    this.pending++;
    try {
      // A copy the thread owns (transferred, not cloned again): the body may be a slice of a larger buffer.
      const bytes = new Uint8Array(body);
      const wire = await pool.run({ body: bytes, url: url.href, charset }, { transferList: [bytes.buffer], signal });
      this.lastThreadId = wire.threadId;
      return toPageFacts(wire);
    } finally {
      this.pending--;
    }
  }

  /** Lets pages being read finish, then ends the threads. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.close({ force: false });
  }
}
