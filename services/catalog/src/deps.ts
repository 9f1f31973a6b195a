/**
 * The catalog service's parts, built once per start (role.ts `deps`) and shared by its routes and its
 * background work: the store behind the domain's ports (with its page cache), the search index, the
 * sealer of stored credentials, the guarded outbound HTTP client and the import threads. The pool itself
 * stays outside the domain's type: the search index and the background consumers take it here and in role.ts.
 */
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { Sealer } from "@toolport/kit/sealing";
import type { ServiceContext } from "@toolport/kit/service";
import type { CatalogConfig } from "./config.js";
import type { CatalogDeps } from "./domain/deps.js";
import { ImportPool } from "./publishing/import-pool.js";
import { SearchIndex } from "./search/search-index.js";
import { pgCatalogStore } from "./store/catalog-port.js";
import { PageCache } from "./store/page-cache.js";

export interface CatalogParts extends CatalogDeps {
  /** Run on shutdown after the background work has stopped: outbound HTTP, then the import threads. */
  close(): Promise<void>;
}

export function createDeps(ctx: ServiceContext<CatalogConfig>): CatalogParts {
  const { config } = ctx;
  const outbound = new Outbound({
    policy: new AddressPolicy(config.CATALOG_OUTBOUND_ALLOW, "CATALOG_OUTBOUND_ALLOW", {
      dnsServers: config.OUTBOUND_DNS_SERVERS,
    }),
  });
  const importer = new ImportPool({
    threads: config.CATALOG_IMPORT_THREADS,
    queue: config.CATALOG_IMPORT_QUEUE,
    heapMb: config.CATALOG_IMPORT_HEAP_MB,
    maxStoredMb: config.CATALOG_IMPORT_MAX_STORED_MB,
  });
  return {
    store: pgCatalogStore(ctx.pool, new PageCache(config.CATALOG_PAGE_CACHE_MB * 1024 * 1024)),
    log: ctx.log,
    index: new SearchIndex(ctx.pool, ctx.log, config.CATALOG_INDEX_SNAPSHOT),
    sealer: Sealer.fromSecret(config.CATALOG_SECRET_KEY),
    outbound,
    importer,
    publicUrl: config.PUBLIC_URL,
    publishEvents: () => ctx.outbox.flush(),
    async close() {
      await outbound.close();
      await importer.close();
    },
  };
}
