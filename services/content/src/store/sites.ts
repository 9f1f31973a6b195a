/**
 * Site records and their crawl queue. A crawl job is claimed with FOR UPDATE SKIP LOCKED and a lease
 * that the running crawl renews; a job whose lease ran out (its process stopped or died) is claimed
 * again, so a restart loses nothing. A job claimed MAX_CRAWL_ATTEMPTS times without finishing fails.
 */
import { randomUUID } from "node:crypto";
import { type Pool, withTransaction } from "@toolport/kit/pg";
import type { SiteRow } from "../domain/model.js";

export const MAX_CRAWL_ATTEMPTS = 3;

/** What a finished crawl writes into its record. */
export interface CrawlResult {
  url: string;
  domain: string;
  pageTitle: string;
  pageDescription: string;
  components: unknown;
  discoveredTools: unknown[];
  category: string;
  tags: string[];
}

export interface ClaimedJob {
  job_id: string;
  site_id: string;
  url: string;
  attempts: number;
}

const SITE_COLUMNS = `id, owner_id, domain, url, status, visibility, page_title, page_description, components, discovered_tools,
  category, tags, error, crawled_at, created_at, updated_at`;

export class SiteStore {
  constructor(private readonly pool: Pool) {}

  /** A pending record and its first crawl job, together. */
  async create(ownerId: string, url: string, domain: string, visibility: string): Promise<SiteRow> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<SiteRow>(
        `INSERT INTO sites (id, owner_id, domain, url, visibility) VALUES ($1, $2, $3, $4, $5) RETURNING ${SITE_COLUMNS}`,
        [randomUUID(), ownerId, domain, url, visibility],
      );
      await client.query("INSERT INTO crawl_jobs (id, site_id) VALUES ($1, $2)", [randomUUID(), rows[0]!.id]);
      return rows[0]!;
    });
  }

  async get(id: string): Promise<SiteRow | null> {
    const { rows } = await this.pool.query<SiteRow>(`SELECT ${SITE_COLUMNS} FROM sites WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async listMine(ownerId: string): Promise<SiteRow[]> {
    const { rows } = await this.pool.query<SiteRow>(
      `SELECT ${SITE_COLUMNS} FROM sites WHERE owner_id = $1 ORDER BY created_at DESC, id DESC`,
      [ownerId],
    );
    return rows;
  }

  /** The most recently crawled live public record of a domain. */
  async liveByDomain(domain: string): Promise<SiteRow | null> {
    const { rows } = await this.pool.query<SiteRow>(
      `SELECT ${SITE_COLUMNS} FROM sites WHERE domain = $1 AND status = 'live' AND visibility = 'public'
        ORDER BY crawled_at DESC, id DESC LIMIT 1`,
      [domain],
    );
    return rows[0] ?? null;
  }

  /**
   * Queues another crawl of the owner's record (none when one is already queued). A failed record goes
   * back to pending; a live one stays live until the crawl ends. Null when it is not the owner's.
   */
  async recrawl(ownerId: string, id: string): Promise<SiteRow | null> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<SiteRow>(
        `UPDATE sites SET status = CASE WHEN status = 'failed' THEN 'pending' ELSE status END, updated_at = now()
          WHERE id = $1 AND owner_id = $2 RETURNING ${SITE_COLUMNS}`,
        [id, ownerId],
      );
      if (!rows[0]) return null;
      await client.query(
        `INSERT INTO crawl_jobs (id, site_id)
         SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM crawl_jobs WHERE site_id = $2 AND status = 'queued')`,
        [randomUUID(), id],
      );
      return rows[0];
    });
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    // The delete locks the site, then (cascading) its crawl job; a crawl being claimed or finished at the
    // same moment may hold them in the other order, and Postgres then ends one side with a deadlock
    // (40P01). Nothing of the delete was done then: it is tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        const { rowCount } = await this.pool.query("DELETE FROM sites WHERE id = $1 AND owner_id = $2", [id, ownerId]);
        return rowCount === 1;
      } catch (err) {
        if ((err as { code?: string }).code !== "40P01" || attempt >= 3) throw err;
      }
    }
  }

  /**
   * Claims up to `limit` queued jobs for `leaseMs`, marking their records crawling (a live record stays
   * live). Jobs claimed too often without finishing are failed here instead. The claim and the marking are
   * one statement, so a claim that finds nothing (what an idle poll does) costs one round trip and no
   * transaction; failing a job is a transaction of its own after it (a process that dies in between leaves
   * the job to the next claim, which fails it then).
   */
  async claim(limit: number, leaseMs: number): Promise<ClaimedJob[]> {
    const { rows } = await this.pool.query<ClaimedJob>({
      name: "crawl_claim",
      text: `WITH claimed AS (
               UPDATE crawl_jobs j SET locked_until = now() + make_interval(secs => $2 / 1000.0), attempts = j.attempts + 1
                 FROM sites s
                WHERE j.id IN (SELECT id FROM crawl_jobs
                                WHERE status = 'queued' AND (locked_until IS NULL OR locked_until <= now())
                                ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
                  AND s.id = j.site_id
               RETURNING j.id AS job_id, j.site_id, s.url, j.attempts
             ), crawling AS (
               UPDATE sites SET status = CASE WHEN status = 'live' THEN 'live' ELSE 'crawling' END, updated_at = now()
                WHERE id IN (SELECT site_id FROM claimed WHERE attempts <= $3)
             )
             SELECT job_id, site_id, url, attempts FROM claimed`,
      values: [limit, leaseMs, MAX_CRAWL_ATTEMPTS],
    });
    const ready: ClaimedJob[] = [];
    for (const job of rows) {
      if (job.attempts > MAX_CRAWL_ATTEMPTS) {
        await this.finish(job.job_id, job.site_id, { error: `the crawl did not finish after ${MAX_CRAWL_ATTEMPTS} attempts` });
        continue;
      }
      ready.push(job);
    }
    return ready;
  }

  /**
   * How long until a queued job may be claimed (its lease over), by Postgres's clock: 0 or less when one
   * already may, null when none is queued. The crawler's idle poll waits that long (kit's Wakeup).
   */
  async nextDueInMs(): Promise<number | null> {
    const { rows } = await this.pool.query<{ due_in_ms: number | null }>({
      name: "crawl_next_due",
      text: `SELECT (EXTRACT(EPOCH FROM min(coalesce(locked_until, now())) - now()) * 1000)::float8 AS due_in_ms
               FROM crawl_jobs WHERE status = 'queued'`,
    });
    return rows[0]?.due_in_ms ?? null;
  }

  /** Pushes a running job's lease forward; false when the job is no longer this claim's. */
  async renew(jobId: string, leaseMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "UPDATE crawl_jobs SET locked_until = now() + make_interval(secs => $2 / 1000.0) WHERE id = $1 AND status = 'queued'",
      [jobId, leaseMs],
    );
    return rowCount === 1;
  }

  /** A crawl's end: its facts make the record live, or its error is recorded (a live record stays live). */
  async finish(jobId: string, siteId: string, outcome: { result: CrawlResult } | { error: string }): Promise<void> {
    await withTransaction(this.pool, (client) => this.finishWith(client, jobId, siteId, outcome));
  }

  private async finishWith(
    client: { query: Pool["query"] },
    jobId: string,
    siteId: string,
    outcome: { result: CrawlResult } | { error: string },
  ): Promise<void> {
    if ("result" in outcome) {
      const r = outcome.result;
      await client.query(
        `UPDATE sites SET status = 'live', url = $2, domain = $3, page_title = $4, page_description = $5, components = $6,
                discovered_tools = $7, category = $8, tags = $9, error = NULL, crawled_at = now(), updated_at = now()
          WHERE id = $1`,
        [
          siteId,
          r.url,
          r.domain,
          r.pageTitle,
          r.pageDescription,
          JSON.stringify(r.components),
          JSON.stringify(r.discoveredTools),
          r.category,
          r.tags,
        ],
      );
    } else {
      await client.query(
        `UPDATE sites SET status = CASE WHEN status = 'live' THEN 'live' ELSE 'failed' END, error = $2, crawled_at = now(),
                updated_at = now()
          WHERE id = $1`,
        [siteId, outcome.error],
      );
    }
    await client.query("UPDATE crawl_jobs SET status = 'done', finished_at = now(), locked_until = NULL WHERE id = $1", [jobId]);
  }
}
