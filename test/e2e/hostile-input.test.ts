/**
 * Hostile input through the gateway, as a client would send it (issue 10): a NUL byte in any path or
 * query value, bodies nested thousands of levels deep, NUL inside body strings, a body over the limit,
 * and upstream answers that carry NUL or are deeply nested. None may answer 500, and nothing already
 * stored may be lost: each refusal is a 4xx in the error shape naming what was wrong.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentKey,
  type ExecStack,
  expectError,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

function nested(depth: number, leaf: unknown = "leaf"): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

/** `{"a":{"a":...}}` as text, so a depth beyond what JSON.stringify can write is still sendable. */
const deepText = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

interface HostileUpstream {
  url: string;
  close(): Promise<void>;
}

/** /nul: strings and keys holding U+0000; /nul-error: a 500 whose body holds it; /deep?n=N: JSON N levels deep. */
async function startHostileUpstream(): Promise<HostileUpstream> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    res.setHeader("content-type", "application/json");
    if (url.pathname === "/nul") {
      res.end(JSON.stringify({ "k\u0000ey": "a\u0000b", list: ["\u0000", 1] }));
    } else if (url.pathname === "/nul-error") {
      res.statusCode = 500;
      res.end(JSON.stringify({ error: "broken\u0000here" }));
    } else if (url.pathname === "/openapi.json") {
      // A published description whose text holds NUL (fetched by URL, so the gateway never saw it).
      const doc = structuredClone(hostileApi);
      doc.info.title = "NUL\u0000service";
      doc.paths["/nul"].get.operationId = "nul_\u0000op";
      res.end(JSON.stringify(doc));
    } else if (url.pathname === "/deep") {
      res.end(deepText(Number(url.searchParams.get("n"))));
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const operation = (id: string, parameters: unknown[] = []) => ({
  get: { operationId: id, parameters, responses: { "200": { description: "ok" } } },
});

const hostileApi = {
  openapi: "3.0.3",
  info: { title: "Hostile upstream", version: "1.0.0" },
  paths: {
    "/nul": operation("nul_result"),
    "/nul-error": operation("nul_error"),
    "/deep": operation("deep_result", [{ name: "n", in: "query", required: true, schema: { type: "integer" } }]),
  },
};

let s: ExecStack;
let upstream: HostileUpstream;
let agent: AgentKey;
let tools: Record<string, string>;
let serviceId: string;

beforeAll(async () => {
  upstream = await startHostileUpstream();
  // Content too, so its routes are swept (it answers 501 until it is built, never 503 for being absent).
  s = await startExecStack(
    [upstream.url.replace("http://", "")],
    { CATALOG_OUTBOUND_ALLOW: upstream.url.replace("http://", "") },
    ["catalog", "execution", "billing", "identity", "content", "gateway"],
  );
  agent = await registerAgent(s);
  ({ serviceId, tools } = await publishOpenApi(s, agent, hostileApi, upstream.url));
});
afterAll(async () => {
  await s?.stop();
  await upstream?.close();
});

const get = (path: string) => s.call("GET", path, { key: agent.key });
const callTool = (toolId: string | undefined, body: unknown) => s.call("POST", `/tools/call/${toolId}`, { key: agent.key, body });

describe("NUL in the URL", () => {
  it("refuses %00 in every id, slug, name and domain position with a 400 naming it", async () => {
    const paths = [
      "/tools/%00",
      "/tools/name/%00",
      "/tools/%00/describe",
      "/tools/a%00b",
      "/services/public/%00",
      "/services/public/%00/tools",
      "/agent-sites/domain/%00",
      "/tools/executions/%00/result",
    ];
    for (const path of paths) {
      const reply = await get(path);
      expectError(reply, 400, "invalid_character");
      expect(reply.body.error.details.field, path).toBe("path");
    }
    expectError(await callTool("%00", {}), 400, "invalid_character");
  });

  it("refuses %00 in a query value and names the parameter", async () => {
    for (const query of ["query=%00", "query=ok&service_id=x%00y", "ready_only=%00"]) {
      const reply = await s.call("GET", `/tools/public/search?${query}`);
      expectError(reply, 400, "invalid_character");
    }
    const named = await get("/tools/search?service_id=%00");
    expectError(named, 400, "invalid_character");
    expect(named.body.error.details.field).toBe("service_id");
    // An escaped percent sign is not a NUL: "%2500" is the text "%00".
    expect((await get("/tools/search?query=%2500")).status).toBe(200);
  });
});

describe("a sweep of hostile values", () => {
  const values = [
    "%00",
    "%FF",
    "%ED%A0%80", // a lone surrogate, UTF-8 encoded
    "%C0%AE", // an overlong "."
    "..%2F..%2Fetc%2Fpasswd",
    "x".repeat(4000),
    "%F0%9F%98%80",
    "'%3B%20DROP%20TABLE%20tools%3B--",
    "-1",
    "1e309",
    "00000000-0000-0000-0000-000000000000",
  ];
  const routes = [
    "/tools/{}",
    "/tools/name/{}",
    "/tools/{}/describe",
    "/tools/search?query={}&service_id={}",
    "/tools/public/search?query={}&limit={}&min_success_rate={}&ready_only={}",
    "/tools/recommended?tool_id={}&limit={}",
    "/services/public/{}",
    "/services/public/{}/tools",
    "/services/{}",
    "/agent-sites/domain/{}",
    "/tools/executions/{}/result?path={}&max_chars={}",
    "/api-keys/{}/usage?days={}",
    "/workflows/public?search={}&limit={}&offset={}",
  ];

  it("answers every read route with a 4xx or 2xx, never a 500", async () => {
    const failures: string[] = [];
    for (const route of routes) {
      for (const value of values) {
        const path = route.replaceAll("{}", value);
        const reply = await get(path);
        if (reply.status >= 500 && reply.status !== 501) failures.push(`${reply.status} GET ${path.slice(0, 120)}`);
      }
    }
    for (const value of values) {
      const reply = await callTool(value, { tool_input: {} });
      if (reply.status >= 500) failures.push(`${reply.status} POST /tools/call/${value.slice(0, 60)}`);
    }
    expect(failures).toEqual([]);
  });
});

describe("request bodies", () => {
  it("refuses a body nested 5,000 levels deep with a 400 naming the limit, and takes 64 levels", async () => {
    const tooDeep = await s.call("POST", `/tools/call/${tools.nul_result}`, { key: agent.key, body: deepText(5000) });
    expectError(tooDeep, 400, "body_too_deep");
    expect(tooDeep.body.error.details.limit_depth).toBe(64);
    expect(tooDeep.body.error.message).toContain("64");

    const batch = await s.call("POST", "/tools/call/batch", {
      key: agent.key,
      body: `{"calls":[{"tool_id":"${tools.nul_result}","tool_input":${deepText(5000)}}]}`,
    });
    expectError(batch, 400, "body_too_deep");

    // 64 levels in all (the body object is one of them) is accepted and reaches the tool.
    const atLimit = await callTool(tools.nul_result, { tool_input: { x: nested(62) } });
    expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(200);
    expect(atLimit.body.success).toBe(true);
  });

  it("refuses NUL inside a body string or key with its JSON pointer, and stores nothing", async () => {
    const inValue = await callTool(tools.nul_result, { tool_input: { q: "a\u0000b" } });
    expectError(inValue, 400, "invalid_character");
    expect(inValue.body.error.details.field).toBe("/tool_input/q");
    const inKey = await s.call("POST", "/agents", { body: { name: "x", operator_email: "x@example.com", "b\u0000": 1 } });
    expectError(inKey, 400, "invalid_character");
    const rename = await s.call("PATCH", `/services/${serviceId}`, { key: agent.key, body: { name: "evil\u0000name" } });
    expectError(rename, 400, "invalid_character");
    const service = await get(`/services/${serviceId}`);
    expect(service.status).toBe(200);
    expect(service.body.service.name).toBe("Hostile upstream");
  });

  it("imports a fetched document whose text holds NUL, with U+FFFD in its place", async () => {
    const reply = await s.call("POST", "/services", {
      key: agent.key,
      body: { api: { document_url: `${upstream.url}/openapi.json`, base_url: upstream.url } },
    });
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(201);
    expect(reply.body.service.name).toBe("NUL\uFFFDservice");
    expect(reply.body.tools.map((t: { name: string }) => t.name)).toContain("nul_\uFFFDop");
  });

  it("keeps the 1 MiB limit on every route but publishing", async () => {
    const big = { tool_input: { blob: "x".repeat(1_100_000) } };
    const reply = await callTool(tools.nul_result, big);
    expectError(reply, 413, "payload_too_large");
    expect(reply.body.error.details.limit_bytes).toBe(1_048_576);
    // The publishing route reads past 1 MiB: this body is refused for what it says, not for its size.
    const publish = await s.call("POST", "/services", {
      key: agent.key,
      body: {
        api: { document: { openapi: "3.0.3", info: { title: "x", version: "1" }, paths: {}, "x-pad": "y".repeat(1_500_000) } },
      },
    });
    expect(publish.status, JSON.stringify(publish.body).slice(0, 300)).toBe(201);
  });
});

describe("upstream answers", () => {
  it("keeps NUL inside a result exactly, on the call and on read-back", async () => {
    const reply = await callTool(tools.nul_result, {});
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const expected = { "k\u0000ey": "a\u0000b", list: ["\u0000", 1] };
    expect(reply.body.result).toEqual(expected);
    const back = await get(`/tools/executions/${reply.body.execution_id}/result`);
    expect(back.status).toBe(200);
    expect(back.body.result).toEqual(expected);
  });

  it("records an upstream error whose body holds NUL as a failed execution, readable by handle", async () => {
    const reply = await callTool(tools.nul_error, {});
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.success).toBe(false);
    const back = await get(`/tools/executions/${reply.body.execution_id}/result`);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: "error", result: null });
  });

  it("carries a result 1,000 levels deep through every service and back", async () => {
    const reply = await callTool(tools.deep_result, { n: 1000 });
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(200);
    expect(reply.body.success).toBe(true);
    expect(JSON.stringify(reply.body.result)).toBe(deepText(1000));
    const back = await get(`/tools/executions/${reply.body.execution_id}/result?path=a.a.a`);
    expect(back.status).toBe(200);
    expect(back.body.path_matched).toBe(true);
    expect(JSON.stringify(back.body.result)).toBe(deepText(997));
  });

  it("answers a result too deep to carry as a failed execution naming the limit, not a 500", async () => {
    const reply = await callTool(tools.deep_result, { n: 20_000 });
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(200);
    expect(reply.body.success).toBe(false);
    expect(reply.body.error).toMatch(/deeper than \d+ levels/);
  });
});
