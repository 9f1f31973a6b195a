/**
 * Machine-usable surfaces a site offers, found by asking for them at the usual places:
 * - OpenAPI: `/openapi.json`, `/openapi.yaml`, `/swagger.json`, `/.well-known/openapi.json`, plus
 *   documents the crawled pages link to (an href ending in openapi.json/.yaml/.yml or swagger.json/.yaml/.yml,
 *   or `<link rel="service-desc">`, RFC 8631). A JSON or YAML document (read with `yaml`, which the
 *   catalog's importer uses too) with an `openapi` or `swagger` field counts; its title is `info.title`.
 *   Documents over 2 MiB are not read (recorded as skipped, reason "limit");
 * - `/llms.txt` (llmstxt.org): a 2xx text answer (any text/* but HTML) that is not blank;
 * - MCP: `/.well-known/mcp.json` (SEP-1649's name, the one sites publish today),
 *   `/.well-known/mcp/server-card.json` and `/.well-known/mcp/server-card` (SEP-2127's server card):
 *   a JSON document naming an endpoint (see mcpServersOf for the shapes read).
 * Probes are not pages: they use no page slot, but honour robots.txt and the byte budget like pages.
 * A probe that gets an HTTP answer other than what is looked for is simply "not there"; one that fails
 * (robots, budget, timeout, refused) is recorded in `skipped` by the crawl.
 */
import { parse as parseYaml } from "yaml";
import type { Fetched, FetchOptions } from "./fetch.js";
import { normaliseUrl } from "./urls.js";

export const OPENAPI_PATHS = ["/openapi.json", "/openapi.yaml", "/swagger.json", "/.well-known/openapi.json"];
export const LLMS_TXT_PATH = "/llms.txt";
export const MCP_WELL_KNOWN_PATHS = [
  "/.well-known/mcp.json",
  "/.well-known/mcp/server-card.json",
  "/.well-known/mcp/server-card",
];

const MAX_OPENAPI_BYTES = 2 * 1024 * 1024;
/** llms.txt only has to exist and say something: its first 64 KiB are enough. */
const LLMS_TXT_READ_BYTES = 64 * 1024;
const MAX_MCP_DOCUMENT_BYTES = 256 * 1024;
/** Servers read from one MCP document at most. */
const MAX_MCP_SERVERS = 20;

export type FoundOpenApi = { type: "openapi"; url: string; title: string | null };
export type FoundLlmsTxt = { type: "llms_txt"; url: string };
export type FoundMcp = { type: "mcp"; url: string; name: string | null };

/** Runs one probe for the crawl: undefined when robots.txt, the budget or a failure stopped it. */
export type Probe = (url: URL, options: FetchOptions) => Promise<Fetched | undefined>;

const isSuccess = (status: number) => status >= 200 && status < 300;
const isHtml = (mediaType: string) => mediaType === "text/html" || mediaType === "application/xhtml+xml";

/** True for a link to what is probably an OpenAPI/Swagger document. */
export function isOpenApiLink(url: URL): boolean {
  return /(^|\/)(openapi|swagger)\.(json|ya?ml)$/i.test(url.pathname);
}

/** The OpenAPI document at `url`, if there is one. */
export async function probeOpenApi(url: URL, probe: Probe): Promise<FoundOpenApi | undefined> {
  const res = await probe(url, {
    accept: "application/json, application/yaml;q=0.9, text/yaml;q=0.9, */*;q=0.5",
    // An HTML answer is a site's catch-all page, not a document.
    want: (status, mediaType) => isSuccess(status) && !isHtml(mediaType),
    maxBytes: MAX_OPENAPI_BYTES,
  });
  if (!res?.read) return undefined;
  const doc = parseDocument(res.body.toString("utf8"));
  if (!isObject(doc) || !(isVersion(doc.openapi) || isVersion(doc.swagger))) return undefined;
  const title = isObject(doc.info) && typeof doc.info.title === "string" ? doc.info.title.trim() : "";
  return { type: "openapi", url: res.url.href, title: title === "" ? null : title };
}

/** `/llms.txt` of the site at `origin`, if it has one. */
export async function probeLlmsTxt(origin: URL, probe: Probe): Promise<FoundLlmsTxt | undefined> {
  const res = await probe(new URL(LLMS_TXT_PATH, origin), {
    accept: "text/plain, text/markdown;q=0.9, */*;q=0.5",
    want: (status, mediaType) => isSuccess(status) && mediaType.startsWith("text/") && !isHtml(mediaType),
    maxBytes: LLMS_TXT_READ_BYTES,
    overflow: "truncate",
  });
  if (!res?.read || res.body.toString("utf8").trim() === "") return undefined;
  return { type: "llms_txt", url: res.url.href };
}

/** The MCP servers advertised by the well-known document at `url`. */
export async function probeMcp(url: URL, probe: Probe): Promise<FoundMcp[]> {
  const res = await probe(url, {
    accept: "application/json, */*;q=0.5",
    want: (status, mediaType) => isSuccess(status) && !isHtml(mediaType),
    maxBytes: MAX_MCP_DOCUMENT_BYTES,
  });
  if (!res?.read) return [];
  let doc: unknown;
  try {
    doc = JSON.parse(res.body.toString("utf8"));
  } catch {
    return [];
  }
  return mcpServersOf(doc, res.url);
}

/**
 * The servers an MCP discovery document names, endpoint URLs resolved against the document's URL
 * (http(s) only; the endpoint may be on another host, it is recorded, not fetched). Read shapes:
 * - one server card: the document itself (SEP-1649/SEP-2127 cards, MCP registry `server.json`);
 * - a list: `servers: [card...]`, or `mcpServers: {name: card}` as in client configuration files.
 * A card's endpoint is the first of: a `remotes`/`transports` entry of type streamable-http (else the
 * first entry with a `url`), `transport.url` / `transport.endpoint`, `endpoint` (a string or `{url}`),
 * then `url`, `serverUrl`, `server_url`, `mcpUrl`, `mcp_url`. Its name is `title`, else `name`, else
 * `serverInfo.title` / `serverInfo.name`, else the `mcpServers` key.
 */
export function mcpServersOf(doc: unknown, docUrl: URL): FoundMcp[] {
  if (!isObject(doc)) return [];
  let cards: [JsonObject, string | null][];
  if (Array.isArray(doc.servers)) cards = doc.servers.filter(isObject).map((c) => [c, null]);
  else if (isObject(doc.mcpServers))
    cards = Object.entries(doc.mcpServers).flatMap(([key, c]): [JsonObject, string][] => (isObject(c) ? [[c, key]] : []));
  else cards = [[doc, null]];
  const found: FoundMcp[] = [];
  for (const [card, key] of cards.slice(0, MAX_MCP_SERVERS)) {
    const endpoint = endpointOf(card);
    const url = endpoint === undefined ? undefined : normaliseUrl(endpoint, docUrl);
    if (!url) continue;
    const info = isObject(card.serverInfo) ? card.serverInfo : {};
    const name = [card.title, card.name, info.title, info.name, key].find(
      (n): n is string => typeof n === "string" && n.trim() !== "",
    );
    found.push({ type: "mcp", url: url.href, name: name?.trim() ?? null });
  }
  return found;
}

function endpointOf(card: JsonObject): string | undefined {
  for (const list of [card.remotes, card.transports]) {
    if (!Array.isArray(list)) continue;
    const entries = list.filter(isObject).filter((e) => typeof e.url === "string");
    const chosen = entries.find((e) => e.type === "streamable-http") ?? entries[0];
    if (chosen) return chosen.url as string;
  }
  const transport = isObject(card.transport) ? card.transport : {};
  const endpoint = isObject(card.endpoint) ? card.endpoint.url : card.endpoint;
  return [transport.url, transport.endpoint, endpoint, card.url, card.serverUrl, card.server_url, card.mcpUrl, card.mcp_url].find(
    (v): v is string => typeof v === "string" && v.trim() !== "",
  );
}

/** JSON (fast path) or YAML; undefined when it is neither. YAML aliases are capped (no "billion laughs"). */
function parseDocument(text: string): unknown {
  const source = text.replace(/^\uFEFF/, "");
  if (source.trimStart().startsWith("{")) {
    try {
      return JSON.parse(source);
    } catch {
      // Not strict JSON: YAML (a superset) may still read it.
    }
  }
  try {
    return parseYaml(source, { maxAliasCount: 100 });
  } catch {
    return undefined;
  }
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `openapi: 3.1.0`, `swagger: "2.0"`, or YAML's unquoted `swagger: 2.0` (a number). */
function isVersion(value: unknown): boolean {
  return (typeof value === "string" && value.trim() !== "") || typeof value === "number";
}
