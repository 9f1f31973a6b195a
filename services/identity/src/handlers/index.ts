/** All IdentityService handlers, from one set of dependencies. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { accountHandlers } from "./accounts.js";
import { counterHandlers } from "./counters.js";
import type { IdentityDeps } from "./deps.js";
import { keyHandlers } from "./keys.js";
import { oauthServerHandlers } from "./oauth-server.js";
import { organizationHandlers } from "./organizations.js";

export function createIdentityHandlers(deps: IdentityDeps): ServiceImpl<typeof IdentityService> {
  return {
    ...accountHandlers(deps),
    ...keyHandlers(deps),
    ...organizationHandlers(deps),
    ...counterHandlers(deps),
    ...oauthServerHandlers(deps),
  };
}
