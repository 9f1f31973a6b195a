/**
 * The content service's gRPC routes: every RPC of ContentService, from the skill, site and workflow
 * handlers, on the parts built in deps.ts.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { CatalogClient } from "./clients/catalog.js";
import type { ContentDeps } from "./deps.js";
import { siteHandlers } from "./handlers/sites.js";
import { skillHandlers } from "./handlers/skills.js";
import { workflowHandlers } from "./handlers/workflows.js";

export function routes(router: ConnectRouter, deps: ContentDeps): void {
  const catalog = new CatalogClient(deps.catalog);
  router.service(ContentService, {
    ...skillHandlers({ skills: deps.skills, catalog }),
    ...siteHandlers({ sites: deps.sites, policy: deps.policy, wake: () => deps.crawls.wake() }),
    ...workflowHandlers({
      workflows: deps.workflows,
      runner: deps.runner,
      validator: deps.validator,
      syncWaitMs: deps.syncWaitMs,
      catalog,
    }),
  });
}
