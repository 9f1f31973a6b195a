/** The catalog's own environment, on top of the variables every service reads (kit/service.ts). */
import { url } from "@toolport/kit/config";
import { z } from "zod";

export const catalogEnv = {
  PUBLIC_URL: url(["http", "https"], "http://localhost:8080").describe(
    "address clients use for the gateway (without /v1); configuration_url links point there",
  ),
  CATALOG_SECRET_KEY: z
    .string()
    .optional()
    .describe(
      "32-byte key (64 hex characters or base64) sealing stored upstream credentials; generate with openssl rand -hex 32",
    ),
  MEILI_URL: url(["http", "https"])
    .optional()
    .describe("Meilisearch address; when set, search uses Meilisearch instead of the embedded engine"),
  MEILI_KEY: z
    .string()
    .optional()
    .describe("Meilisearch API key (master or admin key); MEILI_MASTER_KEY is read when this is unset"),
  MEILI_MASTER_KEY: z.string().optional().describe("Meilisearch master key, used when MEILI_KEY is unset"),
  EMBEDDING_URL: url(["http", "https"])
    .optional()
    .describe("base URL of an OpenAI-compatible embeddings API (POST {url}/embeddings); adds a semantic signal to search"),
  EMBEDDING_MODEL: z.string().optional().describe("model name sent with each embeddings request"),
  EMBEDDING_KEY: z.string().optional().describe("bearer token for the embeddings API"),
};
