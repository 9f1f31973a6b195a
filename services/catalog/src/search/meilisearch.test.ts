/**
 * The contract suite against a real Meilisearch at MEILI_URL (key: MEILI_MASTER_KEY or MEILI_KEY).
 * Without a reachable server the suite is skipped, and its name says why.
 */
import { randomBytes } from "node:crypto";
import { createLogger } from "@toolport/kit/logger";
import { Meilisearch } from "meilisearch";
import { engineContract } from "./engine.contract.js";
import { MeilisearchEngine } from "./meilisearch.js";
import type { SearchEngine } from "./types.js";

const log = createLogger("search-test", "silent");
const url = process.env.MEILI_URL;
const key = process.env.MEILI_MASTER_KEY ?? process.env.MEILI_KEY;

async function unreachableReason(): Promise<string | undefined> {
  if (!url) return "MEILI_URL is not set";
  const healthy = await new Meilisearch({ host: url, apiKey: key, timeout: 2_000 }).isHealthy().catch(() => false);
  return healthy ? undefined : `Meilisearch at ${url} is not reachable`;
}

const skipReason = await unreachableReason();
const indexes = new Map<SearchEngine, string>();

engineContract(
  "meilisearch",
  {
    async create() {
      const indexUid = `tools_test_${randomBytes(4).toString("hex")}`;
      const engine = new MeilisearchEngine({ url: url as string, key, indexUid }, log);
      indexes.set(engine, indexUid);
      return engine;
    },
    async dispose(engine) {
      const uid = indexes.get(engine);
      if (uid) await new Meilisearch({ host: url as string, apiKey: key }).deleteIndexIfExists(uid);
    },
  },
  skipReason,
);
