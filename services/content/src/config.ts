/** The content service's own variables, on top of every service's (see @toolport/kit/service). */
import { serviceUrls } from "@toolport/kit/config";
import type { BaseConfig } from "@toolport/kit/service";
import { z } from "zod";

export const contentEnv = {
  CATALOG_URL: serviceUrls.CATALOG_URL,
  CONTENT_OUTBOUND_ALLOW: z
    .string()
    .default("")
    .describe("comma-separated hosts, IPs or CIDR ranges (optionally :port) the site crawler may reach although private"),
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
    .describe("how often queued crawls are looked for when nothing wakes the crawler"),
};

export type ContentConfig = z.infer<z.ZodObject<typeof contentEnv>> & BaseConfig;
