/**
 * Site records through the gateway on the real stack, one process per role (so the content process
 * alone can be killed): a small multi-page site served here crawled into the exact record expected
 * (services/content/test/site-fixture.ts), private addresses refused, a site that hangs or sends
 * 50 MiB kept within the limits, a recrawl, owner-only records, and a crawl that finishes although the
 * content process was killed in the middle of it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedFixtureFacts, fixtureSiteRoutes, type Handler, html } from "../../services/content/test/site-fixture.js";
import { type Call, gatewayClient } from "../harness/http.js";
import { signupHuman } from "../harness/identity-http.js";
import { type Stack, startStack } from "../harness/stack.js";
import { expectError } from "./execution-support.js";

interface Site {
  port: number;
  base: string;
  requests: string[];
  /** Bytes the server wrote before the client went away, per path. */
  written: Map<string, number>;
  server: Server;
}

async function serve(routes: Record<string, Handler>): Promise<Site> {
  const requests: string[] = [];
  const written = new Map<string, number>();
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const handler = routes[path];
    if (handler) handler(req, res);
    else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, base: `http://127.0.0.1:${port}`, requests, written, server };
}

const close = (s: Site | undefined) =>
  s
    ? new Promise<void>((resolve) => {
        s.server.closeAllConnections();
        s.server.close(() => resolve());
      })
    : Promise.resolve();

describe("site records", () => {
  let stack: Stack;
  let call: Call;
  let fixture: Site;
  let hanging: Site;
  let huge: Site;
  let slow: Site;
  let owner: { token: string; accountId: string };

  /** Waits until the record is no longer pending or crawling. */
  async function settled(id: string, token: string, timeout = 30_000) {
    let last: { status: string } & Record<string, unknown> = { status: "pending" };
    await expect
      .poll(
        async () => {
          last = (await call("GET", `/agent-sites/${id}`, { token })).body;
          return last.status;
        },
        { timeout, interval: 200 },
      )
      .toMatch(/^(live|failed)$/);
    return last;
  }

  beforeAll(async () => {
    fixture = await serve(fixtureSiteRoutes());
    hanging = await serve({ "/": () => {}, "/robots.txt": () => {} });
    huge = await serve({
      "/": html('<html><title>Huge</title><a href="/big">big</a><a href="/after">after</a></html>'),
      "/big": (req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        const chunk = Buffer.alloc(64 * 1024, "a");
        let sent = 0;
        const pump = () => {
          while (sent < 50 * 1024 * 1024) {
            sent += chunk.length;
            huge.written.set("/big", sent);
            if (!res.write(chunk)) return res.once("drain", pump);
          }
          res.end();
        };
        req.socket.on("close", () => huge.written.set("/big", sent));
        pump();
      },
      "/after": html("<title>After</title>"),
    });
    // Every page takes 700 ms: a crawl long enough to be killed in the middle of.
    const slowly =
      (body: string): Handler =>
      (_req, res) =>
        setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end(body), 700);
    slow = await serve({
      "/": slowly('<title>Slow home</title><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/d">d</a>'),
      "/a": slowly("<title>A</title>"),
      "/b": slowly("<title>B</title>"),
      "/c": slowly("<title>C</title>"),
      "/d": slowly("<title>D</title>"),
    });
    stack = await startStack(
      ["identity", "catalog", "content", "gateway"],
      {
        CONTENT_OUTBOUND_ALLOW: [fixture, hanging, huge, slow].map((s) => `127.0.0.1:${s.port}`).join(","),
        CONTENT_CRAWL_PAGE_TIMEOUT_MS: "1500",
        CONTENT_CRAWL_LEASE_MS: "1500",
        CONTENT_CRAWL_POLL_MS: "200",
        CATALOG_SECRET_KEY: "b".repeat(64),
      },
      { layout: "per-role" },
    );
    call = gatewayClient(stack.gatewayUrl);
    owner = await signupHuman(call, "sites");
  });
  afterAll(async () => {
    await stack?.stopAll();
    await Promise.all([fixture, hanging, huge, slow].map(close));
  });

  it("crawls a small site into the exact record, public by domain once live", async () => {
    const created = await call("POST", "/agent-sites", { token: owner.token, body: { url: `${fixture.base}/start#intro` } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ status: "pending", visibility: "public", domain: "127.0.0.1", error: null });
    const record = await settled(created.body.id, owner.token);
    const f = expectedFixtureFacts(fixture.base);
    expect(record).toEqual({
      id: created.body.id,
      domain: f.domain,
      url: f.url,
      status: "live",
      visibility: "public",
      page_title: f.pageTitle,
      page_description: f.pageDescription,
      components: f.components,
      discovered_tools: f.discoveredTools,
      category: f.category,
      tags: f.tags,
      created_at: created.body.created_at,
      error: null,
      crawled_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // The public view: the spec's fields only, no key needed; robots.txt kept the crawler off /members.
    const pub = await call("GET", "/agent-sites/domain/127.0.0.1");
    expect(pub.status).toBe(200);
    expect(Object.keys(pub.body).sort()).toEqual(
      [
        "category",
        "components",
        "created_at",
        "discovered_tools",
        "domain",
        "id",
        "page_description",
        "page_title",
        "status",
        "tags",
        "url",
        "visibility",
      ].sort(),
    );
    expect(pub.body).toMatchObject({ id: created.body.id, status: "live", page_title: f.pageTitle });
    expect(fixture.requests).not.toContain("/members");
    expectError(await call("GET", "/agent-sites/domain/unknown.example"), 404, "site_not_found");
  });

  it("refuses private addresses, and keeps a private record out of the public view", async () => {
    for (const url of [
      "http://10.1.2.3/",
      "http://169.254.169.254/latest/meta-data/",
      "http://127.0.0.1:9/",
      "http://localhost:9/",
    ]) {
      const res = await call("POST", "/agent-sites", { token: owner.token, body: { url } });
      expectError(res, 400, "url_not_allowed");
    }
    expectError(
      await call("POST", "/agent-sites", { token: owner.token, body: { url: "ftp://example.com/" } }),
      400,
      "invalid_url",
    );
    expectError(
      await call("POST", "/agent-sites", { token: owner.token, body: { url: fixture.base, visibility: "secret" } }),
      400,
      "invalid_request",
    );
    const hidden = await call("POST", "/agent-sites", {
      token: owner.token,
      body: { url: `${huge.base}/`, visibility: "private" },
    });
    expect(hidden.status).toBe(200);
    expect((await settled(hidden.body.id, owner.token)).status).toBe("live");
    // Live, but private: the public view of its domain shows another (public) record, never this one.
    expect((await call("GET", "/agent-sites/domain/127.0.0.1")).body.id).not.toBe(hidden.body.id);
  });

  it("fails a site that hangs within the page timeout, and reads at most the byte budget of a 50 MiB page", async () => {
    const started = Date.now();
    const stuck = await call("POST", "/agent-sites", { token: owner.token, body: { url: `${hanging.base}/` } });
    const failed = await settled(stuck.body.id, owner.token);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^timeout: /);
    expect(Date.now() - started).toBeLessThan(15_000);

    const big = await call("POST", "/agent-sites", { token: owner.token, body: { url: `${huge.base}/` } });
    const live = await settled(big.body.id, owner.token);
    expect(live).toMatchObject({ status: "live", page_title: "Huge" });
    await expect.poll(() => huge.written.get("/big") ?? 0).toBeGreaterThan(0);
    expect(huge.written.get("/big")!).toBeLessThan(16 * 1024 * 1024);
  });

  it("keeps records to their owner, recrawls, and keeps a live record live through a failed recrawl", async () => {
    const other = await signupHuman(call, "other");
    const made = await call("POST", "/agent-sites", { token: owner.token, body: { url: `${huge.base}/` } });
    await settled(made.body.id, owner.token);
    expectError(await call("GET", `/agent-sites/${made.body.id}`, { token: other.token }), 404, "site_not_found");
    expectError(await call("POST", `/agent-sites/${made.body.id}/recrawl`, { token: other.token }), 404, "site_not_found");
    expect((await call("GET", "/agent-sites/my", { token: other.token })).body).toEqual([]);
    expect((await call("GET", "/agent-sites/my", { token: owner.token })).body.map((s: { id: string }) => s.id)).toContain(
      made.body.id,
    );
    // The site goes away: the recrawl fails, the record stays live with the error beside it.
    const before = (await call("GET", `/agent-sites/${made.body.id}`, { token: owner.token })).body;
    huge.server.closeAllConnections();
    await new Promise<void>((resolve) => huge.server.close(() => resolve()));
    const again = await call("POST", `/agent-sites/${made.body.id}/recrawl`, { token: owner.token });
    expect(again.body.status).toBe("live");
    await expect
      .poll(async () => (await call("GET", `/agent-sites/${made.body.id}`, { token: owner.token })).body.crawled_at, {
        timeout: 20_000,
      })
      .not.toBe(before.crawled_at);
    const after = (await call("GET", `/agent-sites/${made.body.id}`, { token: owner.token })).body;
    expect(after).toMatchObject({ status: "live", page_title: "Huge" });
    expect(after.error).toMatch(/^unreachable: /);
    expect((await call("DELETE", `/agent-sites/${made.body.id}`, { token: owner.token })).body).toEqual({ deleted: true });
    expectError(await call("GET", `/agent-sites/${made.body.id}`, { token: owner.token }), 404, "site_not_found");
  });

  it("finishes a crawl after the content process is killed in the middle of it", async () => {
    const made = await call("POST", "/agent-sites", { token: owner.token, body: { url: `${slow.base}/` } });
    expect(made.status).toBe(200);
    await expect.poll(() => slow.requests.filter((p) => p === "/").length, { timeout: 10_000 }).toBe(1);
    expect(await stack.stop("content", "SIGKILL")).not.toBe(0);
    await stack.start("content");
    const record = await settled(made.body.id, owner.token, 40_000);
    expect(record).toMatchObject({ status: "live", page_title: "Slow home", error: null });
    // The job ran again from the start in the new process.
    expect(slow.requests.filter((p) => p === "/").length).toBe(2);
  }, 60_000);
});
