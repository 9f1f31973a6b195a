/**
 * The execution service's gRPC routes. Every RPC of ExecutionService is registered; those without a handler
 * yet answer UNIMPLEMENTED (the gateway maps that to 501) until their issue fills them in.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { ServiceContext } from "@toolport/kit/service";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";

export function routes(router: ConnectRouter, _ctx: ServiceContext<unknown>): void {
  router.service(ExecutionService, {});
}
