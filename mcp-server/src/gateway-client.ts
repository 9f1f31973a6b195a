/**
 * The one way this server reaches Toolport: HTTP to the gateway's `/v1`, with the caller's own
 * `svc-api-key` and `svc-org-id` as the MCP client sent them on its connection. The server holds no
 * key of its own and logs none. One undici pool per gateway origin keeps connections alive across
 * requests and MCP sessions, so a tool call costs one request on a warm socket.
 */
import { Pool } from "undici";

export interface CallerHeaders {
  apiKey?: string;
  orgId?: string;
  /** Carried to the gateway so its logs join this request's. */
  requestId?: string;
  /** The MCP client's address chain, for the gateway's per-IP limits. */
  forwardedFor?: string;
}

export interface GatewayReply {
  status: number;
  /** Parsed JSON (null when the body is empty; the raw text when it is not JSON). */
  body: unknown;
  /** Seconds from `Retry-After`, when the gateway sent one. */
  retryAfter?: string;
}

export interface GatewayRequest {
  method: "GET" | "POST" | "DELETE";
  /** Path under /v1, e.g. `/tools/call/batch`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

export class GatewayClient {
  private readonly pool: Pool;
  private readonly basePath: string;

  constructor(gatewayUrl: string, options: { connections?: number; timeoutMs?: number } = {}) {
    const url = new URL(gatewayUrl);
    this.basePath = url.pathname.replace(/\/$/, "");
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 64,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs ?? 120_000,
      bodyTimeout: options.timeoutMs ?? 120_000,
    });
  }

  async send(caller: CallerHeaders, req: GatewayRequest): Promise<GatewayReply> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (caller.apiKey) headers["svc-api-key"] = caller.apiKey;
    if (caller.orgId) headers["svc-org-id"] = caller.orgId;
    if (caller.requestId) headers["x-request-id"] = caller.requestId;
    if (caller.forwardedFor) headers["x-forwarded-for"] = caller.forwardedFor;
    if (req.body !== undefined) headers["content-type"] = "application/json";
    const res = await this.pool.request({
      method: req.method,
      path: `${this.basePath}/v1${req.path}${queryString(req.query)}`,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
    });
    const text = await res.body.text();
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const retryAfter = res.headers["retry-after"];
    return { status: res.statusCode, body, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function queryString(query: GatewayRequest["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A path segment the caller chose (an id, a domain), percent-encoded so it stays one segment. */
export const segment = (value: string) => encodeURIComponent(value);
