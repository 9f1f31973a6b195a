/** The execution service's gRPC routes: every RPC of ExecutionService, served by its handlers. */
import type { ConnectRouter } from "@connectrpc/connect";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import type { ExecutionDeps } from "./deps.js";
import { createExecutionHandlers } from "./handlers/execution-handlers.js";

export function routes(router: ConnectRouter, deps: ExecutionDeps): void {
  router.service(ExecutionService, createExecutionHandlers(deps));
}
