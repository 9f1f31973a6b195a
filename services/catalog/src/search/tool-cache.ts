/**
 * Search candidates as records, kept in memory so a search does not re-read the same rows from
 * Postgres every time. Entries are dropped whenever the tool changes: the index feeder invalidates
 * on every toolport.catalog.tool.changed event (each replica) and right after this replica's own
 * writes, so a cached record is at most one event behind. Time-based rules (sunset) and per-caller
 * facts (credentials, reliability) are never cached.
 */
import type { ToolWithService } from "../domain/model.js";

export class ToolCache {
  private readonly entries = new Map<string, ToolWithService>();

  constructor(private readonly maxEntries = 20_000) {}

  /** The records for `ids` (those that exist), loading the missing ones with `load`. */
  async get(ids: string[], load: (missing: string[]) => Promise<ToolWithService[]>): Promise<Map<string, ToolWithService>> {
    const out = new Map<string, ToolWithService>();
    const missing: string[] = [];
    for (const id of ids) {
      const hit = this.entries.get(id);
      if (hit) out.set(id, hit);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const pair of await load(missing)) {
        out.set(pair.tool.id, pair);
        this.entries.set(pair.tool.id, pair);
      }
      while (this.entries.size > this.maxEntries) {
        const oldest = this.entries.keys().next().value as string;
        this.entries.delete(oldest);
      }
    }
    return out;
  }

  invalidate(ids: string[]): void {
    for (const id of ids) this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }
}
