/**
 * `@toolport/client`: a typed client of the gateway's `/v1`. The types (`schema.ts`) are generated from
 * the gateway's OpenAPI document (`openapi.json`, both committed; `pnpm --filter @toolport/client
 * generate`); the runtime is openapi-fetch, a thin layer over `fetch`:
 *
 *   const toolport = createToolportClient({ baseUrl: "http://localhost:8080", apiKey });
 *   const { data, error, response } = await toolport.GET("/v1/tools/public/search", { params: { query: { query: "weather" } } });
 *
 * Paths, parameters and bodies are checked against the document; `data` is the typed 2xx body, `error`
 * the parsed error body (`Error`) otherwise. A request that does not reach the gateway rejects.
 *
 * Pages. The list routes (`GET /v1/tools`, `/v1/services/public`, `/v1/services/public/{service_id}/tools`)
 * answer a page at a time (`limit`, default 20, at most 500) with a `Link: <...>; rel="next"` header
 * (RFC 8288) while there is more; `nextCursor(response)` reads that header's `cursor`, and `allPages` and
 * `pages` follow it with a function that asks for one page:
 *
 *   const page = (cursor?: string) => toolport.GET("/v1/services/public", { params: { query: { limit: 500, cursor } } });
 *   const { data: services, error } = await allPages(page, { maxItems: 5_000 }); // every page, or the error that stopped it
 *   for await (const tools of pages((cursor) => toolport.GET("/v1/tools", { params: { query: { cursor } } }))) {
 *     if (tools.some(isTheOne)) break; // stops asking for pages
 *   }
 *
 * Only the cursor is taken from the header: the next request goes to this client's `baseUrl` with the
 * caller's own parameters, so a gateway behind another address (a proxy, `PUBLIC_URL`) pages the same.
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

export interface ToolportClientOptions extends Omit<ClientOptions, "baseUrl" | "headers"> {
  /** Where the gateway is, without `/v1` (the paths carry it), e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** An agent's API key, sent as `svc-api-key` on every request. */
  apiKey?: string;
  /** The organization to act in, sent as `svc-org-id` on every request. */
  orgId?: string;
  /** A person's session token (JWT), sent as `Authorization: Bearer <token>` on every request. */
  bearer?: string;
  /** Further headers for every request; a request's own `headers` add to them or override them. */
  headers?: Record<string, string>;
  /** Another fetch (e.g. undici's with a connection pool); it receives a `Request`. Default: the global one. */
  fetch?: (input: Request) => Promise<Response>;
}

export type ToolportClient = Client<paths, "application/json">;

export function createToolportClient(options: ToolportClientOptions): ToolportClient {
  const { apiKey, orgId, bearer, headers, ...rest } = options;
  return createClient<paths, "application/json">({
    ...rest,
    headers: {
      ...(apiKey ? { "svc-api-key": apiKey } : {}),
      ...(orgId ? { "svc-org-id": orgId } : {}),
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...headers,
    },
  });
}

type Schemas = components["schemas"];

/** Every error body: `{detail, error: {code, message, details}}`. */
export type Error = Schemas["Error"];
/** A tool as its owner reads it (`GET /v1/tools/{tool_id}`). */
export type Tool = Schemas["Tool"];
/** A tool in search results, with its readiness for the caller. */
export type PublicTool = Schemas["PublicTool"];
/** A service (OpenAPI import or MCP server) and its tools. */
export type Service = Schemas["Service"];
/** One call of `POST /v1/tools/call/batch`. */
export type BatchCall = Schemas["BatchCall"];
/** One element of a batch's `results`, in input order. */
export type BatchElement = Schemas["BatchElement"];
/** The answer of `POST /v1/tools/call/{tool_id}`. */
export type SingleCallResult = Schemas["SingleCallResult"];
/** A stored result read back by its execution id. */
export type ExecutionResult = Schemas["ExecutionResult"];
/** A saved workflow with its steps. */
export type Workflow = Schemas["Workflow"];

/** What an openapi-fetch call answers for a list route: a page of items or the error body, and the response. */
export interface PageReply<T, E = unknown> {
  data?: T[];
  error?: E;
  response: Response;
}

/**
 * The `cursor` of the next page named by a list answer's `Link` header (the link whose `rel` has `next`,
 * RFC 8288); undefined on the last page, or when the header names no cursor.
 */
export function nextCursor(response: Pick<Response, "headers" | "url">): string | undefined {
  const header = response.headers.get("link");
  if (!header) return undefined;
  // `<uri-reference>; param=value; param="quoted, value", <...>; ...`: the target cannot hold `>`, a quoted
  // value may hold `,` and `;`.
  for (const link of header.matchAll(/<([^>]*)>((?:\s*;\s*[^\s=;,]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,]*))?)*)/g)) {
    const rels = [...(link[2] ?? "").matchAll(/;\s*rel\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;,]+))/gi)].flatMap((m) =>
      (m[1] ?? m[2] ?? "").toLowerCase().split(/\s+/),
    );
    if (!rels.includes("next")) continue;
    try {
      const cursor = new URL(link[1] ?? "", response.url || "http://localhost/").searchParams.get("cursor");
      return cursor || undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface PagesOptions {
  /** Stop once this many items are read (the last page is cut to it); default: every page. */
  maxItems?: number;
}

/** `pages` met an error answer (or a non-2xx one): the page's error body and response. */
export class PageError<E = unknown> extends globalThis.Error {
  constructor(
    readonly error: E,
    readonly response: Response,
  ) {
    super(`a page of ${response.url || "a list"} answered ${response.status}`);
    this.name = "PageError";
  }
}

/** One step of the walk: a page that answered (its items and the cursor after it), or the reply that failed. */
type Step<T, E> = { items: T[]; next: string | undefined; response: Response } | { failed: PageReply<T, E> & { error: E } };

async function step<T, E>(fetchPage: (cursor?: string) => Promise<PageReply<T, E>>, cursor?: string): Promise<Step<T, E>> {
  const reply = await fetchPage(cursor);
  if (reply.error !== undefined || !reply.response.ok || !Array.isArray(reply.data)) {
    return { failed: { ...reply, error: reply.error as E } };
  }
  return { items: reply.data, next: nextCursor(reply.response), response: reply.response };
}

/**
 * Each page's items in turn, following the `Link` header from the first page (`fetchPage(undefined)`) to
 * the last; breaking out of the loop asks for no further page. An error answer throws a `PageError`; a
 * request that does not reach the gateway rejects as `fetchPage` does.
 */
export async function* pages<T, E = unknown>(
  fetchPage: (cursor?: string) => Promise<PageReply<T, E>>,
  options: PagesOptions = {},
): AsyncGenerator<T[], void, undefined> {
  let left = options.maxItems ?? Number.POSITIVE_INFINITY;
  let cursor: string | undefined;
  const seen = new Set<string>();
  while (left > 0) {
    const page = await step(fetchPage, cursor);
    if ("failed" in page) throw new PageError(page.failed.error, page.failed.response);
    const items = page.items.length > left ? page.items.slice(0, left) : page.items;
    left -= items.length;
    yield items;
    // A cursor seen before would loop forever: a server defect, read as the end.
    if (!page.next || seen.has(page.next)) return;
    seen.add(page.next);
    cursor = page.next;
  }
}

/** What `allPages` read: like one openapi-fetch answer, `data` (every item) or `error`, and `response`. */
export interface AllPages<T, E = unknown> {
  /** Every item in order, up to `maxItems`; undefined when a page failed. */
  data?: T[];
  /** The error body of the page that failed (the pages stop there). */
  error?: E;
  /** The last response read: the last page's, or the one that failed. */
  response: Response;
  /** Whether `maxItems` stopped the reading while another page remained. */
  truncated: boolean;
}

/**
 * Every page's items, following the `Link` header until the last page (or `maxItems`); the first error
 * answer stops it and is returned as `error` with its `response`, as one openapi-fetch call would.
 */
export async function allPages<T, E = unknown>(
  fetchPage: (cursor?: string) => Promise<PageReply<T, E>>,
  options: PagesOptions = {},
): Promise<AllPages<T, E>> {
  const max = options.maxItems ?? Number.POSITIVE_INFINITY;
  const data: T[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const page = await step(fetchPage, cursor);
    if ("failed" in page) return { error: page.failed.error, response: page.failed.response, truncated: false };
    const taken = page.items.slice(0, max - data.length);
    data.push(...taken);
    // A cursor seen before would loop forever: a server defect, read as the end.
    const next = page.next !== undefined && !seen.has(page.next) ? page.next : undefined;
    if (data.length >= max)
      return { data, response: page.response, truncated: next !== undefined || taken.length < page.items.length };
    if (next === undefined) return { data, response: page.response, truncated: false };
    seen.add(next);
    cursor = next;
  }
}
