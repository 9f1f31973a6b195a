/**
 * The edges a newcomer hit in their first hour (issue 33), against the whole stack (every role in its own
 * process, so the catalog can be stopped for the outage case):
 * - authenticated search finds the caller's own private tools with their readiness, is limited per account
 *   (two accounts behind one address are counted apart, two keys of one account together) while anonymous
 *   public search keeps its per-IP limit, and honours `limit`, also through the typed client;
 * - a single call whose parameters sit under `input`, `params` or `arguments` instead of `tool_input` is a
 *   400 naming the mistake, unless the tool has a parameter of that name (it then gets it, upstream);
 * - a skill may name any service its author can see (someone else's public one too); a service it cannot
 *   see is 400 as an unknown one, and only the catalog being down is 503.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createToolportClient } from "@toolport/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentKey,
  createKey,
  type ExecStack,
  expectError,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

const SEARCHES_PER_MINUTE = 6;
const PUBLIC_SEARCHES_PER_MINUTE = 3;

/** A client address of its own (the stack trusts X-Forwarded-For): each test's limits start from zero. */
let ipCounter = 0;
const newIp = () => ({ "x-forwarded-for": `203.0.113.${++ipCounter}` });

/** Windows are fixed minutes: start a burst early enough in one that it cannot straddle two. */
async function awayFromWindowEdge(needMs = 20_000) {
  const into = Date.now() % 60_000;
  if (into > 60_000 - needMs) await new Promise((r) => setTimeout(r, 60_000 - into + 250));
}

/** The upstream: a translator whose one parameter is really called `input` (it echoes what it got). */
async function startTranslator() {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    seen.push(url.search);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ translated: (url.searchParams.get("input") ?? "").toUpperCase() }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const translatorDocument = (title: string) => ({
  openapi: "3.0.3",
  info: { title, version: "1.0.0" },
  paths: {
    "/translate": {
      get: {
        operationId: "shout_translate",
        summary: "Translate a text into shouting",
        parameters: [{ name: "input", in: "query", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "ok" } },
      },
    },
  },
});

/** A private service of several tools whose names share a rare word, so that a search finds them all. */
const quokkaDocument = (title: string) => ({
  openapi: "3.0.3",
  info: { title, version: "1.0.0" },
  paths: Object.fromEntries(
    ["count", "feed", "weigh", "groom", "measure", "photograph"].map((verb) => [
      `/quokkas/${verb}`,
      {
        get: {
          operationId: `${verb}_quokkas`,
          summary: `${verb} the quokkas of the sanctuary`,
          responses: { "200": { description: "ok" } },
        },
      },
    ]),
  ),
});

const skillMd = (name: string) => `---
name: ${name}
description: Uses one catalog service.
---

# ${name}
`;

let s: ExecStack;
let upstream: Awaited<ReturnType<typeof startTranslator>>;

beforeAll(async () => {
  upstream = await startTranslator();
  s = await startExecStack(
    [`127.0.0.1:${upstream.port}`],
    {
      CATALOG_OUTBOUND_ALLOW: `127.0.0.1:${upstream.port}`,
      TRUST_PROXY: "true",
      SEARCHES_PER_MINUTE: String(SEARCHES_PER_MINUTE),
      PUBLIC_SEARCHES_PER_MINUTE: String(PUBLIC_SEARCHES_PER_MINUTE),
      REGISTRATIONS_PER_MINUTE: "100000",
    },
    ["catalog", "execution", "billing", "identity", "content", "gateway"],
    { layout: "per-role" },
  );
}, 180_000);

afterAll(async () => {
  await s?.stop();
  await upstream?.close();
});

describe("authenticated search", () => {
  it("finds the caller's own private tools with their readiness, which public search and other accounts do not", async () => {
    const ada = await registerAgent(s);
    const bea = await registerAgent(s);
    const title = `Quokka Sanctuary ${Date.now().toString(36)}`;
    const published = await publishOpenApi(s, ada, quokkaDocument(title), upstream.url);
    const ip = newIp();

    const mine = await s.call("GET", "/tools/search?query=weigh%20the%20quokkas", { key: ada.key, headers: ip });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    const hit = mine.body.find((t: { id: string }) => t.id === published.tools.weigh_quokkas);
    expect(hit, JSON.stringify(mine.body.map((t: { name: string }) => t.name))).toMatchObject({
      service_id: published.serviceId,
      readiness: "ready",
    });
    // Not on the public search, even for its owner, and not for another account.
    const pub = await s.call("GET", "/tools/public/search?query=weigh%20the%20quokkas", { key: ada.key, headers: newIp() });
    expect(pub.status).toBe(200);
    expect(pub.body.filter((t: { service_id: string }) => t.service_id === published.serviceId)).toEqual([]);
    const theirs = await s.call("GET", "/tools/search?query=weigh%20the%20quokkas", { key: bea.key, headers: ip });
    expect(theirs.status).toBe(200);
    expect(theirs.body.filter((t: { service_id: string }) => t.service_id === published.serviceId)).toEqual([]);
  });

  it("honours limit, with and without a query, and through the typed client", async () => {
    const cy = await registerAgent(s);
    const published = await publishOpenApi(s, cy, quokkaDocument(`Quokka Census ${Date.now().toString(36)}`), upstream.url);
    const ours = (tools: { service_id: string }[]) => tools.filter((t) => t.service_id === published.serviceId);

    const all = await s.call("GET", `/tools/search?query=quokkas%20of%20the%20sanctuary&service_id=${published.serviceId}`, {
      key: cy.key,
    });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(ours(all.body)).toHaveLength(6);
    const two = await s.call(
      "GET",
      `/tools/search?query=quokkas%20of%20the%20sanctuary&service_id=${published.serviceId}&limit=2`,
      {
        key: cy.key,
      },
    );
    expect(two.status).toBe(200);
    expect(two.body).toHaveLength(2);
    const blank = await s.call("GET", `/tools/search?service_id=${published.serviceId}&limit=3`, { key: cy.key });
    expect(blank.status).toBe(200);
    expect(ours(blank.body)).toHaveLength(3);
    expect(blank.body).toHaveLength(3);

    const client = createToolportClient({ baseUrl: s.stack.gatewayUrl, apiKey: cy.key });
    const typed = await client.GET("/v1/tools/search", {
      params: { query: { query: "quokkas of the sanctuary", service_id: published.serviceId, limit: 1 } },
    });
    expect(typed.response.status, JSON.stringify(typed.error)).toBe(200);
    expect(typed.data).toHaveLength(1);
  });

  it("counts each account apart behind one address, keys of one account together; public search keeps its per-IP limit", async () => {
    const dee = await registerAgent(s);
    const eve = await registerAgent(s);
    const deeSecondKey = await createKey(s, dee, null);
    const office = newIp();
    await awayFromWindowEdge();

    // Dee uses up her searches from the office, half with each of her keys.
    for (let i = 0; i < SEARCHES_PER_MINUTE; i++) {
      const key = i % 2 === 0 ? dee.key : deeSecondKey;
      const res = await s.call("GET", "/tools/search?query=slugify", { key, headers: office });
      expect(res.status, `search ${i + 1}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBe(String(SEARCHES_PER_MINUTE));
    }
    for (const key of [dee.key, deeSecondKey]) {
      const refused = await s.call("GET", "/tools/search?query=slugify", { key, headers: newIp() });
      expectError(refused, 429, "rate_limited");
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.body.error.details).toMatchObject({ bucket: "search", limit: SEARCHES_PER_MINUTE });
    }
    // Eve, behind the same address, has all of hers.
    const eves = await s.call("GET", "/tools/search?query=slugify", { key: eve.key, headers: office });
    expect(eves.status, JSON.stringify(eves.body)).toBe(200);
    expect(eves.body.some((t: { slug: string }) => t.slug === "text-slugify")).toBe(true);
    expect(eves.headers.get("ratelimit-remaining")).toBe(String(SEARCHES_PER_MINUTE - 1));

    // The office's anonymous public searches were not touched by any of that, and keep their per-IP limit.
    for (let i = 0; i < PUBLIC_SEARCHES_PER_MINUTE; i++) {
      expect((await s.call("GET", "/tools/public/search?query=slugify", { headers: office })).status).toBe(200);
    }
    const anonymous = await s.call("GET", "/tools/public/search?query=slugify", { headers: office });
    expectError(anonymous, 429, "rate_limited");
    expect(anonymous.body.error.details).toMatchObject({ bucket: "public_search", limit: PUBLIC_SEARCHES_PER_MINUTE });
    expect(Number(anonymous.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // ... while Eve's authenticated search from there still answers.
    expect((await s.call("GET", "/tools/search?query=slugify", { key: eve.key, headers: office })).status).toBe(200);
  });
});

describe("a call with its parameters under the wrong name", () => {
  let agent: AgentKey;
  beforeAll(async () => {
    agent = await registerAgent(s);
  });

  it("is a 400 naming the mistake for input, params and arguments; tool_input and root parameters run", async () => {
    const csv = "name,visits\nAda,3\n";
    for (const field of ["input", "params", "arguments"]) {
      const res = await s.call("POST", "/tools/call/data-csv-to-json", { key: agent.key, body: { [field]: { csv } } });
      expectError(res, 400, "misplaced_tool_input");
      expect(res.body.error.details).toEqual({ field, expected: "tool_input" });
      expect(res.body.error.message).toContain(`"${field}"`);
      expect(res.body.error.message).toContain('"tool_input"');
      expect(res.body.error.message).not.toContain("csv: is required");
    }
    // With tool_input present, an extra root `input` is ignored as before (tool_input wins).
    const wrapped = await s.call("POST", "/tools/call/data-csv-to-json", {
      key: agent.key,
      body: { tool_input: { csv }, input: "ignored" },
    });
    expect(wrapped.status, JSON.stringify(wrapped.body)).toBe(200);
    expect(wrapped.body.result).toMatchObject({ rows: [{ name: "Ada", visits: "3" }] });
    const atRoot = await s.call("POST", "/tools/call/data-csv-to-json", { key: agent.key, body: { csv } });
    expect(atRoot.status, JSON.stringify(atRoot.body)).toBe(200);
    expect(atRoot.body.success).toBe(true);
  });

  it("is the tool's own parameter when the tool has one of that name", async () => {
    const published = await publishOpenApi(s, agent, translatorDocument(`Shouter ${Date.now().toString(36)}`), upstream.url);
    const tool = published.tools.shout_translate!;
    const before = upstream.seen.length;
    const res = await s.call("POST", `/tools/call/${tool}`, { key: agent.key, body: { input: "hello" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result).toEqual({ translated: "HELLO" });
    expect(upstream.seen.slice(before)).toEqual(["?input=hello"]);
    // Another lookalike beside it is still a mistake: the tool has no `params`.
    const mixed = await s.call("POST", `/tools/call/${tool}`, { key: agent.key, body: { input: "hi", params: { x: 1 } } });
    expectError(mixed, 400, "misplaced_tool_input");
    expect(mixed.body.error.details.field).toBe("params");
    expect(upstream.seen.length).toBe(before + 1);
  });
});

describe("a skill's service", () => {
  it("may be any service its author can see; one it cannot see is 400 as an unknown one; the catalog down is 503", async () => {
    const publisher = await registerAgent(s);
    const author = await registerAgent(s);
    const publicService = await s.call("POST", "/services", {
      key: publisher.key,
      body: {
        api: { document: translatorDocument(`Public Shouter ${Date.now().toString(36)}`), base_url: upstream.url },
        visibility: "public",
      },
    });
    expect(publicService.status, JSON.stringify(publicService.body)).toBe(201);
    const privateOfOther = await publishOpenApi(s, publisher, quokkaDocument(`Hidden ${Date.now().toString(36)}`), upstream.url);
    const own = await publishOpenApi(s, author, quokkaDocument(`Own ${Date.now().toString(36)}`), upstream.url);
    let n = 0;
    const skill = (serviceId: string) =>
      s.call("POST", "/skills", {
        key: author.key,
        body: { name: `uses-service-${++n}`, skill_md_content: skillMd(`uses-service-${n}`), service_id: serviceId },
      });

    const onPublic = await skill(publicService.body.service.id);
    expect(onPublic.status, JSON.stringify(onPublic.body)).toBe(200);
    const onOwn = await skill(own.serviceId);
    expect(onOwn.status, JSON.stringify(onOwn.body)).toBe(200);

    const hidden = await skill(privateOfOther.serviceId);
    expectError(hidden, 400, "invalid_service_id");
    const unknown = await skill("0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b");
    expectError(unknown, 400, "invalid_service_id");
    expect(hidden.body.error.message.replace(privateOfOther.serviceId, "ID")).toBe(
      unknown.body.error.message.replace("0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b", "ID"),
    );

    // The catalog down: that alone is 503 catalog_unavailable.
    await s.stack.stop("catalog");
    try {
      const down = await skill(publicService.body.service.id);
      expectError(down, 503, "catalog_unavailable");
    } finally {
      await s.stack.start("catalog");
    }
    const again = await skill(publicService.body.service.id);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });
});
