/**
 * Revocation across quota leases: after a key is revoked, or its owner removed from an organization
 * (both committed), every execution process holding a live lease on it is asked over NATS to drop the
 * lease (`_toolport.leases.<holder>`, DropAllowanceLeases). The revoke answers once each holder has
 * replied or its lease has run out (at most ALLOWANCE_LEASE_MS): a holder that cannot be reached is
 * waited out, never trusted. From then on no lease on the key exists anywhere, and a new one is refused
 * by the key check in lease_call_allowance.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";
import { DropAllowanceLeasesSchema } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import type { NatsConnection } from "nats";
import { type LeaseTarget, liveHolders } from "../store/leases.js";

/** The NATS subject a lease holder listens on. */
export const leaseDropSubject = (holder: string) => `_toolport.leases.${holder}`;

export interface LeaseDropper {
  drop(target: LeaseTarget): Promise<void>;
}

export function leaseDropper(deps: { pool: Pool; nc: NatsConnection; log: Logger }): LeaseDropper {
  return {
    async drop(target) {
      const holders = await liveHolders(deps.pool, target);
      if (holders.length === 0) return;
      const payload = toBinary(
        DropAllowanceLeasesSchema,
        create(
          DropAllowanceLeasesSchema,
          "keyId" in target ? { keyId: target.keyId } : { accountId: target.accountId, organizationId: target.organizationId },
        ),
      );
      await Promise.all(
        holders.map(async ({ holder, leftMs }) => {
          const started = Date.now();
          try {
            await deps.nc.request(leaseDropSubject(holder), payload, { timeout: Math.max(50, leftMs) });
            return;
          } catch (err) {
            deps.log.warn(
              { err: (err as Error).message, holder, left_ms: leftMs },
              "lease holder did not confirm the drop; waiting its lease out",
            );
          }
          const rest = leftMs - (Date.now() - started);
          if (rest > 0) await new Promise((r) => setTimeout(r, rest));
        }),
      );
    },
  };
}
