/**
 * The rows of the Tool shape (tool-pages.ts PAGE_TOOL) and of their services, kept in memory by row
 * version, so the list routes, the search's page and a service's tools do not rebuild the same JSON in
 * Postgres and parse it again on every request (issue 30: at 100,085 tools that was 3-5 ms of a 20-tool
 * GET /tools page in Postgres, the largest serial part of the request, and most of its allocation here).
 *
 * A page's statement reads only the sort keys and each row's version (`xmin`, which every write of the
 * row changes, whoever writes it); a cached row is used only when its version is the one the statement
 * saw, so the cache never answers with a row the statement would not have read. What is missing or stale
 * is read in one statement per table. Per-caller facts (readiness, credentials, reliability) and time
 * rules (sunset) are applied after, as before, and are never cached.
 *
 * Bounded by an estimate of the bytes it holds (the JSON text it keeps plus a fixed overhead per row);
 * the least recently used rows go first.
 */
import type { ServiceRecord, ToolRecord } from "../domain/model.js";

/** A row as a page statement saw it: its id and its version. */
export interface RowKey {
  id: string;
  version: string;
}

interface Entry<T> {
  version: string;
  value: T;
  bytes: number;
}

/** Per cached row, beside the text it holds: the record's objects and the map entry (an estimate). */
const ROW_OVERHEAD_BYTES = 2048;

export class PageCache {
  private readonly tools = new Map<string, Entry<ToolRecord>>();
  private readonly services = new Map<string, Entry<ServiceRecord>>();
  private held = 0;

  constructor(private readonly maxBytes: number) {}

  /** Bytes held (the estimate the bound applies to). */
  get bytes(): number {
    return this.held;
  }

  tool(key: RowKey): ToolRecord | undefined {
    return this.hit(this.tools, key);
  }

  service(key: RowKey): ServiceRecord | undefined {
    return this.hit(this.services, key);
  }

  putTool(key: RowKey, tool: ToolRecord): void {
    const raw = tool.rawJson;
    let text = tool.description.length + (raw?.output?.length ?? 0);
    for (const schema of Object.values(raw?.schemas ?? {})) text += schema.length;
    this.put(this.tools, key, tool, text);
  }

  putService(key: RowKey, service: ServiceRecord): void {
    this.put(this.services, key, service, service.summary.length);
  }

  private hit<T>(map: Map<string, Entry<T>>, key: RowKey): T | undefined {
    const entry = map.get(key.id);
    if (entry === undefined || entry.version !== key.version) return undefined;
    // Most recently used last: Map keeps insertion order.
    map.delete(key.id);
    map.set(key.id, entry);
    return entry.value;
  }

  private put<T>(map: Map<string, Entry<T>>, key: RowKey, value: T, textLength: number): void {
    const bytes = ROW_OVERHEAD_BYTES + 2 * textLength;
    if (bytes > this.maxBytes / 16) return; // one row never takes a large share
    const old = map.get(key.id);
    if (old !== undefined) {
      this.held -= old.bytes;
      map.delete(key.id);
    }
    map.set(key.id, { version: key.version, value, bytes });
    this.held += bytes;
    while (this.held > this.maxBytes) {
      // Evict from the larger table first, oldest use first.
      const from = this.tools.size >= this.services.size ? this.tools : this.services;
      const oldest = from.entries().next().value as [string, Entry<unknown>] | undefined;
      if (oldest === undefined) break;
      from.delete(oldest[0]);
      this.held -= oldest[1].bytes;
    }
  }
}
