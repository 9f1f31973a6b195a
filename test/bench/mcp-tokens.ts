/**
 * What a model reads per tool from the MCP server's search_tools (issue 31, "answers sized for a model"):
 * tokens and characters of each result tool in the full form (the gateway's PublicTool, `detail: "full"`)
 * and in the compact form the MCP tools answer by default (mcp-server/src/tools/compact.ts), counted
 * with a real tokenizer (gpt-tokenizer, o200k_base) on the JSON the MCP result's text block carries.
 *
 *   node --conditions=@toolport/source --import tsx test/bench/mcp-tokens.ts --gateway <url> [--api-key <key>]
 *
 * Any running stack: `npm start` (the built-in tools), or the catalog at size with public directory
 * APIs (`test/bench/catalog-scale.ts --hold`, which prints its gateway and a key). The queries are plain
 * requests of many kinds, 10 results each; a tool found by several is counted once.
 */

import { encode } from "gpt-tokenizer";
import { compactTool } from "../../mcp-server/src/tools/compact.js";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const gateway = flag("--gateway");
if (!gateway) {
  console.error("usage: mcp-tokens.ts --gateway <url> [--api-key <key>]");
  process.exit(2);
}
const key = flag("--api-key");

const QUERIES = [
  "count the words of a text",
  "send an email",
  "create a calendar event",
  "list files in a folder",
  "get the weather forecast",
  "convert currency",
  "translate text",
  "create an invoice",
  "search for a user",
  "upload a document",
  "delete a record",
  "list repositories",
  "get stock prices",
  "send an sms message",
  "create a payment",
  "geocode an address",
];

type Tool = Record<string, unknown>;
const seen = new Map<string, Tool>();
for (const query of QUERIES) {
  const url = `${gateway.replace(/\/$/, "")}/v1/tools/public/search?query=${encodeURIComponent(query)}&limit=10`;
  const res = await fetch(url, { headers: key ? { "svc-api-key": key } : {} });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  for (const tool of (await res.json()) as Tool[]) seen.set(String(tool.id), tool);
}
if (seen.size === 0) throw new Error("the searches found no tools: is anything public in this catalog?");

const tokens = (value: unknown) => encode(JSON.stringify(value)).length;
const chars = (value: unknown) => JSON.stringify(value).length;
let fullTokens = 0;
let compactTokens = 0;
let fullChars = 0;
let compactChars = 0;
let reliabilityChars = 0;
const called = { n: 0, full: 0, compact: 0 };
for (const tool of seen.values()) {
  const compact = compactTool(tool);
  if ((tool.reliability as { calls_30d?: number } | null)?.calls_30d) {
    called.n++;
    called.full += tokens(tool);
    called.compact += tokens(compact);
  }
  fullTokens += tokens(tool);
  compactTokens += tokens(compact);
  fullChars += chars(tool);
  compactChars += chars(compact);
  reliabilityChars += chars(tool.reliability ?? null);
}
const n = seen.size;
const per = (x: number) => (x / n).toFixed(0);
console.log(`${n} distinct tools from ${QUERIES.length} searches of 10 (o200k_base tokens of each tool's JSON)`);
console.log(
  `full (detail: "full"):   ${per(fullTokens)} tokens, ${per(fullChars)} characters per tool (reliability block ${per(reliabilityChars)} characters)`,
);
console.log(`compact (the default):   ${per(compactTokens)} tokens, ${per(compactChars)} characters per tool`);
console.log(`compact / full:          ${(compactTokens / fullTokens).toFixed(2)} of the tokens`);
if (called.n > 0) {
  console.log(
    `of them called in 30 days (a reliability block): ${called.n}, full ${(called.full / called.n).toFixed(0)} and compact ${(called.compact / called.n).toFixed(0)} tokens per tool (${(called.compact / called.full).toFixed(2)})`,
  );
}
