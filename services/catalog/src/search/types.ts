/**
 * The search interface the catalog's handlers use. Two engines implement it: the embedded engine
 * (default, in-process, no server) and Meilisearch (when MEILI_URL is set). Both pass the contract
 * suite in engine.contract.ts. The engines index and rank only; visibility, readiness, deprecation and
 * the ordering rules are the catalog's (it passes `candidateIds` when it has already narrowed the set).
 */
import type { Logger } from "@toolport/kit/logger";

/** One tool as the search engines see it: its own text plus its service's. */
export interface SearchDocument {
  id: string;
  slug: string | null;
  name: string;
  description: string;
  serviceId: string;
  serviceName: string;
  serviceSlug: string;
  serviceDescription: string;
  tags: string[];
  parameters: { name: string; description: string }[];
  isDemo: boolean;
  active: boolean;
  visibility: string;
  organizationId: string | null;
}

/** A match: the tool id and a relevance score (higher is better; comparable only within one answer). */
export interface SearchHit {
  id: string;
  score: number;
}

export interface SearchOptions {
  /** Most hits to return. */
  limit: number;
  /** Only tools of this service. */
  serviceId?: string;
  /** Only tools carrying every one of these tags. */
  tags?: string[];
  /** Only tools among these ids (the catalog's pre-filtered set); an empty array matches nothing. */
  candidateIds?: string[];
  /**
   * Only tools a reader sees (the catalog's rule, domain/access.ts canSee): public services' tools; with an
   * organization, also internal services' and that organization's; with `all` (a platform admin), every
   * tool. Absent: no filter. So a reader who sees a few hundred of 100,000 tools gets its best matches
   * without the catalog reading and dropping thousands of others.
   */
  visibleTo?: { organizationId: string | null; all?: boolean };
}

/** Whether a document passes `visibleTo` (both engines' rule, written once). */
export function visibleTo(doc: Pick<SearchDocument, "visibility" | "organizationId">, who: SearchOptions["visibleTo"]): boolean {
  if (who === undefined || who.all || doc.visibility === "public") return true;
  return who.organizationId !== null && (doc.visibility === "internal" || doc.organizationId === who.organizationId);
}

export interface SearchEngine {
  readonly name: "embedded" | "meilisearch";
  /** Adds or replaces documents by id; visible to the next search once the promise resolves. */
  upsert(docs: SearchDocument[]): Promise<void>;
  /** Removes documents by id; unknown ids are ignored. */
  remove(ids: string[]): Promise<void>;
  /**
   * Replaces the whole index with these documents (the rebuild from Postgres on start), given at once
   * or in batches as they are read; searches see the previous content until the last batch is in.
   */
  replaceAll(docs: SearchDocument[] | AsyncIterable<SearchDocument[]>): Promise<void>;
  /** Best matches first; an empty or whitespace query gives []. */
  search(query: string, options: SearchOptions): Promise<SearchHit[]>;
  /** Whether the engine can answer now (Meilisearch reachable; always true for the embedded one). */
  healthy(): Promise<boolean>;
  /**
   * An engine that lives in the process can be persisted between runs (search/index-snapshot.ts): a key
   * naming the code and settings its content depends on, the content as data for v8.serialize, and
   * taking such data back. Meilisearch keeps its own index and has none of these.
   */
  snapshotKey?(): string;
  snapshot?(): unknown;
  restore?(state: unknown): void;
  /** Lays the index out as a rebuild of what it holds would (after a restored index was caught up). */
  settle?(): void;
}

/** Configuration of createSearchEngine (search/index.ts), read from the catalog's environment. */
export interface SearchConfig {
  /** Meilisearch address; when set, the Meilisearch engine is used. */
  meiliUrl?: string;
  /** Meilisearch API key (master or an admin key). */
  meiliKey?: string;
  /** Base URL of an OpenAI-compatible embeddings API (POST {embeddingUrl}/embeddings); adds a hybrid signal. */
  embeddingUrl?: string;
  /** Model name sent with each embeddings request. */
  embeddingModel?: string;
  /** Bearer token for the embeddings API. */
  embeddingKey?: string;
}

export type { Logger };
