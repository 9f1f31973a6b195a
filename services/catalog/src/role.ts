/**
 * the catalog role (a process of its own, or one of several in one process): see @toolport/kit/service for the start-up and shutdown sequence. Its parts
 * are built in deps.ts; its own background work: the search engine, the built-in catalog seed, the index
 * rebuild, the two consumers (search index sync on every replica; execution facts for reliability, shared)
 * and the hourly pruning of facts past the reliability window.
 */
import { fileURLToPath } from "node:url";
import { builtinServices } from "@toolport/builtins/index";
import { every, type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { catalogEnv } from "./config.js";
import { type CatalogParts, createDeps } from "./deps.js";
import { seedBuiltins } from "./domain/seed.js";
import { startExecutionsConsumer } from "./events/executions-consumer.js";
import { startIndexConsumer } from "./events/index-consumer.js";
import { routes } from "./routes.js";
import { createSearchEngine } from "./search/index.js";
import { pruneExecutions } from "./store/executions-store.js";

/** How often the facts past FACT_RETENTION_DAYS are pruned (they are kept two days past the window). */
const PRUNE_FACTS_EVERY_MS = 60 * 60_000;

const catalog: ServiceDefinition<typeof catalogEnv, CatalogParts> = {
  name: "catalog",
  defaultPort: 50051,
  env: catalogEnv,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  // It runs a durable consumer: its readiness needs NATS too.
  consumesEvents: true,
  services: [CatalogService],
  deps: createDeps,
  routes,
  async background(deps, ctx) {
    const { config, log } = ctx;
    if (!config.CATALOG_SECRET_KEY) {
      log.warn(
        "CATALOG_SECRET_KEY is not set: stored credentials are sealed with the local development key; set it in production",
      );
    }
    deps.index.attach(
      await createSearchEngine(
        {
          meiliUrl: config.MEILI_URL,
          meiliKey: config.MEILI_KEY ?? config.MEILI_MASTER_KEY,
          embeddingUrl: config.EMBEDDING_URL,
          embeddingModel: config.EMBEDDING_MODEL,
          embeddingKey: config.EMBEDDING_KEY,
        },
        log,
      ),
    );
    await seedBuiltins(deps.store, builtinServices, log);
    const indexConsumer = await startIndexConsumer(ctx.nc, deps.index, log);
    // Meilisearch being down must not keep the catalog from starting: search answers 503 until it is back.
    const rebuilt = indexConsumer.rebuildAndFollow();
    // The import thread starts after the rebuild, not beside it (ImportPool.warm).
    void rebuilt.then(() => deps.importer.warm());
    if (!config.MEILI_URL) await rebuilt;
    const executions = await startExecutionsConsumer(ctx.nc, ctx.pool, log);
    // Execution facts past the reliability window, at start and then hourly (every replica: a second
    // prune finds nothing). Not awaited: a large first prune must not hold up the start.
    const pruning = every(
      PRUNE_FACTS_EVERY_MS,
      "pruning execution facts",
      log,
      async () => {
        const deleted = await pruneExecutions(ctx.pool);
        if (deleted > 0) log.info({ deleted }, "execution facts past the reliability window pruned");
      },
      { atStart: true },
    );
    // Stopped in this order, then deps' close() (outbound HTTP, the import threads).
    return [
      indexConsumer,
      // Once the index has stopped following changes: what it holds now is what the file records.
      { stop: () => deps.index.saveSnapshot() },
      executions,
      pruning,
    ];
  },
};

export const catalogRole = serviceRole(catalog);
