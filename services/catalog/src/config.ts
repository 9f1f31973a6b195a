/** The catalog's own environment, on top of the variables every service reads (kit/service.ts). */
import path from "node:path";
import { url } from "@toolport/kit/config";
import { AddressPolicy, outboundDnsEnv } from "@toolport/kit/outbound";
import type { ServiceConfig } from "@toolport/kit/service";
import { z } from "zod";

export const catalogEnv = {
  PUBLIC_URL: url(["http", "https"], "http://localhost:8080").describe(
    "address clients use for the gateway (without /v1); configuration_url links point there",
  ),
  CATALOG_SECRET_KEY: z
    .string()
    .optional()
    .describe(
      "32-byte key (64 hex characters or base64) sealing stored upstream credentials; generate with openssl rand -hex 32",
    ),
  MEILI_URL: url(["http", "https"])
    .optional()
    .describe("Meilisearch address; when set, search uses Meilisearch instead of the embedded engine"),
  MEILI_KEY: z
    .string()
    .optional()
    .describe("Meilisearch API key (master or admin key); MEILI_MASTER_KEY is read when this is unset"),
  MEILI_MASTER_KEY: z.string().optional().describe("Meilisearch master key, used when MEILI_KEY is unset"),
  CATALOG_OUTBOUND_ALLOW: z
    .string()
    .default("")
    .superRefine((value, ctx) => {
      try {
        new AddressPolicy(value, "CATALOG_OUTBOUND_ALLOW");
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    })
    .describe(
      "hosts, IPs or CIDR ranges (optionally :port) that OpenAPI document URLs and MCP servers may be on although private or loopback, comma-separated",
    ),
  ...outboundDnsEnv,
  // Operator configuration, not caller input: the embeddings API (like MEILI_URL) is dialled without the
  // outbound address guard, so it may be a local or private address.
  EMBEDDING_URL: url(["http", "https"])
    .optional()
    .describe("base URL of an OpenAI-compatible embeddings API (POST {url}/embeddings); adds a semantic signal to search"),
  EMBEDDING_MODEL: z.string().optional().describe("model name sent with each embeddings request"),
  EMBEDDING_KEY: z.string().optional().describe("bearer token for the embeddings API"),
  // Publishing's worker pool (publishing/import-pool.ts). The defaults suit 2 cores: one thread imports
  // while the event loop keeps the other.
  CATALOG_IMPORT_THREADS: z.coerce
    .number()
    .int()
    .min(0)
    .max(64)
    .default(1)
    .describe(
      "worker threads that parse, validate and convert OpenAPI documents off the event loop, at most one document each at a time; 0 imports on the event loop (not for production: a large document stalls every other caller)",
    ),
  CATALOG_IMPORT_QUEUE: z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(64)
    .describe(
      "OpenAPI documents that may wait for an import thread (64: a burst of publishes from several callers waits its turn rather than being refused; each waiting document is already in memory as its request's body); a publish or re-import beyond that answers 503 import_busy with Retry-After",
    ),
  CATALOG_IMPORT_HEAP_MB: z.coerce
    .number()
    .int()
    .min(64)
    .max(16384)
    .default(1024)
    .describe("heap limit of each import thread in MiB; a document that needs more is refused (400 document_too_large)"),
  CATALOG_IMPORT_MAX_STORED_MB: z.coerce
    .number()
    .int()
    .min(1)
    .max(4096)
    .default(256)
    .describe(
      "most schema JSON one document's tools may store, in MiB; a document that would store more is refused (400 document_too_large)",
    ),
  CATALOG_PAGE_CACHE_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(4096)
    .default(64)
    .describe(
      "memory for the rows of the Tool shape kept between requests (list pages, a search's page, a service's tools), in MiB, an estimate; 0 keeps none. Each row is checked against its version in Postgres on every read, so it never answers stale",
    ),
  CATALOG_INDEX_SNAPSHOT: z
    .string()
    .min(1)
    .optional()
    .transform((file) => (file === undefined ? undefined : path.resolve(file)))
    .describe(
      "file where the embedded search index is kept between runs: written on a clean stop, loaded on start and brought up to date with Postgres instead of rebuilding the index (a catalog of 100,000 tools is ready in about 4-5 s instead of 10-15); unset, every start rebuilds. npm start keeps it in its data folder",
    ),
};

export type CatalogConfig = ServiceConfig<typeof catalogEnv>;
