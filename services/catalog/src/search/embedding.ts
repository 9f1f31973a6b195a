/**
 * Client of an OpenAI-compatible embeddings API (`POST {baseUrl}/embeddings` with `{model, input}`,
 * answering `{data: [{index, embedding}]}`), the optional semantic signal of both engines.
 * Vectors are returned unit-length so a dot product is the cosine similarity.
 * The address is the operator's own EMBEDDING_URL, never a caller's, so it is dialled with the plain
 * global fetch, outside the outbound address guard (a local model server on 127.0.0.1 is a normal setup).
 */
import type { SearchDocument } from "./types.js";

export interface Embedder {
  /** One unit-length vector per input text, in order. Throws when the API cannot answer. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** The API and model, which decide the vectors (a persisted index made with others is not read). */
  readonly identity?: string;
}

export interface EmbeddingConfig {
  /** Base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  url: string;
  model?: string;
  key?: string;
  /** Texts per request. */
  batchSize?: number;
  /** Deadline of one request. */
  timeoutMs?: number;
}

export class EmbeddingError extends Error {
  override name = "EmbeddingError";
}

export function createEmbedder(config: EmbeddingConfig): Embedder {
  const endpoint = `${config.url.replace(/\/+$/, "")}/embeddings`;
  const batchSize = config.batchSize ?? 64;
  const timeoutMs = config.timeoutMs ?? 10_000;

  async function embedBatch(input: string[]): Promise<Float32Array[]> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (config.key) headers.authorization = `Bearer ${config.key}`;
    const res = await fetch(endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: config.model ?? "text-embedding-3-small", input }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new EmbeddingError(`embeddings API answered ${res.status}`);
    const body = (await res.json()) as { data?: { index?: number; embedding?: unknown }[] };
    if (!Array.isArray(body.data) || body.data.length !== input.length) {
      throw new EmbeddingError("embeddings API answered without one embedding per input");
    }
    const out: Float32Array[] = new Array(input.length);
    body.data.forEach((item, position) => {
      const index = typeof item.index === "number" ? item.index : position;
      if (!Array.isArray(item.embedding) || !item.embedding.every((x) => typeof x === "number")) {
        throw new EmbeddingError("embeddings API answered an embedding that is not an array of numbers");
      }
      out[index] = normalize(Float32Array.from(item.embedding as number[]));
    });
    return out;
  }

  return {
    identity: `${endpoint} ${config.model ?? "text-embedding-3-small"}`,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) out.push(...(await embedBatch(texts.slice(i, i + batchSize))));
      return out;
    },
  };
}

function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) (v[i] as number) /= norm;
  return v;
}

/** The text a tool is embedded from: what it does and which API it belongs to. */
export function embeddingText(doc: SearchDocument): string {
  return [doc.name, doc.serviceName, doc.description, doc.tags.join(", ")].filter((s) => s.length > 0).join(". ");
}
