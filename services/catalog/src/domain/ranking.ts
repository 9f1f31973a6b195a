/**
 * The spec's ordering of search results over the engine's relevance order:
 * 1. a tool whose name or slug is exactly the query comes first;
 * 2. tools of sample-data (demo) services go behind every real service's tools, unless the query
 *    names the demo service (its name or slug appears in the query);
 * 3. for a signed-in caller, tools it can run now (`ready`) come before the others;
 * 4. otherwise the engine's order (relevance) is kept.
 */
import type { Readiness, ServiceRecord, ToolRecord } from "./model.js";

export interface RankCandidate {
  tool: ToolRecord;
  service: ServiceRecord;
  readiness: Readiness;
}

export function normalizeQuery(query: string): string {
  return query.trim().toLowerCase().replace(/\s+/g, " ");
}

export function isExactMatch(query: string, tool: Pick<ToolRecord, "name" | "slug">): boolean {
  const q = normalizeQuery(query);
  return q.length > 0 && (tool.name.trim().toLowerCase() === q || tool.slug === q);
}

/** Whether the query names the service (so a demo service need not step back). */
export function queryNamesService(query: string, service: Pick<ServiceRecord, "name" | "slug">): boolean {
  const q = ` ${normalizeQuery(query).replace(/[^a-z0-9]+/g, " ")} `;
  const name = service.name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
  const slugWords = service.slug.replace(/-/g, " ");
  return (name.length > 0 && q.includes(` ${name} `)) || q.includes(` ${slugWords} `);
}

/** Orders candidates (given in relevance order) by the rules above; stable within each tier. */
export function rankResults<T extends RankCandidate>(query: string, candidates: T[], signedIn: boolean): T[] {
  const keyed = candidates.map((candidate, index) => {
    const exact = isExactMatch(query, candidate.tool) ? 0 : 1;
    const demo = candidate.service.isDemo && !queryNamesService(query, candidate.service) ? 1 : 0;
    const notReady = signedIn && candidate.readiness !== "ready" ? 1 : 0;
    return { candidate, key: [exact, demo, notReady, index] };
  });
  keyed.sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) {
      const d = (a.key[i] as number) - (b.key[i] as number);
      if (d !== 0) return d;
    }
    return 0;
  });
  return keyed.map((k) => k.candidate);
}
