/**
 * node:http to the SDK's web-standard handler and back: one POST /mcp becomes a `Request` for
 * `createMcpHandler(...).fetch`, and its `Response` is written to the node response, streamed when it is
 * an SSE stream (a 2026-07-28 exchange upgraded because the handler sent something before its result,
 * or a 2025-11-25 request the SDK answers as a stream), whole otherwise.
 *
 * Written here rather than taken from `@modelcontextprotocol/node` (`toNodeHandler`): that package goes
 * through @hono/node-server's generic conversion, which wraps the node request's stream and headers in
 * lazily built Web objects for any framework; here the body is read once, bounded, and handed to the
 * SDK already parsed (its `parsedBody` option), so the SDK does not read it again.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

/** Largest POST body, as the SDK allows by default; a larger one is refused before it is buffered. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export function sendRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** The body as text, or undefined once it grows past the limit (the rest is not buffered). */
export async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  if (Number(req.headers["content-length"]) > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString("utf8");
}

/**
 * The Web request the SDK sees: the path and method of the node request, `headers` (the caller's, as
 * http.ts rewrote them), the body text, and an abort signal that fires when the client goes away.
 */
export function webRequest(
  req: IncomingMessage,
  res: ServerResponse,
  headers: IncomingHttpHeaders,
  body: string | undefined,
): Request {
  const list: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) list.push([name, v]);
    else list.push([name, value]);
  }
  const aborted = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) aborted.abort();
  });
  return new Request(`http://${headers.host ?? "localhost"}${req.url ?? "/mcp"}`, {
    method: req.method,
    headers: list,
    body,
    signal: aborted.signal,
  });
}

/** JSON.parse, or undefined for text that is not JSON (the SDK then reads the text and answers its parse error). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Writes the SDK's response: status and headers, then the body, piped chunk by chunk when it is a stream. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    const seen = headers[name];
    if (seen === undefined) headers[name] = value;
    else headers[name] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  });
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const body = Buffer.from(await response.arrayBuffer());
    headers["content-length"] = String(body.length);
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body.getReader();
  res.once("close", () => {
    reader.cancel().catch(() => {});
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}
