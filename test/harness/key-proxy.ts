/**
 * An MCP client's configured credential, for a client that cannot be given one (the official conformance
 * suite's CLI has no header option): a forwarding proxy on 127.0.0.1 that adds `svc-api-key` to every
 * request and passes everything else through unchanged in both directions (method, path, every header
 * including Host and Origin, the body, and the answer streamed, SSE included). It stands for the header an
 * MCP client sends on its connection, nothing of Toolport's.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface KeyProxy {
  /** The proxied MCP endpoint (same path as the target's). */
  url: string;
  close(): Promise<void>;
}

export async function startKeyProxy(targetUrl: string, key: string): Promise<KeyProxy> {
  const target = new URL(targetUrl);
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, "svc-api-key": key },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
