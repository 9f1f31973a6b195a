/**
 * The named schemas of the description (`#/components/schemas/<Name>`): the spec's shapes (schemas.ts)
 * and each area's own (operations/<area>.ts). Operations refer to them with `ref(name)`.
 */
import { activitySchemas } from "./operations/activity.js";
import { billingSchemas } from "./operations/billing.js";
import { catalogSchemas } from "./operations/catalog.js";
import { contentSchemas } from "./operations/content.js";
import { directorySchemas } from "./operations/directory.js";
import { executionSchemas } from "./operations/execution.js";
import { identitySchemas } from "./operations/identity.js";
import { oauthSchemas } from "./operations/oauth.js";
import { oauthServerSchemas } from "./operations/oauth-server.js";
import { webhooksSchemas } from "./operations/webhooks.js";
import { workflowsSchemas } from "./operations/workflows.js";
import {
  batchElement,
  closed,
  executionResult,
  oneOf,
  publicTool,
  reliability,
  type Schema,
  service,
  singleCallResult,
  string,
  stringOrNull,
  tool,
  workflow,
  workflowSummary,
} from "./schemas.js";

/** SERVICE-SPEC: "The machine-readable description also gives a shorter service shape". */
const serviceSummary = closed({
  id: string,
  name: string,
  description: string,
  summary: string,
  url: { ...stringOrNull, description: "The service's website." },
  logo_url: stringOrNull,
  version: string,
});

export const componentSchemas: Record<string, Schema> = {
  Tool: tool,
  PublicTool: publicTool,
  Reliability: reliability,
  Service: service,
  ServiceSummary: serviceSummary,
  ExecutionResult: executionResult,
  BatchElement: batchElement,
  SingleCallResult: singleCallResult,
  Workflow: workflow,
  WorkflowSummary: workflowSummary(oneOf("private", "public")),
  ...catalogSchemas,
  ...directorySchemas,
  ...oauthSchemas,
  ...oauthServerSchemas,
  ...executionSchemas,
  ...identitySchemas,
  ...activitySchemas,
  ...billingSchemas,
  ...contentSchemas,
  ...workflowsSchemas,
  ...webhooksSchemas,
};
