/**
 * The crawl's HTTP client: GET requests through the guarded outbound Agent (@toolport/kit/outbound),
 * whose connector dials only addresses the AddressPolicy accepts, checked on the address dialled. On top
 * of it this adds what a crawl of a stranger's site needs:
 * - one deadline per request for the whole answer (redirect hops, headers and body): a site that hangs
 *   costs at most `timeoutMs`;
 * - one byte budget for every body the crawl reads. Bodies are read as streams and a response is
 *   abandoned (its connection closed) on the chunk that would overrun the budget, so a 50 MiB page costs
 *   the budget, not 50 MiB; a declared Content-Length larger than what is left is refused unread. Bytes
 *   are counted as they arrive (we ask for `accept-encoding: identity`, so that is the body's size);
 * - redirects followed here, not by undici: at most 5 hops, each one vetted by `follow` (same registrable
 *   domain, robots.txt) before it is dialled through the same Agent;
 * - bodies of answers the caller does not want (an error status, a page that is not HTML) are not read.
 */
import { findRefusal } from "@toolport/kit/outbound";
import { type Dispatcher, request } from "undici";

export type FetchFailureKind =
  /** The outbound guard refused the address (private, loopback, metadata...). */
  | "refused"
  /** No complete answer within the per-request deadline. */
  | "timeout"
  /** Connection refused or reset, DNS failure, TLS failure... */
  | "network"
  /** A redirect the crawl does not follow: another site, another scheme, a loop or more than 5 hops. */
  | "redirect"
  /** A redirect to a URL robots.txt disallows. */
  | "robots"
  /** The crawl's byte budget does not cover this body. */
  | "budget"
  /** The body is larger than this request's own cap. */
  | "too_large";

export class FetchFailure extends Error {
  override name = "FetchFailure";
  constructor(
    readonly kind: FetchFailureKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface FetchOptions {
  /** The Accept header. */
  accept: string;
  /** Whether to read the body of an answer with this status and media type (lower-case, no parameters). */
  want: (status: number, mediaType: string) => boolean;
  /** A cap for this body alone, on top of the crawl's budget. */
  maxBytes?: number;
  /** Past `maxBytes`: keep the first `maxBytes` ("truncate") or fail with `too_large` ("fail", the default). */
  overflow?: "truncate" | "fail";
  /** Whether redirect targets are checked against robots.txt (false for robots.txt itself). Default true. */
  checkRobots?: boolean;
}

export interface Fetched {
  /** The URL that answered, after redirects. */
  url: URL;
  status: number;
  /** The media type, lower-case without parameters; "" when the answer had no Content-Type. */
  mediaType: string;
  /** The charset parameter of Content-Type, if any. */
  charset: string | undefined;
  /** The body, empty when `want` declined it. */
  body: Buffer;
  /** Whether `body` was read at all. */
  read: boolean;
  /** Whether the body was cut at `maxBytes` (overflow "truncate"). */
  truncated: boolean;
}

export interface FetcherOptions {
  dispatcher: Dispatcher;
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  /** Cancels every request: they reject with the signal's reason. */
  signal?: AbortSignal;
  /** Vets a redirect target before it is dialled: a failure to refuse it, or undefined to follow it. */
  follow: (url: URL, checkRobots: boolean) => Promise<FetchFailure | undefined>;
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class SiteFetcher {
  private used = 0;
  private budgetHit = false;

  constructor(private readonly options: FetcherOptions) {}

  /** Bytes of the budget still unspent. */
  get remaining(): number {
    return this.options.maxBytes - this.used;
  }

  /** True once a body overran the budget: nothing more can be read. */
  get exhausted(): boolean {
    return this.remaining <= 0;
  }

  /** True once the budget refused a body (overrun, or a declared length larger than what was left). */
  get budgetReached(): boolean {
    return this.budgetHit;
  }

  /** GETs `url`, following vetted redirects. Rejects with a FetchFailure, or the crawl signal's reason. */
  async get(url: URL, options: FetchOptions): Promise<Fetched> {
    const { signal: crawlSignal, timeoutMs } = this.options;
    crawlSignal?.throwIfAborted();
    if (this.exhausted) throw this.overBudget("the crawl's byte budget is spent");
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = crawlSignal ? AbortSignal.any([crawlSignal, deadline]) : deadline;
    try {
      return await this.fetchFollowing(url, options, signal);
    } catch (err) {
      if (crawlSignal?.aborted) throw crawlSignal.reason;
      if (err instanceof FetchFailure) throw err;
      // The deadline fired while dialling, waiting for headers or reading the body.
      if (deadline.aborted) throw new FetchFailure("timeout", `no complete answer within ${timeoutMs} ms`, { cause: err });
      const refusal = findRefusal(err);
      if (refusal) throw new FetchFailure("refused", refusal.message, { cause: err });
      throw new FetchFailure("network", describeNetworkError(err), { cause: err });
    }
  }

  private async fetchFollowing(start: URL, options: FetchOptions, signal: AbortSignal): Promise<Fetched> {
    let url = start;
    for (let hop = 0; ; hop++) {
      const res = await request(url, {
        method: "GET",
        dispatcher: this.options.dispatcher,
        headers: { "user-agent": this.options.userAgent, accept: options.accept, "accept-encoding": "identity" },
        signal,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      const location = headerValue(res.headers.location);
      if (REDIRECTS.has(res.statusCode) && location !== undefined) {
        discard(res.body);
        if (hop >= MAX_REDIRECTS) throw new FetchFailure("redirect", `more than ${MAX_REDIRECTS} redirects`);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new FetchFailure("redirect", `a redirect to an invalid URL (${location.slice(0, 200)})`);
        }
        next.hash = "";
        const refusal = await this.options.follow(next, options.checkRobots !== false);
        if (refusal) throw refusal;
        url = next;
        continue;
      }
      const [mediaType = "", ...params] = (headerValue(res.headers["content-type"]) ?? "").split(";");
      const charset = params
        .map((p) => p.trim().split("="))
        .find(([k]) => k?.trim().toLowerCase() === "charset")?.[1]
        ?.trim()
        .replace(/^"|"$/g, "");
      const answer = { url, status: res.statusCode, mediaType: mediaType.trim().toLowerCase(), charset };
      if (!options.want(answer.status, answer.mediaType)) {
        discard(res.body);
        return { ...answer, body: Buffer.alloc(0), read: false, truncated: false };
      }
      const { body, truncated } = await this.readBody(res, options, signal);
      return { ...answer, body, read: true, truncated };
    }
  }

  /** Reads a body chunk by chunk, charging the budget, and abandons it as soon as a limit is crossed. */
  private async readBody(
    res: Dispatcher.ResponseData,
    options: FetchOptions,
    signal: AbortSignal,
  ): Promise<{ body: Buffer; truncated: boolean }> {
    const cap = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const truncate = options.overflow === "truncate";
    const declared = Number(headerValue(res.headers["content-length"]));
    if (Number.isFinite(declared)) {
      if (declared > cap && !truncate) {
        discard(res.body);
        throw new FetchFailure("too_large", `declares ${declared} bytes, more than the ${cap} accepted here`);
      }
      if (Math.min(declared, cap) > this.remaining) {
        discard(res.body);
        this.budgetHit = true;
        throw new FetchFailure("budget", `declares ${declared} bytes, more than the ${this.remaining} left in the byte budget`);
      }
    }
    // undici ends the body on abort too; this makes sure a stalled body is let go at the deadline.
    const onAbort = () => res.body.destroy(new Error("aborted at the deadline"));
    signal.addEventListener("abort", onAbort, { once: true });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        const keep = Math.min(buf.length, cap - size);
        if (keep > this.remaining) {
          // Leaving the loop destroys the body: the connection is closed, nothing more is read.
          this.used = this.options.maxBytes;
          this.budgetHit = true;
          throw this.overBudget(`the byte budget (${this.options.maxBytes} bytes) ran out while reading`);
        }
        this.used += keep;
        size += keep;
        chunks.push(keep === buf.length ? buf : buf.subarray(0, keep));
        if (keep < buf.length) {
          if (truncate) return { body: Buffer.concat(chunks), truncated: true };
          throw new FetchFailure("too_large", `larger than the ${cap} bytes accepted here`);
        }
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    return { body: Buffer.concat(chunks), truncated: false };
  }

  private overBudget(message: string): FetchFailure {
    this.budgetHit = true;
    return new FetchFailure("budget", message);
  }
}

/**
 * Lets go of a body without reading it: the connection is closed. undici reports an unread body's
 * destruction as an "aborted" error event; nobody is reading it, so that event is expected and dropped.
 */
function discard(body: Dispatcher.ResponseData["body"]): void {
  body.on("error", () => undefined);
  body.destroy();
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A short, stable description of a connection-level failure (its code when it has one). */
function describeNetworkError(err: unknown): string {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return `${code}: ${(e as Error).message ?? "request failed"}`;
  }
  return err instanceof Error ? err.message : String(err);
}
