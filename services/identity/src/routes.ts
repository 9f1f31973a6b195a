/** The identity service's gRPC routes: every RPC of IdentityService, on the parts built in deps.ts. */
import type { ConnectRouter } from "@connectrpc/connect";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import type { IdentityDeps } from "./handlers/deps.js";
import { createIdentityHandlers } from "./handlers/index.js";

export function routes(router: ConnectRouter, deps: IdentityDeps): void {
  router.service(IdentityService, createIdentityHandlers(deps));
}
