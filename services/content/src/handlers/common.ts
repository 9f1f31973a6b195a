/** What every content handler uses: the caller, the id check that turns a malformed id into NOT_FOUND, timestamps. */
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { requirePrincipal } from "@toolport/kit/rpc";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs: anything else names nothing (answered like an unknown id, never as a database error). */
export const isId = (value: string): boolean => UUID.test(value);

export const ts = (d: Date | null): Timestamp | undefined => (d ? timestampFromDate(d) : undefined);

export const caller = (context: HandlerContext): Principal => requirePrincipal(context);
export const jwtCaller = (context: HandlerContext): Principal => requirePrincipal(context, { jwt: true });
