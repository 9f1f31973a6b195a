/**
 * /v1 routes served by the execution service. Generic rows map one-to-one onto an RPC; an endpoint whose
 * HTTP shape differs from its messages gets its own handler here.
 */
import type Router from "@koa/router";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import type { AppDeps } from "../app.js";
import { mountRpcRoutes, type RpcRoute } from "./rpc-route.js";

export const executionRouteTable: RpcRoute[] = [
  ["get", "/tools/executions/:execution_id/result", "api_key_or_jwt", "getExecutionResult"],
  ["post", "/tools/call/batch", "api_key", "callBatch"],
  ["post", "/tools/call/:tool_id", "api_key", "callTool"],
];

export function executionRoutes(router: Router, deps: AppDeps): void {
  mountRpcRoutes(router, deps, ExecutionService, deps.clients.execution, executionRouteTable);
}
