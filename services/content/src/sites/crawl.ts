/**
 * The site crawler behind site records (SERVICE-SPEC "Site record"): it reads a site the way a polite
 * bot does and returns the facts a record is made of. It runs off the request path (the content
 * service's job queue calls it); nothing here touches the database.
 *
 * How a crawl goes:
 * 1. robots.txt of the start URL's origin (robots.ts), then the start page. The start page failing is
 *    the crawl failing: CrawlError with the matching code.
 * 2. The well-known probes (discover.ts) at the start page's origin: OpenAPI, llms.txt, MCP.
 * 3. The other pages, breadth-first from the start page but component pages first (a link whose path or
 *    text says contact, about, services, docs, pricing, FAQ, terms or privacy), so a small page budget
 *    covers them. Up to 4 requests at a time, results taken in queue order, so the outcome does not
 *    depend on which answer arrives first. A page that fails is recorded in `skipped`; the crawl goes on.
 * 4. OpenAPI documents the pages link to, then the catalog services on this domain.
 *
 * Rules every request follows (fetch.ts): the guarded outbound Agent (public addresses only, unless the
 * operator's allow-list names the host); robots.txt of the origin for `ToolportBot` (else `*`); the
 * same registrable domain (other subdomains included), redirects too (followed here, at most 5);
 * `pageTimeoutMs` for a whole answer; one byte budget shared by robots.txt, probes and pages.
 *
 * Limits: `maxPages` counts page requests (HTML or not, failed or not: each costs a request); probes
 * and robots.txt are not pages. Links past the first 200 distinct same-site URLs are not followed. A
 * crawl therefore ends within about (robots.txt files + 1 + ceil(probes / 4) + ceil(maxPages / 4)
 * + linked OpenAPI documents) x pageTimeoutMs, even when every request hangs.
 */
import type { Outbound } from "@toolport/kit/outbound";
import { classifySite } from "./classify.js";
import { assembleComponents, type CrawledPage } from "./components.js";
import {
  isOpenApiLink,
  MCP_WELL_KNOWN_PATHS,
  OPENAPI_PATHS,
  type Probe,
  probeLlmsTxt,
  probeMcp,
  probeOpenApi,
} from "./discover.js";
import { extractPage, type PageFacts } from "./extract.js";
import { ExtractBusy } from "./extract-pool.js";
import { FetchFailure, SiteFetcher } from "./fetch.js";
import { type JsonLdNode, stringsOf, typesOf } from "./jsonld.js";
import { ROBOTS_AGENT, RobotsTxt } from "./robots.js";
import { crawlableLink, kindOfText, kindOfUrl, siteDomain } from "./urls.js";

/** The User-Agent of every crawl request; robots.txt groups address it as `ToolportBot`. */
export const CRAWLER_USER_AGENT = "ToolportBot/1.0 (+https://github.com/toolport/toolport)";

export interface CrawlLimits {
  /** Page requests at most, the start page included (robots.txt and probes are not pages). */
  maxPages: number;
  /** Body bytes at most, every response together: robots.txt, probes and pages. */
  maxBytes: number;
  /** Per request, for the whole answer: redirects, headers and body. */
  pageTimeoutMs: number;
}

export const DEFAULT_CRAWL_LIMITS: CrawlLimits = Object.freeze({
  maxPages: 25,
  maxBytes: 5 * 1024 * 1024,
  pageTimeoutMs: 10_000,
});

export interface CrawlDeps {
  /** The guarded outbound client; its `agent` dials every request, redirect hops included. */
  outbound: Outbound;
  limits?: Partial<CrawlLimits>;
  /**
   * Catalog services whose documentation URL or base URL is on this registrable domain (the caller
   * implements it with a catalog RPC). Called once, at the start, while the site is crawled. If it
   * rejects, crawlSite rejects with that error: the caller's dependency failed, the caller decides.
   */
  catalogServices?: (domain: string) => Promise<{ id: string; name: string }[]>;
  /** Cancels the whole crawl: crawlSite rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Reads a page's HTML (the content role passes its worker pool's, sites/extract-pool.ts, so a large page
   * is parsed off the event loop); absent, extract.ts reads it here. ExtractBusy from it skips the page.
   */
  extract?: (body: Buffer, url: URL, charset: string | undefined, signal?: AbortSignal) => Promise<PageFacts>;
}

export interface SiteComponents {
  contact: { emails: string[]; phones: string[]; address: string | null; page: string | null };
  about: { page: string | null; summary: string | null };
  services: { page: string | null; items: string[] };
  docs: { page: string | null };
  pricing: { page: string | null; plans: string[] };
  faq: { page: string | null; questions: string[] };
  legal: { terms: string | null; privacy: string | null };
  navigation: { label: string; url: string }[];
}

export type DiscoveredTool =
  | { type: "openapi"; url: string; title: string | null }
  | { type: "llms_txt"; url: string }
  | { type: "mcp"; url: string; name: string | null }
  | { type: "catalog_service"; service_id: string; name: string };

export type SkipReason = "robots" | "limit" | "error" | "not_html";

export interface SiteFacts {
  /** The start URL as crawled: normalised, after same-site redirects. */
  url: string;
  /** The registrable domain (an IP host is its own domain; `localhost` for localhost). */
  domain: string;
  pageTitle: string;
  pageDescription: string;
  components: SiteComponents;
  discoveredTools: DiscoveredTool[];
  category: string;
  tags: string[];
  /** The HTML pages read, in crawl order (URLs after redirects). */
  pagesCrawled: string[];
  /** Pages and probes not read, and why; robots.txt files that could not be read are noted as "error". */
  skipped: { url: string; reason: SkipReason; detail?: string }[];
  /** A page or byte limit was reached: the site has more than was read. */
  truncated: boolean;
}

export type CrawlErrorCode =
  | "invalid_url"
  | "address_not_allowed"
  | "unreachable"
  | "timeout"
  | "robots_disallowed"
  | "not_html"
  | "too_large";

/** The crawl could not start: the start URL is unusable or its page could not be read. */
export class CrawlError extends Error {
  override name = "CrawlError";
  constructor(
    readonly code: CrawlErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Page requests in flight at once. */
const CONCURRENCY = 4;
/** Distinct same-site URLs the crawl keeps track of; links past these are not followed. */
const MAX_KNOWN_URLS = 200;
const PAGE_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1";

type Skip = SiteFacts["skipped"][number];
type PageResult =
  | { ok: true; url: URL; facts: PageFacts }
  | { ok: false; reason: SkipReason; detail: string; code: CrawlErrorCode };

interface QueueEntry {
  url: URL;
  depth: number;
  /** Component pages (contact, pricing...) go first. */
  priority: 0 | 1;
  /** Discovery order, the last tie-break. */
  seq: number;
  linkText: string;
}

/**
 * Crawls the site at `startUrl` (http or https) and returns its facts. Rejects with a CrawlError when
 * the start URL is unusable or the start page cannot be read; with the signal's reason when cancelled.
 */
export async function crawlSite(startUrl: string, deps: CrawlDeps): Promise<SiteFacts> {
  const start = parseStartUrl(startUrl);
  const limits = resolveLimits(deps.limits);
  deps.signal?.throwIfAborted();
  const domain = siteDomain(start.hostname);
  const lookup = deps.catalogServices;
  const catalog = lookup ? Promise.resolve().then(() => lookup(domain)) : Promise.resolve([]);
  // Awaited once the site is read; until then (and if the crawl fails first) its rejection is handled here.
  catalog.catch(() => undefined);
  return new SiteCrawl(start, domain, deps, limits).run(catalog);
}

class SiteCrawl {
  private readonly fetcher: SiteFetcher;
  private readonly robots: RobotsTxt;
  /** URLs queued or read (normalised hrefs). */
  private readonly known = new Set<string>();
  private queue: QueueEntry[] = [];
  private readonly pages: CrawledPage[] = [];
  private readonly skipped: Skip[] = [];
  /** Same-site OpenAPI documents the pages link to, in discovery order. */
  private readonly linkedApis = new Map<string, URL>();
  /** URLs probed already (a page linking /openapi.json does not make us read it twice). */
  private readonly probed = new Set<string>();
  private pageRequests = 0;
  private seq = 0;
  private pageLimitHit = false;

  constructor(
    private readonly start: URL,
    private readonly domain: string,
    private readonly deps: CrawlDeps,
    private readonly limits: CrawlLimits,
  ) {
    this.fetcher = new SiteFetcher({
      dispatcher: deps.outbound.agent,
      userAgent: CRAWLER_USER_AGENT,
      timeoutMs: limits.pageTimeoutMs,
      maxBytes: limits.maxBytes,
      signal: deps.signal,
      follow: (url, checkRobots) => this.vetRedirect(url, checkRobots),
    });
    this.robots = new RobotsTxt(this.fetcher, (url, note) => this.skipped.push({ url, reason: "error", detail: note }));
  }

  async run(catalog: Promise<{ id: string; name: string }[]>): Promise<SiteFacts> {
    const home = await this.readStartPage();
    const atRoot = await this.probeWellKnown(new URL(home.url.origin));
    await this.readOtherPages();
    const linkedApis = [...this.linkedApis.values()].filter((url) => !this.probed.has(url.href));
    const linked = await this.probeAll(linkedApis.map((url) => async (probe: Probe) => listOf(await probeOpenApi(url, probe))));
    const services = await catalog;

    const components = assembleComponents(this.pages);
    const jsonLd = this.pages.flatMap((p) => p.facts.jsonLd);
    const pageTitle = home.facts.title ?? home.facts.ogTitle ?? jsonLdText(home.facts.jsonLd, "name") ?? this.domain;
    const pageDescription =
      home.facts.metaDescription ?? home.facts.ogDescription ?? jsonLdText(home.facts.jsonLd, "description") ?? "";
    const { category, tags } = classifySite({
      title: pageTitle,
      description: pageDescription,
      headings: this.pages.flatMap((p) => p.facts.headings.map((h) => h.text)),
      navLabels: components.navigation.map((l) => l.label),
      jsonLdTypes: jsonLd.flatMap(typesOf),
    });
    const found = [...atRoot, ...linked].flat();
    const tools: DiscoveredTool[] = [
      ...uniqueBy(
        found.filter((t) => t.type === "openapi"),
        (t) => t.url,
      ),
      ...found.filter((t) => t.type === "llms_txt"),
      ...uniqueBy(
        found.filter((t) => t.type === "mcp"),
        (t) => t.url,
      ),
      ...uniqueBy(services, (s) => s.id).map(
        (s): DiscoveredTool => ({ type: "catalog_service", service_id: s.id, name: s.name }),
      ),
    ];
    return {
      url: home.url.href,
      domain: this.domain,
      pageTitle,
      pageDescription,
      components,
      discoveredTools: tools,
      category,
      tags,
      pagesCrawled: this.pages.map((p) => p.url.href),
      skipped: this.skipped,
      truncated: this.pageLimitHit || this.fetcher.budgetReached,
    };
  }

  /** robots.txt, then the start page; any failure here is the crawl's failure. */
  private async readStartPage(): Promise<CrawledPage> {
    const robots = await this.robots.load(this.start);
    if (robots.failure?.kind === "refused") {
      throw new CrawlError("address_not_allowed", `${this.start.host}: ${robots.failure.message}`, { cause: robots.failure });
    }
    if (!(await this.robots.allows(this.start))) {
      throw new CrawlError(
        "robots_disallowed",
        `robots.txt of ${this.start.origin} disallows ${this.start.href} for ${ROBOTS_AGENT}`,
      );
    }
    this.known.add(this.start.href);
    this.pageRequests++;
    const result = await this.readPage(this.start);
    if (!result.ok) throw new CrawlError(result.code, `the start page ${this.start.href} could not be read: ${result.detail}`);
    return this.record(result, { url: this.start, depth: 0, priority: 0, seq: this.seq++, linkText: "" })!;
  }

  /** Breadth-first, component pages first, up to CONCURRENCY requests at a time, results in queue order. */
  private async readOtherPages(): Promise<void> {
    const { maxPages } = this.limits;
    while (this.queue.length > 0 && this.pageRequests < maxPages && !this.fetcher.exhausted) {
      this.deps.signal?.throwIfAborted();
      const wave: QueueEntry[] = [];
      while (wave.length < CONCURRENCY && this.pageRequests + wave.length < maxPages && this.queue.length > 0) {
        const entry = this.queue.shift()!;
        if (await this.robots.allows(entry.url)) wave.push(entry);
        else this.skip(entry.url, "robots", `robots.txt disallows it for ${ROBOTS_AGENT}`);
      }
      this.pageRequests += wave.length;
      const results = await Promise.all(wave.map((entry) => this.readPage(entry.url)));
      results.forEach((result, i) => {
        const entry = wave[i]!;
        if (result.ok) this.record(result, entry);
        else this.skip(entry.url, result.reason, result.detail);
      });
    }
    if (this.queue.length > 0) {
      this.pageLimitHit = true;
      const why = this.fetcher.exhausted
        ? `the byte budget (${this.limits.maxBytes} bytes) is spent`
        : `the page limit (${maxPages}) was reached`;
      for (const entry of this.queue) this.skip(entry.url, "limit", why);
      this.queue = [];
    }
  }

  private extract(body: Buffer, url: URL, charset: string | undefined): Promise<PageFacts> {
    const read = this.deps.extract;
    return read ? read(body, url, charset, this.deps.signal) : Promise.resolve(extractPage(body, url, charset));
  }

  /** GETs one page; never rejects but for a cancelled crawl. */
  private async readPage(url: URL): Promise<PageResult> {
    try {
      const res = await this.fetcher.get(url, { accept: PAGE_ACCEPT, want: (status, type) => isSuccess(status) && isHtml(type) });
      if (res.read) return { ok: true, url: res.url, facts: await this.extract(res.body, res.url, res.charset) };
      if (isSuccess(res.status)) {
        return { ok: false, reason: "not_html", detail: `Content-Type ${res.mediaType || "missing"}`, code: "not_html" };
      }
      return { ok: false, reason: "error", detail: `HTTP ${res.status}`, code: "unreachable" };
    } catch (err) {
      if (err instanceof ExtractBusy)
        return { ok: false, reason: "error", detail: `not read: ${err.message}`, code: "unreachable" };
      // The extraction thread ran out of its heap on this page (extract-pool.ts): the page alone is lost.
      if ((err as { code?: unknown })?.code === "ERR_WORKER_OUT_OF_MEMORY") {
        return {
          ok: false,
          reason: "error",
          detail: "reading this page needs more memory than one page may use",
          code: "too_large",
        };
      }
      if (!(err instanceof FetchFailure)) throw err;
      return { ok: false, ...failureOutcome(err), detail: err.message };
    }
  }

  /** Keeps a page read and queues its links; undefined when a redirect led to a page already read. */
  private record(result: PageResult & { ok: true }, via: QueueEntry): CrawledPage | undefined {
    const href = result.url.href;
    if (this.pages.some((p) => p.url.href === href)) return undefined;
    this.known.add(href);
    const page: CrawledPage = { url: result.url, linkText: via.linkText, facts: result.facts };
    this.pages.push(page);
    for (const api of result.facts.serviceDescLinks) if (this.isSameSite(api)) this.linkedApis.set(api.href, api);
    for (const link of result.facts.links) {
      if (isOpenApiLink(link.url)) {
        if (this.isSameSite(link.url)) this.linkedApis.set(link.url.href, link.url);
        continue;
      }
      const url = crawlableLink(link.url.href, result.url, this.domain);
      if (!url || this.known.has(url.href) || this.known.size >= MAX_KNOWN_URLS) continue;
      this.known.add(url.href);
      const component = kindOfUrl(url) ?? kindOfText(link.text);
      this.queue.push({ url, depth: via.depth + 1, priority: component ? 0 : 1, seq: this.seq++, linkText: link.text });
    }
    this.queue.sort((a, b) => a.priority - b.priority || a.depth - b.depth || a.seq - b.seq);
    return page;
  }

  /** The well-known probes at the site's origin (discover.ts), each task's findings in a list of its own. */
  private probeWellKnown(origin: URL): Promise<DiscoveredTool[][]> {
    const at = (path: string) => new URL(path, origin);
    return this.probeAll<DiscoveredTool[]>([
      ...OPENAPI_PATHS.map((path) => async (probe: Probe) => listOf(await probeOpenApi(at(path), probe))),
      async (probe: Probe) => listOf(await probeLlmsTxt(origin, probe)),
      ...MCP_WELL_KNOWN_PATHS.map((path) => (probe: Probe) => probeMcp(at(path), probe)),
    ]);
  }

  /**
   * Runs probe tasks CONCURRENCY at a time. Each task records what it skipped in a list of its own,
   * appended in task order once all are done, so `skipped` does not depend on timing.
   */
  private async probeAll<T>(tasks: ((probe: Probe) => Promise<T>)[]): Promise<T[]> {
    const sinks: Skip[][] = tasks.map(() => []);
    const results: T[] = new Array(tasks.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < tasks.length; i = next++) results[i] = await tasks[i]!(this.prober(sinks[i]!));
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, tasks.length) }, worker));
    for (const sink of sinks) this.skipped.push(...sink);
    return results;
  }

  /** A probe that honours robots.txt and the budget, and notes in `sink` what stopped it. */
  private prober(sink: Skip[]): Probe {
    return async (url, options) => {
      this.probed.add(url.href);
      if (!(await this.robots.allows(url))) {
        sink.push({ url: url.href, reason: "robots", detail: `robots.txt disallows it for ${ROBOTS_AGENT}` });
        return undefined;
      }
      try {
        return await this.fetcher.get(url, options);
      } catch (err) {
        if (!(err instanceof FetchFailure)) throw err;
        sink.push({ url: url.href, reason: failureOutcome(err).reason, detail: err.message });
        return undefined;
      }
    };
  }

  /** Whether a redirect may be followed: http(s), this site, allowed by robots.txt (but for robots.txt itself). */
  private async vetRedirect(url: URL, checkRobots: boolean): Promise<FetchFailure | undefined> {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return new FetchFailure("redirect", `redirects to a ${url.protocol} URL, which the crawler does not follow`);
    }
    if (siteDomain(url.hostname) !== this.domain) return new FetchFailure("redirect", `redirects to another site (${url.host})`);
    if (checkRobots && !(await this.robots.allows(url))) {
      return new FetchFailure("robots", `redirects to ${url.href}, which robots.txt disallows for ${ROBOTS_AGENT}`);
    }
    return undefined;
  }

  private isSameSite(url: URL): boolean {
    return siteDomain(url.hostname) === this.domain;
  }

  private skip(url: URL, reason: SkipReason, detail: string): void {
    this.skipped.push({ url: url.href, reason, detail });
  }
}

/** What a failed request means for a page (skip reason) and for the start page (error code). */
function failureOutcome(err: FetchFailure): { reason: SkipReason; code: CrawlErrorCode } {
  switch (err.kind) {
    case "refused":
      return { reason: "error", code: "address_not_allowed" };
    case "timeout":
      return { reason: "error", code: "timeout" };
    case "robots":
      return { reason: "robots", code: "robots_disallowed" };
    case "budget":
    case "too_large":
      return { reason: "limit", code: "too_large" };
    case "network":
    case "redirect":
      return { reason: "error", code: "unreachable" };
  }
}

/** The start URL, normalised (no fragment), or a CrawlError invalid_url. */
function parseStartUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CrawlError("invalid_url", `not an absolute URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CrawlError("invalid_url", `only http and https sites are crawled, not ${url.protocol}`);
  }
  if (url.username !== "" || url.password !== "") throw new CrawlError("invalid_url", "a site URL must not carry credentials");
  url.hash = "";
  if (url.search === "") url.search = "";
  return url;
}

function resolveLimits(given: Partial<CrawlLimits> | undefined): CrawlLimits {
  const limits = { ...DEFAULT_CRAWL_LIMITS, ...given };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isFinite(value) || value <= 0)
      throw new RangeError(`crawl limit ${name} must be a positive number, got ${value}`);
  }
  return limits;
}

/**
 * A JSON-LD text of the start page: the WebSite node's, else an organisation's, else the first node's
 * that has one.
 */
function jsonLdText(nodes: JsonLdNode[], key: "name" | "description"): string | undefined {
  const withKey = nodes.filter((n) => stringsOf(n[key]).length > 0);
  const node =
    withKey.find((n) => typesOf(n).includes("WebSite")) ??
    withKey.find((n) => typesOf(n).some((t) => /Organization|Corporation|LocalBusiness/.test(t))) ??
    withKey[0];
  return node ? stringsOf(node[key])[0] : undefined;
}

function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function listOf<T>(item: T | undefined): T[] {
  return item === undefined ? [] : [item];
}

const isSuccess = (status: number) => status >= 200 && status < 300;
const isHtml = (mediaType: string) => mediaType === "text/html" || mediaType === "application/xhtml+xml";
