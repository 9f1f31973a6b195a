/**
 * The webhooks service's parts, built once per start (role.ts `deps`): the registry and history store,
 * the sealer of signing secrets (WEBHOOKS_SECRET_KEY), the outbound address policy and the sender.
 */

import type { Logger } from "@toolport/kit/logger";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import type { Pool } from "@toolport/kit/pg";
import { Sealer } from "@toolport/kit/sealing";
import type { ServiceContext } from "@toolport/kit/service";
import type { WebhooksConfig } from "./config.js";
import { Sender } from "./delivery/sender.js";
import { WebhookStore } from "./store/webhook-store.js";

export interface WebhooksDeps {
  config: WebhooksConfig;
  log: Logger;
  store: WebhookStore;
  sender: Sender;
  senderPool: Pool;
  outbound: Outbound;
  sealer: Sealer;
  policy: AddressPolicy;
  /** Run on shutdown after the background work (the fan-out, then the sender) has stopped. */
  close(): Promise<void>;
}

export function createDeps(ctx: ServiceContext<WebhooksConfig>): WebhooksDeps {
  const { config, log, pool } = ctx;
  if (!config.WEBHOOKS_SECRET_KEY)
    log.warn("WEBHOOKS_SECRET_KEY is not set: signing secrets are sealed with the development default; set it in production");
  const sealer = Sealer.fromSecret(config.WEBHOOKS_SECRET_KEY, {
    setting: "WEBHOOKS_SECRET_KEY",
    developmentPhrase: "toolport local development webhook key",
  });
  const policy = new AddressPolicy(config.WEBHOOKS_OUTBOUND_ALLOW, "WEBHOOKS_OUTBOUND_ALLOW", {
    dnsServers: config.OUTBOUND_DNS_SERVERS,
  });
  const outbound = new Outbound({ policy, connectionsPerOrigin: config.WEBHOOKS_ENDPOINT_CONCURRENCY });
  // The sender's claims and attempt records commit without waiting for the WAL flush: a Postgres crash
  // can only forget a claim (its delivery is claimed again) or an attempt's record (the delivery is sent
  // again), both within at least once; receivers dedupe on X-Svc-Delivery.
  const senderPool = ctx.relaxedPool(10);
  const sender = new Sender({
    pool: senderPool,
    outbound,
    sealer,
    log,
    timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
    endpointConcurrency: config.WEBHOOKS_ENDPOINT_CONCURRENCY,
    circuitMs: config.WEBHOOKS_CIRCUIT_MS,
    pollMs: config.WEBHOOKS_POLL_MS,
  });
  return {
    config,
    log,
    store: new WebhookStore(pool),
    sender,
    senderPool,
    outbound,
    sealer,
    policy,
    close: () => outbound.close(),
  };
}
