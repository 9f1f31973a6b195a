/**
 * The guarded outbound HTTP client: every request to an address a caller chose (execution's upstream
 * calls, catalog's imports) goes through one undici Agent whose connector dials only addresses the
 * AddressPolicy accepts (see address-policy.ts). The Agent keeps a keep-alive pool per
 * upstream origin. `send` follows redirects itself (at most 5 hops; each hop opens its connection through
 * the same guarded connector; credentials are dropped when a hop leaves the origin), enforces an overall
 * deadline and a response size limit while reading.
 */
import { isIP } from "node:net";
import { Agent, buildConnector, request, fetch as undiciFetch } from "undici";
import { type AddressPolicy, OutboundRefused } from "./address-policy.js";

export interface OutboundOptions {
  policy: AddressPolicy;
  connectTimeoutMs?: number;
  /** Idle keep-alive sockets are closed after this long. */
  keepAliveTimeoutMs?: number;
  /** Sockets per upstream origin. */
  connectionsPerOrigin?: number;
}

export interface OutboundRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: URL;
}

export class ResponseTooLarge extends Error {
  override name = "ResponseTooLarge";
  constructor(readonly limit: number) {
    super(`the upstream response is larger than ${limit} bytes`);
  }
}

export class TooManyRedirects extends Error {
  override name = "TooManyRedirects";
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class Outbound {
  readonly agent: Agent;

  constructor(readonly options: OutboundOptions) {
    const base = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
    const policy = options.policy;
    const connect: buildConnector.connector = (opts, callback) => {
      const port = Number(opts.port) || (opts.protocol === "https:" ? 443 : 80);
      policy.resolve(opts.hostname, port).then(
        ({ address }) => {
          const name = opts.hostname.replace(/^\[|\]$/g, "");
          base({ ...opts, hostname: address, servername: opts.servername ?? (isIP(name) ? undefined : name) }, callback);
        },
        (err: Error) => callback(err, null),
      );
    };
    this.agent = new Agent({
      connect,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      connections: options.connectionsPerOrigin ?? 64,
      pipelining: 1,
    });
  }

  /**
   * Sends a request, following redirects. `sensitiveHeaders` (lower-case names) are removed when a
   * redirect leaves the original origin.
   */
  async send(
    req: OutboundRequest,
    limits: { timeoutMs: number; maxBytes: number; sensitiveHeaders?: string[] },
  ): Promise<OutboundResponse> {
    // The overall deadline: a timer cleared when the answer is read (AbortSignal.timeout's timer would live
    // on for the whole timeout after every call, and cost more per call), aborting as AbortSignal.timeout does.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
      limits.timeoutMs,
    );
    try {
      return await this.sendWithin(req, limits, deadline.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private async sendWithin(
    req: OutboundRequest,
    limits: { timeoutMs: number; maxBytes: number; sensitiveHeaders?: string[] },
    signal: AbortSignal,
  ): Promise<OutboundResponse> {
    let { method, url, headers, body } = req;
    const origin = url.origin;
    for (let hop = 0; ; hop++) {
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new OutboundRefused(url.host, url.protocol, "scheme");
      const res = await request(url, {
        method: method as never,
        headers,
        body,
        dispatcher: this.agent,
        signal,
        headersTimeout: limits.timeoutMs,
        bodyTimeout: limits.timeoutMs,
      });
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode) && typeof location === "string") {
        await res.body.dump();
        if (hop >= MAX_REDIRECTS) throw new TooManyRedirects(`more than ${MAX_REDIRECTS} redirects`);
        const next = new URL(location, url);
        if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
          headers = withoutHeaders(headers, ["content-type", "content-length"]);
        }
        if (next.origin !== origin)
          headers = withoutHeaders(headers, ["authorization", "cookie", ...(limits.sensitiveHeaders ?? [])]);
        url = next;
        continue;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > limits.maxBytes) {
          res.body.destroy();
          throw new ResponseTooLarge(limits.maxBytes);
        }
        chunks.push(chunk as Buffer);
      }
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(", ") : v;
      return { status: res.statusCode, headers: flat, body: Buffer.concat(chunks), url };
    }
  }

  /** A fetch whose connections go through the guarded Agent (for the MCP SDK's transports). */
  readonly fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    undiciFetch(input as never, { ...(init as object), dispatcher: this.agent } as never) as unknown as Promise<Response>;

  close(): Promise<void> {
    return this.agent.close();
  }
}

function withoutHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop.has(k.toLowerCase())));
}

/** The OutboundRefused somewhere in an error's cause chain. */
export function findRefusal(err: unknown): OutboundRefused | undefined {
  for (let e: unknown = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof OutboundRefused) return e;
  }
  return undefined;
}

export type OutboundFailureKind =
  | "address_not_allowed"
  | "response_too_large"
  | "too_many_redirects"
  | "timeout"
  | "dns_failure"
  | "tls_error"
  | "connection_failed";

/**
 * What kind of failure a request through this client was when no usable answer came: the address
 * policy's refusal, our own limits, or the network. The network's codes are looked for along the error's
 * cause chain (undici and fetch wrap them); `code` is the first one found ("" when none).
 */
export function outboundFailureKind(err: unknown): { kind: OutboundFailureKind; code: string } {
  if (findRefusal(err)) return { kind: "address_not_allowed", code: "" };
  if (err instanceof ResponseTooLarge) return { kind: "response_too_large", code: "" };
  if (err instanceof TooManyRedirects) return { kind: "too_many_redirects", code: "" };
  const chain: { name: string; code: string }[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause)
    chain.push({ name: String((e as Error).name ?? ""), code: String((e as { code?: unknown }).code ?? "") });
  const code = chain.find((c) => c.code)?.code ?? "";
  // Our overall deadline (AbortSignal.timeout) or undici's headers/body/connect timeouts.
  if (chain.some((c) => c.name === "TimeoutError" || c.name === "AbortError" || /TIMEOUT/.test(c.code)))
    return { kind: "timeout", code };
  if (chain.some((c) => c.code === "ENOTFOUND" || c.code === "EAI_AGAIN")) return { kind: "dns_failure", code };
  if (chain.some((c) => /^ERR_TLS|^ERR_SSL|CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(c.code))) return { kind: "tls_error", code };
  return { kind: "connection_failed", code };
}
