/** What the catalog's use cases need: the parts built once per start in src/deps.ts and passed down. */
import type { Logger } from "@toolport/kit/logger";
import type { Outbound } from "@toolport/kit/outbound";
import type { Sealer } from "@toolport/kit/sealing";
import type { ImportPool } from "../publishing/import-pool.js";
import type { SearchIndex } from "../search/search-index.js";
import type { CatalogStore } from "./ports.js";

export interface CatalogDeps {
  /**
   * The catalog's storage (ports.ts), on Postgres (store/catalog-port.ts); its tool pages keep the Tool
   * shape's rows by version between requests (store/page-cache.ts, CATALOG_PAGE_CACHE_MB).
   */
  store: CatalogStore;
  log: Logger;
  index: SearchIndex;
  sealer: Sealer;
  /**
   * The guarded HTTP client for addresses callers choose (OpenAPI document URLs, MCP servers): refuses
   * private, loopback, link-local and metadata addresses unless CATALOG_OUTBOUND_ALLOW names them.
   */
  outbound: Outbound;
  /** Imports OpenAPI documents on worker threads, bounded (CATALOG_IMPORT_THREADS, CATALOG_IMPORT_QUEUE). */
  importer: ImportPool;
  /** Gateway address clients use (PUBLIC_URL), for configuration_url links. */
  publicUrl: string;
  /**
   * Publishes the events this replica just committed (the kit relay's flush). Tool changes await it
   * before answering, so execution's tool cache is emptied before the caller's next call can arrive.
   */
  publishEvents(): Promise<boolean>;
}
