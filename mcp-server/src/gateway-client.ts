/**
 * The one way this server reaches Toolport: HTTP to the gateway's `/v1`, with the caller's own
 * `svc-api-key` and `svc-org-id` as the MCP client sent them on its connection. The server holds no
 * key of its own and logs none. Requests are `@toolport/client` calls (paths, parameters and bodies typed by
 * the gateway's OpenAPI document) sent on one undici pool per gateway origin, which keeps connections alive
 * across requests and MCP sessions, so a tool call costs one request on a warm socket.
 */
import { createToolportClient, type ToolportClient } from "@toolport/client";
import { type Dispatcher, Pool } from "undici";

export interface CallerHeaders {
  apiKey?: string;
  /** An OAuth access token of Toolport's authorization server, sent when there is no key. */
  bearer?: string;
  /** The grant (its key's id) a checked access token acts as: stable across the token's refreshes. */
  grant?: string;
  orgId?: string;
  /** Carried to the gateway so its logs join this request's. */
  requestId?: string;
  /** The MCP client's address chain, for the gateway's per-IP limits. */
  forwardedFor?: string;
  /** The client's W3C trace context (from the request's `_meta`): the gateway's span continues its trace. */
  traceparent?: string;
  tracestate?: string;
}

export interface GatewayReply {
  status: number;
  /** Parsed JSON (null when the body is empty; the raw text when an error's body is not JSON). */
  body: unknown;
  /** Seconds from `Retry-After`, when the gateway sent one. */
  retryAfter?: string;
}

/**
 * One typed call on the client, with the caller's headers to send, e.g.
 * `(api, headers) => api.GET("/v1/x402/settings", { headers })`.
 */
export type GatewayRequest = (
  api: ToolportClient,
  headers: Record<string, string>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export class GatewayClient {
  private readonly pool: Pool;
  private readonly api: ToolportClient;

  constructor(gatewayUrl: string, options: { connections?: number; timeoutMs?: number } = {}) {
    const url = new URL(gatewayUrl);
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 64,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs ?? 120_000,
      bodyTimeout: options.timeoutMs ?? 120_000,
    });
    const pool = this.pool;
    this.api = createToolportClient({
      baseUrl: `${url.origin}${url.pathname.replace(/\/$/, "")}`,
      headers: { accept: "application/json" },
      // The client's requests and answers as plain objects on the pool (PlainRequest, poolFetch): the WHATWG
      // Request and Response it would otherwise build cost more CPU than the rest of an MCP call.
      Request: PlainRequest as unknown as typeof Request,
      fetch: (request) => poolFetch(pool, request as unknown as PlainRequest),
    });
  }

  async send(caller: CallerHeaders, request: GatewayRequest): Promise<GatewayReply> {
    const headers: Record<string, string> = {};
    if (caller.apiKey) headers["svc-api-key"] = caller.apiKey;
    else if (caller.bearer) headers.authorization = `Bearer ${caller.bearer}`;
    if (caller.orgId) headers["svc-org-id"] = caller.orgId;
    if (caller.requestId) headers["x-request-id"] = caller.requestId;
    if (caller.forwardedFor) headers["x-forwarded-for"] = caller.forwardedFor;
    if (caller.traceparent) {
      headers.traceparent = caller.traceparent;
      if (caller.tracestate) headers.tracestate = caller.tracestate;
    }
    const { data, error, response } = await request(this.api, headers);
    // openapi-fetch parsed the body: JSON on a 2xx, JSON or else the text on an error, undefined when empty.
    const body = data ?? (error === "" ? undefined : error) ?? null;
    return { status: response.status, body, retryAfter: response.headers.get("retry-after") ?? undefined };
  }

  /**
   * The facts of an access token (GET /v1/oauth/token-info): its resource and grant when it is active,
   * "inactive" when the gateway refused it (401), and a thrown error when the gateway could not say.
   */
  async tokenInfo(bearer: string): Promise<{ resource: string; keyId: string } | "inactive"> {
    const { data, response } = await this.api.GET("/v1/oauth/token-info", {
      params: { header: { authorization: `Bearer ${bearer}` } },
    });
    if (response.status === 401) return "inactive";
    if (!data) throw new Error(`the gateway answered ${response.status} to a token check`);
    return { resource: data.resource, keyId: data.key_id };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * What the client builds a request into, kept as given: its URL, method, headers and serialized body. The
 * client only reads these back, so nothing of the WHATWG Request (URL parsing again, body streams) is needed.
 */
class PlainRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | undefined;
  constructor(url: string, init: { method?: string; headers: Headers; body?: string }) {
    this.url = url;
    this.method = init.method ?? "GET";
    this.headers = init.headers;
    this.body = init.body;
  }
}

/**
 * The client's `fetch`, on the pool: the request goes out with `pool.request` (no redirect followed, no
 * headers added, no decoding, as a plain pool request), and the answer comes back as the part of a Response
 * the client reads: status, ok, headers.get, and the body, read whole, as text or JSON.
 */
async function poolFetch(pool: Pool, request: PlainRequest): Promise<Response> {
  const at = request.url.indexOf("/", request.url.indexOf("//") + 2);
  const res = await pool.request({
    method: request.method as Dispatcher.HttpMethod,
    path: at < 0 ? "/" : request.url.slice(at),
    headers: Object.fromEntries(request.headers),
    body: request.body,
  });
  const text = await res.body.text();
  const headers = res.headers;
  const answer = {
    status: res.statusCode,
    ok: res.statusCode >= 200 && res.statusCode < 300,
    headers: {
      get(name: string): string | null {
        const value = headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    },
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
  };
  return answer as unknown as Response;
}
