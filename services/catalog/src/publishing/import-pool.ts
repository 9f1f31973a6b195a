/**
 * Importing an OpenAPI document (parse, Swagger 2.0 conversion, validation, tool drafts) is seconds of
 * CPU for a large one (Box's 1.7 MB: 3.5 s), which on the event loop made every other caller of the
 * process wait that long (issue 30). It runs here on a bounded pool of worker threads (piscina):
 * at most `threads` documents at once, at most `queue` more waiting; a publish beyond that is refused
 * at once with 503 `import_busy` and `Retry-After` (the server's own capacity, not a limit of the
 * caller's: 429 is for those), instead of piling documents of up to 25 MiB each into memory. Each
 * thread's heap is capped, so a document that would need more fails alone (400 `document_too_large`)
 * instead of taking the process down with it. `threads: 0` imports on the event loop as before (the
 * benchmark's comparison; an escape hatch).
 *
 * The thread runs import-worker.js from dist/; when the catalog itself runs from TypeScript source (the
 * tests, through the `@toolport/source` condition), it runs import-worker.ts through tsx with the same
 * condition, so a test exercises the code it reads.
 */
import { Code, DomainError, invalidArgument, unavailable } from "@toolport/kit/errors";
import { importSeconds, importsPending } from "@toolport/kit/metrics";
import { Piscina } from "piscina";
import type { ImportOutcome, ImportTask, WarmTask } from "./import-worker.js";
import type { ImportedApi } from "./openapi.js";

export interface ImportPoolOptions {
  /** Worker threads importing at once; 0 imports on the event loop (no pool). */
  threads: number;
  /** Documents that may wait for a thread; one more is refused with import_busy. */
  queue: number;
  /** Heap limit of each thread (old generation), in MiB. */
  heapMb: number;
  /** How long an idle thread beyond the first lives before it exits (its memory returned). */
  idleMs?: number;
  /** Most schema JSON one document's tools may store, in MiB (import-worker.ts storedSize). */
  maxStoredMb?: number;
}

/** How long a refused publisher is told to wait (Retry-After). */
const BUSY_RETRY_SECONDS = 5;

export class ImportPool {
  /** Null: no threads (imports on the event loop); undefined: not started yet (see warm). */
  private pool: Piscina<ImportTask | WarmTask, ImportOutcome | { warmed: number }> | null | undefined;
  /** The first thread's answer to warm(), once its modules are loaded (see close). */
  private warming: Promise<void> | undefined;
  /** Documents accepted and not yet answered: running plus waiting. */
  private pending = 0;
  private closed = false;
  /** The thread that imported the last document or answered the warm-up (tests: not the main thread's 0). */
  lastThreadId: number | undefined;

  constructor(private readonly options: ImportPoolOptions) {
    if (options.threads <= 0) this.pool = null;
  }

  /**
   * Starts the first thread now rather than with the first document, and has it import a tiny document
   * of each version (import-worker.ts warmUp). The catalog calls it once its search index is built: the
   * thread's start (loading the parser, the converter and the validator, compiling the OpenAPI schemas)
   * is about a second of CPU that would otherwise compete with the rebuild or wait in a first publish.
   */
  warm(): void {
    if (this.closed || this.warming) return;
    const pool = this.threads();
    if (!pool) return;
    this.warming = pool.run({ warm: true }).then(
      (answer) => {
        if ("warmed" in answer) this.lastThreadId = answer.warmed;
      },
      () => undefined,
    );
  }

  private threads(): Piscina<ImportTask | WarmTask, ImportOutcome | { warmed: number }> | null {
    if (this.pool !== undefined) return this.pool;
    const fromSource = import.meta.url.endsWith(".ts");
    this.pool = new Piscina({
      filename: new URL(fromSource ? "./import-worker.ts" : "./import-worker.js", import.meta.url).href,
      execArgv: fromSource ? ["--conditions=@toolport/source", "--import", "tsx"] : [],
      // The first thread stays once started (see warm); others leave after idleMs.
      minThreads: 1,
      maxThreads: this.options.threads,
      // Our own count refuses first (accepted()); this is only the library's backstop.
      maxQueue: Math.max(this.options.queue, 1),
      idleTimeout: this.options.idleMs ?? 30_000,
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
    });
    return this.pool;
  }

  /** Documents running or waiting now. */
  get load(): number {
    return this.pending;
  }

  /** Most documents accepted at once: the threads' plus the queue's. */
  get capacity(): number {
    return this.pool === null ? Number.POSITIVE_INFINITY : this.options.threads + this.options.queue;
  }

  /** The document's service fields and tool drafts, or the refusal import-worker.ts names. */
  async import(given: ImportTask, signal?: AbortSignal): Promise<ImportedApi> {
    const task: ImportTask = { ...given, maxStoredMb: this.options.maxStoredMb };
    const started = performance.now();
    const pool = this.closed ? this.pool : this.threads();
    const where = pool === null ? "event_loop" : "worker";
    const observe = (outcome: "imported" | "refused" | "busy" | "failed" | "abandoned") =>
      importSeconds.observe({ where, outcome }, (performance.now() - started) / 1000);
    if (pool === null) {
      try {
        // Loaded here, not with the catalog: the threads load their own copy (see warm).
        const { importDocument } = await import("./import-worker.js");
        const api = await importDocument(task);
        observe("imported");
        return api;
      } catch (err) {
        observe(err instanceof DomainError ? "refused" : "failed");
        throw err;
      }
    }
    if (pool === undefined || this.closed || this.pending >= this.capacity) {
      observe("busy");
      throw unavailable(
        "import_busy",
        this.closed
          ? "the catalog is shutting down; publish again in a few seconds"
          : `${this.pending} OpenAPI documents are being imported or waiting, the most this catalog takes at once; publish again in a few seconds`,
        { details: { field: "api", retry_after_seconds: BUSY_RETRY_SECONDS } },
      );
    }
    this.pending++;
    importsPending.inc();
    try {
      // A caller that stops waiting (its deadline passed) takes its document out of the queue, or
      // stops the thread importing it (piscina starts another): nobody would read the answer.
      const outcome = (await pool.run(task, { signal }).catch((err: unknown) => {
        if (signal?.aborted) throw abandoned(err);
        throw threadFailure(err, this.options.heapMb);
      })) as ImportOutcome;
      if (outcome.ok) {
        observe("imported");
        this.lastThreadId = outcome.threadId;
        return outcome.api;
      }
      const r = outcome.refusal;
      throw new DomainError(r.code as Code, r.reason, r.message, { details: r.details, detail: r.detail });
    } catch (err) {
      observe(err instanceof DomainError ? (err.reason === "import_abandoned" ? "abandoned" : "refused") : "failed");
      throw err;
    } finally {
      this.pending--;
      importsPending.dec();
    }
  }

  /**
   * Lets running imports finish (their callers get answers), then ends the threads. A thread still
   * loading its modules is let finish first: a thread ended inside Node's require of an ES module
   * aborted the whole process (an assertion in module_wrap.cc, Node 20.20; the image test's SIGTERM
   * landed during the warm-up), so the process exited on a signal instead of draining.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.warming;
    await this.pool?.close({ force: false });
  }
}

/** The caller stopped waiting: the answer goes nowhere, but says what happened (logs). */
function abandoned(err: unknown): DomainError {
  return new DomainError(Code.DeadlineExceeded, "import_abandoned", "the import was stopped: its caller stopped waiting", {
    details: { field: "api" },
    cause: err,
  });
}

/** What a thread that died answers: out of memory is the document's size; anything else stays internal. */
function threadFailure(err: unknown, heapMb: number): unknown {
  if ((err as { code?: unknown })?.code === "ERR_WORKER_OUT_OF_MEMORY") {
    return invalidArgument(
      "document_too_large",
      `importing this OpenAPI document needs more than the ${heapMb} MiB of memory an import may use`,
      { details: { field: "api", limit_mb: heapMb }, cause: err },
    );
  }
  return err;
}
