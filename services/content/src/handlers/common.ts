/** What every content handler uses: the caller (the principal the gateway sent), timestamps. */
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { principalKey, requirePrincipal } from "@toolport/kit/rpc";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";

export const ts = (d: Date | null): Timestamp | undefined => (d ? timestampFromDate(d) : undefined);

export const caller = (context: HandlerContext): Principal => requirePrincipal(context);
export const jwtCaller = (context: HandlerContext): Principal => requirePrincipal(context, { jwt: true });

/** The principal when there is one (public reads need none). */
export function maybeCaller(context: HandlerContext): Principal | undefined {
  const p = context.values.get(principalKey);
  return p?.accountId ? p : undefined;
}
