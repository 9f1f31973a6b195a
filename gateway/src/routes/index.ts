/**
 * Every /v1 endpoint of the spec and of DESIGN.md, one module per service behind it. Within a module,
 * paths with a literal segment come before the parameter that would swallow it
 * (`/tools/search` before `/tools/:tool_id`).
 */
import type { AppDeps } from "../deps.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { activityRoutes } from "./activity.js";
import { billingRoutes } from "./billing.js";
import { catalogRoutes } from "./catalog.js";
import { contentRoutes } from "./content.js";
import { directoryRoutes } from "./directory.js";
import { executionRoutes } from "./execution.js";
import { identityRoutes } from "./identity.js";
import { oauthRoutes } from "./oauth.js";
import { oauthServerApiRoutes } from "./oauth-server.js";
import { webhooksRoutes } from "./webhooks.js";
import { workflowRoutes } from "./workflows.js";

export function apiRoutes(api: DescribedRouter, deps: AppDeps): void {
  executionRoutes(api, deps);
  activityRoutes(api, deps);
  catalogRoutes(api, deps);
  directoryRoutes(api, deps);
  oauthRoutes(api, deps);
  oauthServerApiRoutes(api, deps);
  identityRoutes(api, deps);
  billingRoutes(api, deps);
  contentRoutes(api, deps);
  workflowRoutes(api, deps);
  webhooksRoutes(api, deps);
}
