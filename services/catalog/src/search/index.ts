/**
 * Chooses the search engine from configuration: Meilisearch when `meiliUrl` is set, else the embedded
 * engine. Either gains the embedding signal when `embeddingUrl` is set.
 */
import { EmbeddedEngine } from "./embedded.js";
import { createEmbedder, type Embedder } from "./embedding.js";
import { MeilisearchEngine } from "./meilisearch.js";
import type { Logger, SearchConfig, SearchEngine } from "./types.js";

export type { SearchConfig, SearchDocument, SearchEngine, SearchHit, SearchOptions } from "./types.js";

export async function createSearchEngine(config: SearchConfig, log: Logger): Promise<SearchEngine> {
  const embedder: Embedder | undefined = config.embeddingUrl
    ? createEmbedder({ url: config.embeddingUrl, model: config.embeddingModel, key: config.embeddingKey })
    : undefined;
  if (config.meiliUrl) {
    const engine = new MeilisearchEngine({ url: config.meiliUrl, key: config.meiliKey, embedder }, log);
    // Not fatal: the catalog starts, search answers 503 until Meilisearch is reachable.
    if (!(await engine.healthy())) log.warn({ meili_url: config.meiliUrl }, "Meilisearch is not reachable yet");
    log.info({ engine: engine.name, embeddings: embedder !== undefined }, "search engine ready");
    return engine;
  }
  const engine = new EmbeddedEngine(log, { embedder });
  log.info({ engine: engine.name, embeddings: embedder !== undefined }, "search engine ready");
  return engine;
}
