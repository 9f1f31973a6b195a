/**
 * MCP servers that need a credential, end to end through the gateway on real processes: an MCP server
 * from the SDK behind an HTTP server that refuses every request without the right `Authorization: Bearer`
 * token (or API key header). The publisher declares the scheme (`mcp_server.security_scheme`) and lists
 * the tools with an import-only credential; a caller without a connected credential is refused as
 * missing_credential; with one the call succeeds, the upstream saw the header, the MCP tool's echo of it
 * comes back redacted, and the secret never reaches a result, an error or a service log.
 */
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProcessName } from "../harness/stack.js";
import { mcpSessionRouter } from "../harness/upstreams.js";
import { type AgentKey, connectCredential, type ExecStack, registerAgent, startExecStack } from "./execution-support.js";

const TOKEN = `mcp-bearer-${randomBytes(12).toString("hex")}`;
const API_KEY = `mcp-key-${randomBytes(12).toString("hex")}`;
const KEY_HEADER = "X-Upstream-Key";

interface GuardedMcp {
  url: string;
  port: number;
  /** Headers of every request, refused ones included. */
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders; refused: boolean }>;
  toolCalls: number;
  close(): Promise<void>;
}

/**
 * Streamable HTTP MCP servers with sessions at /bearer/mcp (needs `Authorization: Bearer TOKEN`) and
 * /key/mcp (needs `X-Upstream-Key: API_KEY`); anything else is a 401. Tool `whoami` echoes the
 * credential headers it received, also inside a plain `note`; `search` answers plain JSON.
 */
async function startGuardedMcp(): Promise<GuardedMcp> {
  const up = { requests: [], toolCalls: 0 } as unknown as GuardedMcp;
  const build = () => {
    const server = new McpServer({ name: "guarded-upstream", version: "2.0.0" });
    server.registerTool(
      "whoami",
      { description: "Echoes the credential the server received", inputSchema: {} },
      async (_args, extra) => {
        up.toolCalls++;
        const headers = extra.requestInfo?.headers ?? {};
        return {
          content: [
            {
              type: "text",
              text: JSON.stringify({
                authorization: headers.authorization ?? null,
                upstream_key: headers["x-upstream-key"] ?? null,
                // The same values under a key no rule finds sensitive: only exact-value masking catches them.
                note: ["received", headers.authorization, headers["x-upstream-key"]].filter(Boolean).join(" "),
              }),
            },
          ],
        };
      },
    );
    server.registerTool("search", { description: "Finds documents", inputSchema: {} }, async () => {
      up.toolCalls++;
      return { content: [{ type: "text", text: JSON.stringify({ results: ["a", "b"] }) }] };
    });
    return server;
  };
  const router = mcpSessionRouter(build);
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url!, "http://x").pathname;
    const allowed =
      (path === "/bearer/mcp" && req.headers.authorization === `Bearer ${TOKEN}`) ||
      (path === "/key/mcp" && req.headers["x-upstream-key"] === API_KEY);
    up.requests.push({ path, headers: req.headers, refused: !allowed });
    if (!allowed) {
      req.resume();
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" });
      return res.end(JSON.stringify({ error: "unauthorized" }));
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    await router.handle(req, res, Buffer.concat(chunks).toString("utf8"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  up.port = (server.address() as AddressInfo).port;
  up.url = `http://127.0.0.1:${up.port}`;
  up.close = async () => {
    await router.close();
    await new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  };
  return up;
}

const NAMES: ProcessName[] = ["catalog", "execution", "billing", "identity", "gateway"];
let mcp: GuardedMcp;
let s: ExecStack;
let publisher: AgentKey;

beforeAll(async () => {
  mcp = await startGuardedMcp();
  // Both the catalog (listing the tools at import) and execution (calls) reach the MCP server.
  s = await startExecStack([`127.0.0.1:${mcp.port}`], { CATALOG_OUTBOUND_ALLOW: `127.0.0.1:${mcp.port}` }, NAMES);
  publisher = await registerAgent(s);
});
afterAll(async () => {
  await s?.stop();
  await mcp?.close();
});

const publish = (mcpServer: unknown) =>
  s.call("POST", "/services", { key: publisher.key, body: { mcp_server: mcpServer, visibility: "public" } });
const callTool = (key: string, toolId: string, body: unknown = {}) => s.call("POST", `/tools/call/${toolId}`, { key, body });
const toolsOf = (res: { body: { tools: Array<{ name: string; id: string }> } }) =>
  Object.fromEntries(res.body.tools.map((t) => [t.name, t.id]));

describe("publishing an MCP server that needs a credential", () => {
  it("says what to send when the server refuses the import, and checks the declared scheme", async () => {
    const refused = await publish(`${mcp.url}/bearer/mcp`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/mcp_server_unauthorized/);
    expect(JSON.stringify(refused.body)).toMatch(/mcp_server\.security_scheme/);
    expect(JSON.stringify(refused.body)).toMatch(/401/);

    const wrong = await publish({
      url: `${mcp.url}/bearer/mcp`,
      security_scheme: { type: "http", scheme: "bearer" },
      credential: { bearer: "not-the-token" },
    });
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(400);
    expect(JSON.stringify(wrong.body)).toMatch(/mcp_server\.credential/);
    expect(JSON.stringify(wrong.body)).not.toContain("not-the-token");

    for (const [scheme, field] of [
      [{ type: "oauth2" }, "mcp_server.security_scheme.type"],
      [{ type: "http", scheme: "digest" }, "mcp_server.security_scheme.scheme"],
      [{ type: "apiKey", in: "query", name: "key" }, "mcp_server.security_scheme.in"],
      [{ type: "apiKey", in: "header", name: "bad header" }, "mcp_server.security_scheme.name"],
      [{ type: "apiKey", in: "header", name: "Mcp-Session-Id" }, "mcp_server.security_scheme.name"],
      [{ type: "apiKey", in: "nowhere", name: "X-Key" }, "mcp_server.security_scheme.in"],
    ] as const) {
      const res = await publish({ url: `${mcp.url}/bearer/mcp`, security_scheme: scheme, credential: { bearer: TOKEN } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body), JSON.stringify(scheme)).toContain(field);
    }
    // A credential of another kind than the scheme, or a reference, cannot list the tools.
    const mismatch = await publish({
      url: `${mcp.url}/bearer/mcp`,
      security_scheme: { type: "http", scheme: "bearer" },
      credential: { api_key: TOKEN },
    });
    expect(mismatch.status, JSON.stringify(mismatch.body)).toBe(400);
    const reference = await publish({
      url: `${mcp.url}/bearer/mcp`,
      security_scheme: { type: "http", scheme: "bearer" },
      credential: { bearer: "env://TOOLPORT_SECRET_X" },
    });
    expect(reference.status, JSON.stringify(reference.body)).toBe(400);
    expect(mcp.requests.filter((r) => !r.refused)).toHaveLength(0);
  });
});

describe("calling tools of an MCP server behind a bearer token", () => {
  let serviceId: string;
  let tools: Record<string, string>;

  beforeAll(async () => {
    const res = await publish({
      url: `${mcp.url}/bearer/mcp`,
      security_scheme: { type: "http", scheme: "bearer" },
      credential: { bearer: TOKEN },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    serviceId = res.body.service.id;
    tools = toolsOf(res);
    expect(Object.keys(tools).sort()).toEqual(["search", "whoami"]);
    expect(res.body.publishing.security_schemes).toEqual([
      expect.objectContaining({ name: "mcp_server", type: "http", scheme: "bearer" }),
    ]);
  });

  it("refuses a caller without a connected credential as missing_credential; nothing reaches the server", async () => {
    const caller = await registerAgent(s);
    const listed = await s.call("GET", `/tools/${tools.whoami}`, { key: caller.key });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const seen = mcp.requests.length;
    const r = await callTool(caller.key, tools.whoami!);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: false, result: null });
    expect(r.body.error).toMatch(/no credential is connected/);
    expect(mcp.requests.length).toBe(seen);
  });

  it("sends the connected credential, redacts the server's echo of it, and keeps it out of every log", async () => {
    const caller = await registerAgent(s);
    await connectCredential(s, caller, serviceId, { bearer: TOKEN });
    const calls = mcp.toolCalls;
    const r = await callTool(caller.key, tools.whoami!);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.success, JSON.stringify(r.body)).toBe(true);
    expect(mcp.toolCalls).toBe(calls + 1);
    // The server saw the header on the session's requests.
    const accepted = mcp.requests.filter((q) => !q.refused).at(-1)!;
    expect(accepted.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // Its echo is masked: in the answer, in the stored result, and a path read of it.
    expect(r.body.result.authorization).toMatch(/^(Bearer )?\[REDACTED:[A-Z_]+\]$/);
    expect(r.body.result.note).toBe("received Bearer [REDACTED:BEARER_TOKEN]");
    expect(r.body._meta.redaction.count).toBeGreaterThan(0);
    expect(JSON.stringify(r.body)).not.toContain(TOKEN);
    const stored = await s.call("GET", `/tools/executions/${r.body.execution_id}/result`, { key: caller.key });
    expect(stored.status).toBe(200);
    expect(JSON.stringify(stored.body)).toMatch(/\[REDACTED:/);
    expect(JSON.stringify(stored.body)).not.toContain(TOKEN);
    const path = await s.call("GET", `/tools/executions/${r.body.execution_id}/result?path=authorization`, {
      key: caller.key,
    });
    expect(path.body.path_matched).toBe(true);
    expect(JSON.stringify(path.body)).not.toContain(TOKEN);

    // A second call reuses the session; another tool works too.
    const again = await callTool(caller.key, tools.search!);
    expect(again.body).toMatchObject({ success: true, result: { results: ["a", "b"] } });

    // A wrong credential is an auth failure whose message does not echo it.
    const other = await registerAgent(s);
    const wrongToken = `wrong-${randomBytes(8).toString("hex")}`;
    await connectCredential(s, other, serviceId, { bearer: wrongToken });
    const refused = await callTool(other.key, tools.whoami!);
    expect(refused.body).toMatchObject({ success: false, result: null });
    expect(refused.body.error).toMatch(/refused the credential/);
    expect(JSON.stringify(refused.body)).not.toContain(wrongToken);

    // Neither secret reaches a log of any process.
    for (const name of NAMES) {
      const log = await s.stack.log(name);
      expect(log.length, name).toBeGreaterThan(0);
      expect(log.includes(TOKEN), `${name} log holds the token`).toBe(false);
      expect(log.includes(wrongToken), `${name} log holds the wrong token`).toBe(false);
    }
  });

  it("re-imports the tools with the publisher's connected credential", async () => {
    const without = await s.call("POST", `/services/${serviceId}/reimport`, { key: publisher.key, body: {} });
    expect(without.status, JSON.stringify(without.body)).toBe(400);
    expect(without.body.error.code).toBe("mcp_server_unauthorized");
    expect(without.body.error.message).toMatch(/connect a credential/);
    await connectCredential(s, publisher, serviceId, { bearer: TOKEN });
    const res = await s.call("POST", `/services/${serviceId}/reimport`, { key: publisher.key, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.deactivated_tool_ids).toEqual([]);
    const service = await s.call("GET", `/services/${serviceId}`, { key: publisher.key });
    expect(service.body.publishing.security_schemes).toHaveLength(1);
    const r = await callTool(publisher.key, tools.search!);
    expect(r.body.success, JSON.stringify(r.body)).toBe(true);
  });
});

describe("calling tools of an MCP server behind an API key header", () => {
  it("sends the key in the header the publisher declared", async () => {
    const res = await publish({
      url: `${mcp.url}/key/mcp`,
      security_scheme: { type: "apiKey", in: "header", name: KEY_HEADER },
      credential: { api_key: API_KEY },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const tools = toolsOf(res);
    const caller = await registerAgent(s);
    const missing = await callTool(caller.key, tools.whoami!);
    expect(missing.body).toMatchObject({ success: false });
    expect(missing.body.error).toMatch(/no credential is connected/);

    await connectCredential(s, caller, res.body.service.id, { api_key: API_KEY });
    const r = await callTool(caller.key, tools.whoami!);
    expect(r.body.success, JSON.stringify(r.body)).toBe(true);
    expect(mcp.requests.filter((q) => !q.refused).at(-1)!.headers["x-upstream-key"]).toBe(API_KEY);
    expect(r.body.result.upstream_key).toMatch(/^\[REDACTED:[A-Z_]+\]$/);
    expect(r.body.result.note).toBe("received [REDACTED:API_KEY]");
    expect(JSON.stringify(r.body)).not.toContain(API_KEY);
    for (const name of NAMES) expect((await s.stack.log(name)).includes(API_KEY), name).toBe(false);
  });
});
