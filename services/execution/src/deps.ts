/**
 * The execution service's parts, built once per start (role.ts `deps`): its store, clients of catalog,
 * billing and identity, the guarded outbound HTTP client and the upstream runner.
 */
import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { currentScope } from "@toolport/kit/context";
import { InputValidator } from "@toolport/kit/input-validator";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { createServiceClient } from "@toolport/kit/rpc";
import type { ServiceContext } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { UpstreamRunner } from "./adapters/runner.js";
import { SecretRefs } from "./adapters/secret-refs.js";
import { BatchRunner } from "./batches/batch-runner.js";
import { GrpcBilling, GrpcCatalog, GrpcIdentity } from "./clients/service-ports.js";
import { CachingCatalog } from "./clients/tool-cache.js";
import type { ExecutionConfig } from "./config.js";
import { AllowanceLeases } from "./domain/allowance.js";
import { ConsentTokens } from "./domain/consent.js";
import { Continuations, continuationKey } from "./domain/continuation.js";
import { Executor } from "./domain/executor.js";
import { PgActivityStore } from "./store/activity-store.js";
import { PgBatchStore } from "./store/batches-store.js";
import { PgExecutionStore } from "./store/executions-store.js";

export interface ExecutionDeps {
  executor: Executor;
  /** Callers' quota leases on identity's counters; told to drop a key's leases over NATS (role.ts). */
  allowance: AllowanceLeases;
  /** Resolved tools, kept briefly; live once the tool change follower runs (main.ts). */
  tools: CachingCatalog;
  store: PgExecutionStore;
  /** The call log: refused calls recorded, pages read (issue 33). */
  activity: PgActivityStore;
  /** Async batches (StartBatch): recorded, run in the background, taken over after a restart. */
  batches: BatchRunner;
  batchStore: PgBatchStore;
  runner: UpstreamRunner;
  outbound: Outbound;
  /** Run on shutdown after the background work has stopped: the leases, the runner, outbound HTTP. */
  close(): Promise<void>;
}

/** The services execution calls: gRPC clients of their URLs; the handler tests serve them in process. */
export interface ExecutionPeers {
  catalog: Client<typeof CatalogService>;
  billing: Client<typeof BillingService>;
  identity: Client<typeof IdentityService>;
}

export function createDeps(
  ctx: ServiceContext<ExecutionConfig>,
  peers: ExecutionPeers = {
    catalog: createServiceClient(CatalogService, ctx.config.CATALOG_URL),
    billing: createServiceClient(BillingService, ctx.config.BILLING_URL),
    identity: createServiceClient(IdentityService, ctx.config.IDENTITY_URL),
  },
): ExecutionDeps {
  const { config, log, pool } = ctx;
  if (!config.EXECUTION_CONSENT_SECRET) {
    log.warn("EXECUTION_CONSENT_SECRET is unset: confirm tokens are signed with a random key and do not survive a restart");
  }
  const consentKey = config.EXECUTION_CONSENT_SECRET ? Buffer.from(config.EXECUTION_CONSENT_SECRET) : randomBytes(32);
  const outbound = new Outbound({
    policy: new AddressPolicy(config.EXECUTION_OUTBOUND_ALLOW, "EXECUTION_OUTBOUND_ALLOW", {
      dnsServers: config.OUTBOUND_DNS_SERVERS,
    }),
  });
  const runner = new UpstreamRunner({
    outbound,
    secrets: new SecretRefs({
      envPrefix: config.EXECUTION_ENV_SECRET_PREFIX,
      vaultAddr: config.VAULT_ADDR,
      vaultToken: config.VAULT_TOKEN,
      vaultNamespace: config.VAULT_NAMESPACE,
      vaultPathPrefix: config.EXECUTION_VAULT_PATH_PREFIX,
    }),
    log,
    timeoutMs: config.EXECUTION_UPSTREAM_TIMEOUT_MS,
    maxResponseBytes: config.EXECUTION_MAX_RESPONSE_BYTES,
  });
  // Commits that need not wait for the WAL flush: idempotency claims and refused calls' records.
  const relaxed = ctx.relaxedPool(4);
  const store = new PgExecutionStore(pool, () => ctx.outbox.nudge(), relaxed);
  const tools = new CachingCatalog(
    new GrpcCatalog(peers.catalog),
    { ttlMs: config.EXECUTION_TOOL_CACHE_MS, maxEntries: 10_000 },
    () => currentScope()?.principal?.isPlatformAdmin ?? false,
  );
  const allowance = new AllowanceLeases(new GrpcIdentity(peers.identity), {
    limit: config.EXECUTION_RATE_LIMIT_PER_MINUTE,
    windowSeconds: 60,
    maxBlock: config.EXECUTION_ALLOWANCE_BLOCK,
  });
  const activity = new PgActivityStore(pool, relaxed);
  const executor = new Executor({
    catalog: tools,
    billing: new GrpcBilling(peers.billing),
    allowance,
    store,
    runner,
    validator: new InputValidator(log),
    consent: new ConsentTokens(consentKey),
    continuations: new Continuations(continuationKey(consentKey)),
    limits: {
      storeMaxChars: config.EXECUTION_STORE_MAX_CHARS,
      upgradeUrl: config.UPGRADE_URL,
      idempotencyLeaseMs: config.EXECUTION_UPSTREAM_TIMEOUT_MS + 30_000,
      oauthRefreshBeforeSeconds: config.EXECUTION_OAUTH_REFRESH_BEFORE_SECONDS,
    },
    log,
    activity,
  });
  const batchStore = new PgBatchStore(pool);
  const batches = new BatchRunner({
    executor,
    store: batchStore,
    log,
    leaseMs: config.EXECUTION_BATCH_LEASE_MS,
    retentionMs: config.EXECUTION_BATCH_RETENTION_MS,
  });
  return {
    executor,
    allowance,
    tools,
    store,
    activity,
    batches,
    batchStore,
    runner,
    outbound,
    async close() {
      await allowance.stop();
      await runner.close();
      await outbound.close();
    },
  };
}
