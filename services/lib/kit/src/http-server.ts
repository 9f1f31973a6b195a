/**
 * An HTTP/1.1 server that drains: on shutdown it stops accepting, closes idle keep-alive
 * connections, lets in-flight requests finish, and cuts what is left after the grace period.
 * Used by the gateway and the MCP server.
 */
import http from "node:http";

export interface DrainableServer extends http.Server {
  drain(graceMs: number): Promise<void>;
}

export async function startHttpServer(listener: http.RequestListener, port: number, host: string): Promise<DrainableServer> {
  const server = http.createServer({ keepAliveTimeout: 65_000 }, listener) as DrainableServer;
  server.drain = async (graceMs) => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Keep-alive connections become idle as their last response goes out: close them as they do.
    server.closeIdleConnections();
    const sweeper = setInterval(() => server.closeIdleConnections(), 50);
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    await closed;
    clearInterval(sweeper);
    clearTimeout(timer);
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
