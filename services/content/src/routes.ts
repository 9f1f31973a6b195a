/**
 * The content service's gRPC routes: every RPC of ContentService, from the skill, site and workflow
 * handlers, on the parts built in deps.ts.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { serviceVisible } from "./catalog-lookups.js";
import type { ContentDeps } from "./deps.js";
import { siteHandlers } from "./handlers/sites.js";
import { skillHandlers } from "./handlers/skills.js";
import { toolLookupFailed, workflowHandlers } from "./handlers/workflows.js";

export function routes(router: ConnectRouter, deps: ContentDeps): void {
  router.service(ContentService, {
    ...skillHandlers({
      skills: deps.skills,
      serviceVisible: (serviceId) => serviceVisible(() => deps.catalog.getService({ serviceId })),
    }),
    ...siteHandlers({ sites: deps.sites, policy: deps.policy, wake: () => deps.crawls.wake() }),
    ...workflowHandlers({
      workflows: deps.workflows,
      runner: deps.runner,
      validator: deps.validator,
      syncWaitMs: deps.syncWaitMs,
      async visibleTool(toolId) {
        try {
          const { tool } = await deps.catalog.getTool({ toolId });
          return tool ? { id: tool.id, name: tool.name } : null;
        } catch (err) {
          return toolLookupFailed(err);
        }
      },
    }),
  });
}
