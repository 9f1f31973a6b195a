/** The catalog service's gRPC routes: every RPC of CatalogService, from five handler groups. */
import type { ConnectRouter } from "@connectrpc/connect";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { CatalogDeps } from "./domain/deps.js";
import { createCatalogReadHandlers } from "./handlers/catalog-handlers.js";
import { createDirectoryHandlers } from "./handlers/directory-handlers.js";
import { createInternalHandlers } from "./handlers/internal-handlers.js";
import { createOAuthHandlers } from "./handlers/oauth-handlers.js";
import { createPublishingHandlers } from "./handlers/publishing-handlers.js";

export function routes(router: ConnectRouter, deps: CatalogDeps): void {
  router.service(CatalogService, {
    ...createCatalogReadHandlers(deps),
    ...createPublishingHandlers(deps),
    ...createInternalHandlers(deps),
    ...createOAuthHandlers(deps),
    ...createDirectoryHandlers(deps),
  });
}
