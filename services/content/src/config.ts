/** The content service's own variables, on top of every service's (see @toolport/kit/service). */
import { serviceUrls } from "@toolport/kit/config";
import { outboundDnsEnv } from "@toolport/kit/outbound";
import type { BaseConfig } from "@toolport/kit/service";
import { z } from "zod";

export const contentEnv = {
  CATALOG_URL: serviceUrls.CATALOG_URL,
  EXECUTION_URL: serviceUrls.EXECUTION_URL,
  CONTENT_OUTBOUND_ALLOW: z
    .string()
    .default("")
    .describe("comma-separated hosts, IPs or CIDR ranges (optionally :port) the site crawler may reach although private"),
  ...outboundDnsEnv,
  CONTENT_CRAWL_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(2).describe("site crawls run at once per process"),
  CONTENT_CRAWL_MAX_PAGES: z.coerce.number().int().min(1).max(1000).default(25).describe("pages one crawl reads at most"),
  CONTENT_CRAWL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(5 * 1024 * 1024)
    .describe("bytes one crawl reads at most, every response together"),
  CONTENT_CRAWL_PAGE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(120_000)
    .default(10_000)
    .describe("how long one page (headers and body) may take"),
  CONTENT_CRAWL_LEASE_MS: z.coerce
    .number()
    .int()
    .min(300)
    .max(3_600_000)
    .default(30_000)
    .describe("how long a crawl holds its job without renewing it; a stopped process's crawls restart after this"),
  CONTENT_CRAWL_POLL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(1000)
    .describe(
      "how often queued crawls are looked for when nothing wakes the crawler; idle, the wait is until the next queued job's lease runs out (5 minutes with none queued: a new job NOTIFYs)",
    ),
  CONTENT_EXTRACT_THREADS: z.coerce
    .number()
    .int()
    .min(0)
    .max(16)
    .default(1)
    .describe("worker threads reading crawled pages' HTML off the event loop at once; 0 reads on the event loop"),
  CONTENT_EXTRACT_QUEUE: z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(16)
    .describe("crawled pages that may wait for an extraction thread; a page beyond that is skipped, not read"),
  CONTENT_EXTRACT_HEAP_MB: z.coerce
    .number()
    .int()
    .min(32)
    .max(8192)
    .default(512)
    .describe("heap limit of each extraction thread, in MiB; a page needing more is skipped alone"),
  CONTENT_WORKFLOW_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(36_500)
    .default(30)
    .describe("days a finished workflow run and its steps are kept after it ended; 0 keeps them forever"),
  CONTENT_WORKFLOW_PRUNE_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(86_400_000)
    .default(3_600_000)
    .describe("how often finished workflow runs older than the retention are deleted"),
  CONTENT_WORKFLOW_PRUNE_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(500)
    .describe("finished workflow runs (with their steps) deleted per statement by the retention job"),
  CONTENT_WORKFLOW_LEASE_MS: z.coerce
    .number()
    .int()
    .min(300)
    .max(3_600_000)
    .default(30_000)
    .describe(
      "how long a workflow run stays with the process driving it without renewal; a dead process's runs resume after this",
    ),
  CONTENT_WORKFLOW_POLL_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(1000)
    .describe(
      "how often runs whose lease ran out are looked for; idle, the wait is until the next run's lease runs out (5 minutes with none running: a queued or released run NOTIFYs)",
    ),
  CONTENT_WORKFLOW_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(16)
    .describe(
      "async starts and resumed runs are taken on while a process drives fewer runs than this (synchronous runs count, and are never refused)",
    ),
  CONTENT_WORKFLOW_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(8)
    .describe("attempts at one step while the execution service cannot be reached, before the run fails"),
  CONTENT_WORKFLOW_SYNC_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(60_000)
    .describe("how long POST /workflows/{id}/run waits for the run to end before answering 202 with it still running"),
  CONTENT_WORKFLOW_STEP_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(3_600_000)
    .default(120_000)
    .describe("deadline of one step's call to the execution service (above its upstream timeout plus an idempotent wait)"),
};

export type ContentConfig = z.infer<z.ZodObject<typeof contentEnv>> & BaseConfig;
