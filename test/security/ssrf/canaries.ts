/**
 * The listeners of the SSRF test. Canaries sit on the loopback addresses and ports the corpus points at
 * and record every TCP connection they accept (a connection is a leak, whatever was sent on it); each
 * answers a plain HTTP 200 so that a leak shows as a success, never as an error that could pass for a
 * refusal. The allowed server is the one benign host the services may reach (their *_OUTBOUND_ALLOW
 * names it): the first answer of a rebinding name and the origin of the redirect cases. It answers every
 * request with `Connection: close`, so each request of a dialler opens a new connection (and resolves
 * the name again):
 *  - `/r/<id>/...`, any method: the redirect registered under that id;
 *  - POST with a JSON-RPC body: an MCP server (Streamable HTTP, sessions) with one tool, `ping`;
 *  - any other POST (a webhook delivery): 200;
 *  - GET /robots.txt: 404 (crawl everything); any other GET: an OpenAPI document whose one operation is
 *    GET /items (so the same URL is a document to import, a base URL to call and a page to crawl).
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { mcpSessionRouter } from "../../harness/upstreams.js";

export interface Hit {
  /** `address:port` the connection reached. */
  local: string;
  at: number;
}

export interface Canaries {
  /** Connections accepted so far, on every canary. */
  hits: Hit[];
  /** What each canary listens on, e.g. `[::]:41234` (a place asked with port 0 gets a free port). */
  listening: string[];
  /** The port of each place asked for, or undefined where nothing could be bound. */
  ports: Array<number | undefined>;
  close(): Promise<void>;
}

/** Starts a canary on each `host:port` that can be bound (a taken or privileged port is left out). */
export async function startCanaries(places: Array<{ host: string; port: number }>): Promise<Canaries> {
  const hits: Hit[] = [];
  const servers: net.Server[] = [];
  const listening: string[] = [];
  const ports: Array<number | undefined> = [];
  const sockets = new Set<net.Socket>();
  for (const { host, port } of places) {
    const server = net.createServer((socket) => {
      hits.push({ local: `${socket.localAddress}:${socket.localPort}`, at: Date.now() });
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
      socket.end(
        'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 17\r\nconnection: close\r\n\r\n{"canary":"hit"}\n',
      );
    });
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen({ host, port, ipv6Only: false }, () => resolve(true));
    });
    if (!bound) {
      ports.push(undefined);
      continue;
    }
    const actual = (server.address() as AddressInfo).port;
    servers.push(server);
    ports.push(actual);
    listening.push(host.includes(":") ? `[${host}]:${actual}` : `${host}:${actual}`);
  }
  return {
    hits,
    listening,
    ports,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

export interface AllowedServer {
  port: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Every request received, as `METHOD path`. */
  requests: string[];
  /** Registers a redirect; returns its URL on this server. */
  redirect(status: number, location: string): string;
  close(): Promise<void>;
}

/** An OpenAPI document of one operation, GET /items (`list_items`); a new title each time. */
export const itemsDocument = () => ({
  openapi: "3.0.3",
  info: { title: `SSRF ${randomBytes(4).toString("hex")}`, version: "1.0.0" },
  paths: { "/items": { get: { operationId: "list_items", responses: { "200": { description: "items" } } } } },
});

function pingServer(): McpServer {
  const server = new McpServer({ name: "ssrf-allowed", version: "1.0.0" });
  server.registerTool("ping", { description: "Answers pong" }, async () => ({ content: [{ type: "text", text: "pong" }] }));
  return server;
}

export async function startAllowedServer(): Promise<AllowedServer> {
  const requests: string[] = [];
  const redirects = new Map<string, { status: number; location: string }>();
  const mcp = mcpSessionRouter(pingServer);
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push(`${req.method} ${path}`);
    res.setHeader("connection", "close");
    const to = redirects.get(/^\/r\/([^/]+)/.exec(path)?.[1] ?? "");
    if (to) {
      res.writeHead(to.status, { location: to.location }).end();
    } else if (req.method === "POST" && raw.includes('"jsonrpc"')) {
      await mcp.handle(req, res, raw);
    } else if (req.method === "POST") {
      res.writeHead(200).end("ok");
    } else if (path === "/robots.txt") {
      res.writeHead(404).end();
    } else if (req.method === "GET" && !String(req.headers.accept).includes("text/event-stream")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(itemsDocument()));
    } else {
      res.writeHead(405).end();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    port,
    origin,
    requests,
    redirect(status, location) {
      const id = randomBytes(4).toString("hex");
      redirects.set(id, { status, location });
      return `${origin}/r/${id}/`;
    },
    close: async () => {
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
