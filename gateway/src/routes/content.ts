/**
 * /v1 routes served by the content service. Generic rows map one-to-one onto an RPC; an endpoint whose
 * HTTP shape differs from its messages gets its own handler here.
 */
import type Router from "@koa/router";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import type { AppDeps } from "../app.js";
import { mountRpcRoutes, type RpcRoute } from "./rpc-route.js";

export const contentRouteTable: RpcRoute[] = [
  ["post", "/skills", "api_key_or_jwt", "createSkill"],
  ["get", "/skills/my", "jwt", "listMySkills"],
  ["get", "/skills/:skill_id", "api_key_or_jwt", "getSkill"],
  ["post", "/skills/:skill_id/submissions", "api_key_or_jwt", "createSkillSubmission"],
  ["get", "/skill-submissions/:submission_id", "jwt", "getSkillSubmission"],
  ["post", "/skill-submissions/:submission_id/review", "jwt", "reviewSkillSubmission"],
  ["get", "/workflows/public", "none", "listPublicWorkflows"],
  ["post", "/workflows", "api_key_or_jwt", "createWorkflow"],
  ["get", "/workflows/:workflow_id", "optional", "getWorkflow"],
  ["patch", "/workflows/:workflow_id", "api_key_or_jwt", "updateWorkflow"],
  ["delete", "/workflows/:workflow_id", "api_key_or_jwt", "deleteWorkflow"],
  ["post", "/workflows/:workflow_id/execute", "api_key_or_jwt", "executeWorkflow"],
  ["get", "/workflow-runs/:run_id", "api_key_or_jwt", "getWorkflowRun"],
  ["get", "/agent-sites/domain/:domain", "none", "getSiteByDomain"],
];

export function contentRoutes(router: Router, deps: AppDeps): void {
  mountRpcRoutes(router, deps, ContentService, deps.clients.content, contentRouteTable);
}
