/**
 * Every /v1 endpoint of the spec and of DESIGN.md, one module per service behind it. Within a module,
 * paths with a literal segment come before the parameter that would swallow it
 * (`/tools/search` before `/tools/:tool_id`).
 */
import type Router from "@koa/router";
import type { AppDeps } from "../app.js";
import { billingRoutes } from "./billing.js";
import { catalogRoutes } from "./catalog.js";
import { contentRoutes } from "./content.js";
import { executionRoutes } from "./execution.js";
import { identityRoutes } from "./identity.js";
import { webhooksRoutes } from "./webhooks.js";

export function apiRoutes(router: Router, deps: AppDeps): void {
  executionRoutes(router, deps);
  catalogRoutes(router, deps);
  identityRoutes(router, deps);
  billingRoutes(router, deps);
  contentRoutes(router, deps);
  webhooksRoutes(router, deps);
}
