/**
 * The HTTP client tests use against a gateway's /v1: `key` goes as svc-api-key, `token` as a bearer JWT,
 * a string body is sent as it is (malformed JSON tests), anything else as JSON. The reply carries the
 * parsed body (text when it is not JSON, null when empty), the headers and how long it took.
 * Every 2xx body of a route that carries one of the spec's shapes (Tool, trimmed Tool, Service,
 * Execution result, Batch element, single-call result) is checked against it (shapes.ts): a mismatch
 * rejects the call with a ShapeMismatchError naming the route, the shape and each bad field. There is
 * no switch to turn this off. Every reply is also checked against the gateway's own description
 * (described.ts): its route and status must be described, its body must match the schema described.
 */
import { checkDescribed } from "./described.js";
import { checkReply } from "./shapes.js";

export interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  body: any;
  headers: Headers;
  ms: number;
}

export interface RequestOptions {
  key?: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export function gatewayClient(baseUrl: string) {
  return async function call(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const started = performance.now();
    const headers: Record<string, string> = {};
    if (options.key) headers["svc-api-key"] = options.key;
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    Object.assign(headers, options.headers);
    const res = await fetch(`${baseUrl}/v1${path}`, {
      method,
      headers,
      body:
        options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {}
    const ms = performance.now() - started;
    checkReply({ method, path, status: res.status, body, requestBody: options.body });
    await checkDescribed({ baseUrl, method, path, status: res.status, contentType: res.headers.get("content-type"), body });
    return { status: res.status, body, headers: res.headers, ms };
  };
}

export type Call = ReturnType<typeof gatewayClient>;
