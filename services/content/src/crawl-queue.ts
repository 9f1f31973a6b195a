/**
 * Runs site crawls off the request path. Jobs live in Postgres (store/sites.ts): claimed with FOR UPDATE
 * SKIP LOCKED and a lease of CONTENT_CRAWL_LEASE_MS that a running crawl renews every third of it, so a
 * process that stops or dies leaves its jobs to be claimed again once their lease runs out (nothing is
 * lost, a crawl may run again from the start). At most CONTENT_CRAWL_CONCURRENCY crawls run per process.
 * Woken by NOTIFY toolport_crawl (a job added on any replica), by this process, and by a poll (idle: when
 * the next queued job's lease runs out, or every 5 minutes with none queued).
 */
import type { Logger } from "@toolport/kit/logger";
import type { Outbound } from "@toolport/kit/outbound";
import type { Pool } from "@toolport/kit/pg";
import { type LookResult, Wakeup } from "@toolport/kit/wakeup";
import { CrawlError, type CrawlLimits, crawlSite } from "./sites/crawl.js";
import type { ExtractPool } from "./sites/extract-pool.js";
import type { ClaimedJob, SiteStore } from "./store/sites.js";

export interface CrawlQueueOptions {
  pool: Pool;
  sites: SiteStore;
  outbound: Outbound;
  log: Logger;
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  limits?: Partial<CrawlLimits>;
  /** Reads pages off the event loop (sites/extract-pool.ts). */
  extractor: ExtractPool;
  /** Catalog services on a registrable domain (discovered_tools). */
  catalogServices(domain: string): Promise<{ id: string; name: string }[]>;
}

export class CrawlQueue {
  private readonly running = new Map<string, AbortController>();
  private readonly done = new Set<Promise<void>>();
  private stopped = false;
  private readonly wakeup: Wakeup;

  constructor(private readonly o: CrawlQueueOptions) {
    this.wakeup = new Wakeup({ pool: o.pool, channel: "toolport_crawl", pollMs: o.pollMs, log: o.log, look: () => this.claim() });
  }

  start(): Promise<void> {
    return this.wakeup.start();
  }

  /** Stops claiming and abandons running crawls: their leases run out and another process takes them up. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.wakeup.stop();
    for (const controller of this.running.values()) controller.abort();
    await Promise.allSettled([...this.done]);
    await this.o.extractor.close();
  }

  wake(): void {
    if (!this.stopped) this.wakeup.wake();
  }

  /** Starts queued crawls this process has room for; when there were none, when the next falls due. */
  private async claim(): Promise<LookResult> {
    const room = this.o.concurrency - this.running.size;
    if (room <= 0) return true;
    let jobs: ClaimedJob[];
    try {
      jobs = await this.o.sites.claim(room, this.o.leaseMs);
      if (jobs.length === 0) return { dueInMs: await this.o.sites.nextDueInMs() };
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, "claiming crawl jobs failed; retrying on the next poll");
      return true;
    }
    for (const job of jobs) {
      const run = this.run(job).finally(() => {
        this.done.delete(run);
        this.running.delete(job.job_id);
        this.wake();
      });
      this.done.add(run);
    }
    return true;
  }

  private async run(job: ClaimedJob): Promise<void> {
    const controller = new AbortController();
    this.running.set(job.job_id, controller);
    const log = this.o.log.child({ site_id: job.site_id, job_id: job.job_id });
    // Renews the lease while the crawl runs; a lease lost to another claim stops this crawl.
    const heartbeat = setInterval(
      () => {
        this.o.sites.renew(job.job_id, this.o.leaseMs).then(
          (held) => {
            if (!held) controller.abort();
          },
          (err) => log.warn({ err: (err as Error).message }, "renewing a crawl lease failed"),
        );
      },
      Math.max(50, Math.floor(this.o.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      log.info({ url: job.url, attempt: job.attempts }, "crawl started");
      const facts = await crawlSite(job.url, {
        outbound: this.o.outbound,
        limits: this.o.limits,
        signal: controller.signal,
        extract: (body, url, charset, signal) => this.o.extractor.extract(body, url, charset, signal),
        catalogServices: (domain) =>
          this.o.catalogServices(domain).catch((err) => {
            log.warn({ err: (err as Error).message }, "catalog services on the domain could not be listed");
            return [];
          }),
      });
      if (controller.signal.aborted) return;
      await this.o.sites.finish(job.job_id, job.site_id, {
        result: {
          url: facts.url,
          domain: facts.domain,
          pageTitle: facts.pageTitle,
          pageDescription: facts.pageDescription,
          components: facts.components,
          discoveredTools: facts.discoveredTools,
          category: facts.category,
          tags: facts.tags,
        },
      });
      log.info({ pages: facts.pagesCrawled.length, truncated: facts.truncated }, "crawl finished");
    } catch (err) {
      // Stopping (or a lost lease): the job stays queued for whoever claims it next.
      if (controller.signal.aborted) return;
      const error =
        err instanceof CrawlError ? `${err.code}: ${err.message}` : "the crawl failed inside Toolport; it can be recrawled";
      if (!(err instanceof CrawlError)) log.error({ err }, "crawl failed");
      await this.o.sites
        .finish(job.job_id, job.site_id, { error })
        .catch((e) => log.error({ err: e }, "recording a failed crawl failed; the job will be claimed again"));
    } finally {
      clearInterval(heartbeat);
    }
  }
}
