/**
 * The content service's parts, built once per start (role.ts `deps`): skills and site stores, the
 * catalog client (a skill's service, the services on a crawled domain), the outbound address policy and
 * the crawl queue. Workflows run through the execution service, driven by the workflow runner
 * (workflows/runner.ts).
 */
import { InputValidator } from "@toolport/kit/input-validator";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { createServiceClient } from "@toolport/kit/rpc";
import type { ServiceContext } from "@toolport/kit/service";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { ExecutionClient } from "./clients/execution.js";
import type { ContentConfig } from "./config.js";
import { CrawlQueue } from "./crawl-queue.js";
import { ExtractPool } from "./sites/extract-pool.js";
import { SiteStore } from "./store/sites.js";
import { SkillStore } from "./store/skills.js";
import { WorkflowStore } from "./store/workflows.js";
import { WorkflowPruner } from "./workflows/pruner.js";
import { WorkflowRunner } from "./workflows/runner.js";

export interface ContentDeps {
  skills: SkillStore;
  sites: SiteStore;
  outbound: Outbound;
  policy: AddressPolicy;
  crawls: CrawlQueue;
  catalog: ReturnType<typeof createServiceClient<typeof CatalogService>>;
  workflows: WorkflowStore;
  runner: WorkflowRunner;
  pruner: WorkflowPruner;
  validator: InputValidator;
  syncWaitMs: number;
  /** Run on shutdown after the background work (pruner, runner, crawl queue) has stopped. */
  close(): Promise<void>;
}

export function createDeps(ctx: ServiceContext<ContentConfig>): ContentDeps {
  const { config, log, pool } = ctx;
  const policy = new AddressPolicy(config.CONTENT_OUTBOUND_ALLOW, "CONTENT_OUTBOUND_ALLOW", {
    dnsServers: config.OUTBOUND_DNS_SERVERS,
  });
  const outbound = new Outbound({ policy, connectionsPerOrigin: 4 });
  const catalog = createServiceClient(CatalogService, config.CATALOG_URL);
  const sites = new SiteStore(pool);
  const crawls = new CrawlQueue({
    pool,
    sites,
    outbound,
    log,
    concurrency: config.CONTENT_CRAWL_CONCURRENCY,
    leaseMs: config.CONTENT_CRAWL_LEASE_MS,
    pollMs: config.CONTENT_CRAWL_POLL_MS,
    limits: {
      maxPages: config.CONTENT_CRAWL_MAX_PAGES,
      maxBytes: config.CONTENT_CRAWL_MAX_BYTES,
      pageTimeoutMs: config.CONTENT_CRAWL_PAGE_TIMEOUT_MS,
    },
    extractor: new ExtractPool({
      threads: config.CONTENT_EXTRACT_THREADS,
      queue: config.CONTENT_EXTRACT_QUEUE,
      heapMb: config.CONTENT_EXTRACT_HEAP_MB,
    }),
    catalogServices: async (domain) => (await catalog.findServicesOnDomain({ domain })).services,
  });
  const workflows = new WorkflowStore(pool, ctx.relaxedPool(4));
  const runner = new WorkflowRunner({
    pool,
    store: workflows,
    execution: new ExecutionClient(
      createServiceClient(ExecutionService, config.EXECUTION_URL, { timeoutMs: config.CONTENT_WORKFLOW_STEP_TIMEOUT_MS }),
    ),
    log,
    nudge: () => ctx.outbox.nudge(),
    leaseMs: config.CONTENT_WORKFLOW_LEASE_MS,
    pollMs: config.CONTENT_WORKFLOW_POLL_MS,
    concurrency: config.CONTENT_WORKFLOW_CONCURRENCY,
    maxAttempts: config.CONTENT_WORKFLOW_MAX_ATTEMPTS,
  });
  return {
    skills: new SkillStore(pool),
    sites,
    outbound,
    policy,
    crawls,
    catalog,
    workflows,
    runner,
    pruner: new WorkflowPruner({
      pool,
      log,
      retentionDays: config.CONTENT_WORKFLOW_RETENTION_DAYS,
      intervalMs: config.CONTENT_WORKFLOW_PRUNE_INTERVAL_MS,
      batchSize: config.CONTENT_WORKFLOW_PRUNE_BATCH,
    }),
    validator: new InputValidator(log),
    syncWaitMs: config.CONTENT_WORKFLOW_SYNC_WAIT_MS,
    close: () => outbound.close(),
  };
}
