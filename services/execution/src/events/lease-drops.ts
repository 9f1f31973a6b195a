/**
 * Identity's revocations reaching this process's quota leases: identity sends DropAllowanceLeases as a
 * NATS request on `_toolport.leases.<holder>` (see identity's events/lease-drops.ts) and waits for the
 * reply, which is sent once the leases are dropped. Core NATS, not JetStream: a drop that finds nobody
 * listening makes identity wait the lease out instead.
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { Logger } from "@toolport/kit/logger";
import { DropAllowanceLeasesSchema } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import type { NatsConnection } from "nats";
import type { AllowanceLeases } from "../domain/allowance.js";

export function followLeaseDrops(nc: NatsConnection, leases: AllowanceLeases, log: Logger): { stop(): Promise<void> } {
  const sub = nc.subscribe(`_toolport.leases.${leases.holder}`, {
    callback(err, msg) {
      if (err) {
        log.warn({ err: err.message }, "lease drop subscription failed");
        return;
      }
      try {
        const drop = fromBinary(DropAllowanceLeasesSchema, msg.data);
        const target = drop.keyId ? { keyId: drop.keyId } : { accountId: drop.accountId, organizationId: drop.organizationId };
        const dropped = leases.drop(target);
        log.info({ ...target, dropped }, "quota leases dropped");
        msg.respond();
      } catch (e) {
        // No reply: identity waits the lease out, which is still safe.
        log.warn({ err: (e as Error).message }, "an unreadable lease drop was ignored");
      }
    },
  });
  return {
    async stop() {
      sub.unsubscribe();
    },
  };
}
