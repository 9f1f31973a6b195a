/**
 * Shared by the search benchmarks: the tool-retrieval data format (../shared/bench/toolret/README.md),
 * its mapping onto catalog search documents, and the metrics.
 */
import { readFileSync } from "node:fs";
import type { SearchDocument } from "../../services/catalog/src/search/types.js";

export interface BenchTool {
  id: string;
  name: string;
  description: string;
  service: string;
  parameters: Record<string, { type?: string; description?: string; required?: boolean }>;
}

export interface BenchQuery {
  id: string;
  query: string;
  relevant: string[];
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

/**
 * Benchmark tools grouped the way the catalog groups them: one service per benchmark `service`; a tool
 * without one (apigen's function-style APIs) is a service of its own, named after the tool, as a
 * single-function API would be published.
 */
export function groupByService(tools: BenchTool[]): Map<string, BenchTool[]> {
  const services = new Map<string, BenchTool[]>();
  for (const tool of tools) {
    const key = tool.service.trim() === "" ? `${tool.name} (${tool.id})` : tool.service;
    const list = services.get(key) ?? [];
    list.push(tool);
    services.set(key, list);
  }
  return services;
}

/** Service display name for a group key (the tool's own name for service-less tools). */
export function serviceName(key: string, tools: BenchTool[]): string {
  return (tools[0] as BenchTool).service.trim() === "" ? (tools[0] as BenchTool).name : key;
}

/** The documents the catalog would hand the engine after importing the tools (direct mode). */
export function toSearchDocuments(tools: BenchTool[]): SearchDocument[] {
  const docs: SearchDocument[] = [];
  let n = 0;
  for (const [key, group] of groupByService(tools)) {
    const serviceId = `svc-${n++}`;
    for (const tool of group) {
      docs.push({
        id: tool.id,
        slug: null,
        name: tool.name,
        description: tool.description,
        serviceId,
        serviceName: serviceName(key, group),
        serviceSlug: serviceId,
        serviceDescription: "",
        tags: [],
        parameters: Object.entries(tool.parameters ?? {}).map(([name, p]) => ({ name, description: p.description ?? "" })),
        isDemo: false,
        active: true,
        visibility: "public",
        organizationId: null,
      });
    }
  }
  return docs;
}

export interface QueryResult {
  relevant: string[];
  ranked: string[];
}

/** Recall@5, Recall@10, nDCG@10 (binary relevance, ideal DCG over min(|relevant|, 10)), in percent. */
export function metrics(results: QueryResult[]): { recall5: number; recall10: number; ndcg10: number } {
  let r5 = 0;
  let r10 = 0;
  let ndcg = 0;
  for (const { relevant, ranked } of results) {
    const rel = new Set(relevant);
    const hits = (k: number) => ranked.slice(0, k).filter((id) => rel.has(id)).length;
    r5 += hits(5) / rel.size;
    r10 += hits(10) / rel.size;
    let dcg = 0;
    ranked.slice(0, 10).forEach((id, i) => {
      if (rel.has(id)) dcg += 1 / Math.log2(i + 2);
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(rel.size, 10); i++) ideal += 1 / Math.log2(i + 2);
    ndcg += dcg / ideal;
  }
  const pct = (x: number) => (100 * x) / results.length;
  return { recall5: pct(r5), recall10: pct(r10), ndcg10: pct(ndcg) };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export function formatLatency(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms (${samples.length} searches)`;
}
