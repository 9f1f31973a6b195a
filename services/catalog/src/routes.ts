/** The catalog service's gRPC routes: every RPC of CatalogService, from five handler groups. */
import type { ConnectRouter } from "@connectrpc/connect";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { Sealer } from "@toolport/kit/sealing";
import type { BaseConfig, ServiceContext } from "@toolport/kit/service";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { z } from "zod";
import type { CatalogDeps } from "./app/deps.js";
import { SearchIndex } from "./app/search-index.js";
import type { catalogEnv } from "./config.js";
import { createCatalogReadHandlers } from "./handlers/catalog-handlers.js";
import { createDirectoryHandlers } from "./handlers/directory-handlers.js";
import { createInternalHandlers } from "./handlers/internal-handlers.js";
import { createOAuthHandlers } from "./handlers/oauth-handlers.js";
import { createPublishingHandlers } from "./handlers/publishing-handlers.js";
import { ImportPool } from "./publishing/import-pool.js";
import { PageCache } from "./store/page-cache.js";

export type CatalogConfig = z.infer<z.ZodObject<typeof catalogEnv>> & BaseConfig;

const built = new WeakMap<object, CatalogDeps>();

/** One set of dependencies per running service (shared by its routes and its background work). */
export function depsFor(ctx: ServiceContext<CatalogConfig>): CatalogDeps {
  let deps = built.get(ctx);
  if (!deps) {
    deps = {
      pool: ctx.pool,
      log: ctx.log,
      index: new SearchIndex(ctx.pool, ctx.log, ctx.config.CATALOG_INDEX_SNAPSHOT),
      pages: new PageCache(ctx.config.CATALOG_PAGE_CACHE_MB * 1024 * 1024),
      sealer: Sealer.fromSecret(ctx.config.CATALOG_SECRET_KEY),
      outbound: new Outbound({
        policy: new AddressPolicy(ctx.config.CATALOG_OUTBOUND_ALLOW, "CATALOG_OUTBOUND_ALLOW", {
          dnsServers: ctx.config.OUTBOUND_DNS_SERVERS,
        }),
      }),
      importer: new ImportPool({
        threads: ctx.config.CATALOG_IMPORT_THREADS,
        queue: ctx.config.CATALOG_IMPORT_QUEUE,
        heapMb: ctx.config.CATALOG_IMPORT_HEAP_MB,
        maxStoredMb: ctx.config.CATALOG_IMPORT_MAX_STORED_MB,
      }),
      publicUrl: ctx.config.PUBLIC_URL,
      publishEvents: () => ctx.outbox.flush(),
    };
    built.set(ctx, deps);
  }
  return deps;
}

export function routes(router: ConnectRouter, ctx: ServiceContext<CatalogConfig>): void {
  const deps = depsFor(ctx);
  router.service(CatalogService, {
    ...createCatalogReadHandlers(deps),
    ...createPublishingHandlers(deps),
    ...createInternalHandlers(deps),
    ...createOAuthHandlers(deps),
    ...createDirectoryHandlers(deps),
  });
}
