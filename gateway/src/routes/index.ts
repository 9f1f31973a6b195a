/**
 * Every /v1 endpoint of the spec and of DESIGN.md, with its auth form (the spec's endpoint auth
 * table) and the RPC behind it. Paths with a literal segment come before the parameter that would
 * swallow it (`/tools/search` before `/tools/:tool_id`).
 */
import type { DescMethodUnary, DescService } from "@bufbuild/protobuf";
import type Router from "@koa/router";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import type { AppDeps } from "../app.js";
import type { ServiceClients } from "../clients.js";
import { type AuthMode, auth } from "../middleware/auth.js";
import { rpcHandler } from "./rpc-route.js";

type Verb = "get" | "post" | "put" | "patch" | "delete";
type Route = [Verb, string, AuthMode, keyof ServiceClients, string];

const services: Record<keyof ServiceClients, DescService> = {
  catalog: CatalogService,
  execution: ExecutionService,
  billing: BillingService,
  identity: IdentityService,
  content: ContentService,
  webhooks: WebhooksService,
};

export const routeTable: Route[] = [
  // Catalog (spec 1-10) and publishing (DESIGN.md)
  ["get", "/tools", "api_key", "catalog", "listTools"],
  ["get", "/tools/search", "api_key", "catalog", "searchTools"],
  ["get", "/tools/public/search", "optional", "catalog", "publicSearchTools"],
  ["get", "/tools/recommended", "optional", "catalog", "getRecommendations"],
  ["get", "/tools/name/:tool_name", "api_key", "catalog", "getToolByName"],
  ["get", "/tools/executions/:execution_id/result", "api_key_or_jwt", "execution", "getExecutionResult"],
  ["post", "/tools/call/batch", "api_key", "execution", "callBatch"],
  ["post", "/tools/call/:tool_id", "api_key", "execution", "callTool"],
  ["get", "/tools/:tool_id/describe", "api_key", "catalog", "describeTool"],
  ["get", "/tools/:tool_id", "api_key", "catalog", "getTool"],
  ["patch", "/tools/:tool_id", "api_key_or_jwt", "catalog", "updateTool"],
  ["delete", "/tools/:tool_id", "api_key_or_jwt", "catalog", "deleteTool"],
  ["get", "/services/public", "none", "catalog", "listPublicServices"],
  ["get", "/services/public/:service_id", "none", "catalog", "getPublicService"],
  ["get", "/services/public/:service_id/tools", "none", "catalog", "listPublicServiceTools"],
  ["post", "/services", "api_key_or_jwt", "catalog", "createService"],
  ["get", "/services", "api_key_or_jwt", "catalog", "listServices"],
  ["get", "/services/:service_id", "api_key_or_jwt", "catalog", "getService"],
  ["get", "/services/:service_id/tools", "api_key_or_jwt", "catalog", "listServiceTools"],
  ["patch", "/services/:service_id", "api_key_or_jwt", "catalog", "updateService"],
  ["delete", "/services/:service_id", "api_key_or_jwt", "catalog", "deleteService"],
  ["put", "/services/:service_id/credentials", "api_key_or_jwt", "catalog", "putServiceCredential"],
  ["delete", "/services/:service_id/credentials", "api_key_or_jwt", "catalog", "deleteServiceCredential"],
  // Agents and wallets (spec 16-20)
  ["post", "/agents", "none", "identity", "registerAgent"],
  ["get", "/agents/getting-started", "none", "identity", "getGettingStarted"],
  ["post", "/agents/wallets/fund", "api_key", "billing", "fundWallet"],
  ["post", "/agents/wallets/confirm-deposit", "api_key_or_jwt", "billing", "confirmDeposit"],
  ["get", "/x402/settings", "api_key_or_jwt", "billing", "getSpendingSettings"],
  ["patch", "/x402/settings", "api_key_or_jwt", "billing", "updateSpendingSettings"],
  // Accounts, keys and the client helper (spec 21-22, 35; DESIGN.md)
  ["post", "/auth/signup", "none", "identity", "signup"],
  ["post", "/auth/login", "none", "identity", "login"],
  ["get", "/auth/jwks.json", "none", "identity", "getJwks"],
  ["post", "/api-keys", "api_key_or_jwt", "identity", "createApiKey"],
  ["get", "/api-keys", "api_key_or_jwt", "identity", "listApiKeys"],
  ["delete", "/api-keys/:key_id", "api_key_or_jwt", "identity", "revokeApiKey"],
  ["get", "/api-keys/:key_id/usage", "api_key_or_jwt", "identity", "getApiKeyUsage"],
  ["get", "/coding-client/mcp-json", "api_key_or_jwt", "identity", "getMcpJson"],
  // Webhooks (spec 23-26; JWT only)
  ["post", "/webhooks", "jwt", "webhooks", "createWebhook"],
  ["get", "/webhooks", "jwt", "webhooks", "listWebhooks"],
  ["patch", "/webhooks/:webhook_id", "jwt", "webhooks", "updateWebhook"],
  ["delete", "/webhooks/:webhook_id", "jwt", "webhooks", "deleteWebhook"],
  ["get", "/webhooks/:webhook_id/deliveries", "jwt", "webhooks", "listDeliveries"],
  // Skills (spec 27-30)
  ["post", "/skills", "api_key_or_jwt", "content", "createSkill"],
  ["get", "/skills/my", "jwt", "content", "listMySkills"],
  ["get", "/skills/:skill_id", "api_key_or_jwt", "content", "getSkill"],
  ["post", "/skills/:skill_id/submissions", "api_key_or_jwt", "content", "createSkillSubmission"],
  ["get", "/skill-submissions/:submission_id", "jwt", "content", "getSkillSubmission"],
  ["post", "/skill-submissions/:submission_id/review", "jwt", "content", "reviewSkillSubmission"],
  // Workflows (spec 31-34; DESIGN.md)
  ["get", "/workflows/public", "none", "content", "listPublicWorkflows"],
  ["post", "/workflows", "api_key_or_jwt", "content", "createWorkflow"],
  ["get", "/workflows/:workflow_id", "optional", "content", "getWorkflow"],
  ["patch", "/workflows/:workflow_id", "api_key_or_jwt", "content", "updateWorkflow"],
  ["delete", "/workflows/:workflow_id", "api_key_or_jwt", "content", "deleteWorkflow"],
  ["post", "/workflows/:workflow_id/execute", "api_key_or_jwt", "content", "executeWorkflow"],
  ["get", "/workflow-runs/:run_id", "api_key_or_jwt", "content", "getWorkflowRun"],
  // Site records (spec 11)
  ["get", "/agent-sites/domain/:domain", "none", "content", "getSiteByDomain"],
];

export function apiRoutes(router: Router, deps: AppDeps): void {
  for (const [verb, path, mode, serviceKey, rpc] of routeTable) {
    const method = services[serviceKey].method[rpc] as DescMethodUnary | undefined;
    const client = deps.clients[serviceKey] as unknown as Record<string, (req: never) => Promise<unknown>>;
    const call = client[rpc];
    if (!method || !call) throw new Error(`route ${verb.toUpperCase()} ${path}: ${serviceKey} has no RPC ${rpc}`);
    for (const param of path.matchAll(/:(\w+)/g)) {
      if (!method.input.fields.some((f) => f.name === param[1])) {
        throw new Error(`route ${verb.toUpperCase()} ${path}: ${method.input.typeName} has no field ${param[1]}`);
      }
    }
    router[verb](path, auth(deps.clients.identity, mode), rpcHandler(method, call.bind(client)));
  }
}
