import http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
http.createServer(async (req, res) => {
  console.error("hdr", req.method, req.headers["svc-api-key"]);
  const s = new McpServer({ name: "t", version: "1" });
  s.registerTool("echo", { description: "e", inputSchema: { query: z.string(), limit: z.number().optional() } }, async (a) => ({ content: [{ type: "text", text: JSON.stringify(a) }], structuredContent: { a } }));
  const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await s.connect(t); await t.handleRequest(req, res);
}).listen(18777, "127.0.0.1");
