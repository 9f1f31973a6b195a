/**
 * The site crawler against real HTTP servers on 127.0.0.1 (node:http), dialled through the guarded
 * outbound client with the test servers on its allow-list, as an operator would allow a local host.
 * Every server logs the paths it was asked for, so "never fetched" is observed, not assumed.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { afterEach, describe, expect, it } from "vitest";
import { categoryOf, classifySite, tagsOf } from "../src/sites/classify.js";
import { normalisePhone } from "../src/sites/contact.js";
import { CRAWLER_USER_AGENT, CrawlError, crawlSite } from "../src/sites/crawl.js";
import { mcpServersOf } from "../src/sites/discover.js";
import { crawlableLink, siteDomain } from "../src/sites/urls.js";
import { expectedFixtureFacts, fixtureSiteRoutes, type Handler, html, send } from "./site-fixture.js";

interface TestServer {
  port: number;
  base: string;
  /** Paths (with query) in the order they were asked for. */
  requests: string[];
  userAgents: Set<string>;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An HTTP server on 127.0.0.1: exact paths to handlers, 404 for the rest. */
async function serve(routes: Record<string, Handler>): Promise<TestServer> {
  const requests: string[] = [];
  const userAgents = new Set<string>();
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    userAgents.add(req.headers["user-agent"] ?? "");
    const handler = routes[new URL(req.url ?? "/", "http://x").pathname];
    if (handler) handler(req, res);
    else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { port, base: `http://127.0.0.1:${port}`, requests, userAgents, close };
}

/** The guarded client, allowing exactly the given local entries (as CONTENT_OUTBOUND_ALLOW would). */
function outbound(allow: string): Outbound {
  const client = new Outbound({ policy: new AddressPolicy(allow, "TEST_ALLOW") });
  cleanups.push(() => client.close());
  return client;
}

const page = (title: string, links: string[] = []) =>
  html(
    `<!doctype html><title>${title}</title><main><h1>${title}</h1>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</main>`,
  );
/** Answers with headers and then nothing, keeping the connection open. */
const hang: Handler = () => {};

describe("crawlSite on a small site", () => {
  it("reads a multi-page site into the exact record, honouring robots.txt", async () => {
    const site = await serve(fixtureSiteRoutes());
    const asked: string[] = [];
    const b = site.base;

    const facts = await crawlSite(`${b}/start#intro`, {
      outbound: outbound(`127.0.0.1:${site.port}`),
      catalogServices: async (domain) => {
        asked.push(domain);
        return [{ id: "svc_acme_weather", name: "Acme Weather" }];
      },
    });

    const expected = expectedFixtureFacts(b, { id: "svc_acme_weather", name: "Acme Weather" });
    expect(facts).toEqual(expected);
    expect(asked).toEqual(["127.0.0.1"]);

    // robots.txt came first; the disallowed page, the PDF link and other sites were never asked for.
    expect(site.requests[0]).toBe("/robots.txt");
    expect(site.requests).not.toContain("/members");
    expect(site.requests).not.toContain("/brochure.pdf");
    expect(site.requests.filter((p) => p === "/openapi.json")).toHaveLength(1);
    expect([...site.userAgents]).toEqual([CRAWLER_USER_AGENT]);
  });
});

describe("crawlSite refuses what it must not dial", () => {
  it("refuses a local server that is not on the allow-list, without sending it anything", async () => {
    const site = await serve({ "/": page("Private") });
    const err = await crawlSite(`${site.base}/`, { outbound: outbound("") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrawlError);
    expect((err as CrawlError).code).toBe("address_not_allowed");
    expect(site.requests).toEqual([]);
  });

  it("refuses the cloud metadata address", async () => {
    const err = await crawlSite("http://169.254.169.254/latest/meta-data/", { outbound: outbound("") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrawlError);
    expect((err as CrawlError).code).toBe("address_not_allowed");
  });

  it("maps a start page it cannot read to the matching code", async () => {
    const other = await serve({});
    const site = await serve({
      "/robots.txt": send("text/plain", "User-agent: *\nDisallow: /private\n"),
      "/private": page("Private"),
      "/data": send("application/json", "{}"),
      "/away": (_req, res) => res.writeHead(301, { location: `http://localhost:${other.port}/` }).end(),
      "/too-big": html(Buffer.alloc(4096, "a")),
    });
    const deps = { outbound: outbound(`127.0.0.1:${site.port},localhost:${other.port}`), limits: { maxBytes: 1024 } };
    const codeOf = (path: string) => crawlSite(`${site.base}${path}`, deps).catch((e: unknown) => (e as CrawlError).code);
    expect(await codeOf("/private")).toBe("robots_disallowed");
    expect(await codeOf("/data")).toBe("not_html");
    expect(await codeOf("/away")).toBe("unreachable");
    expect(await codeOf("/missing")).toBe("unreachable");
    expect(await codeOf("/too-big")).toBe("too_large");
    expect(site.requests).not.toContain("/private");
    expect(other.requests).toEqual([]);
  });

  it("rejects start URLs it does not crawl", async () => {
    for (const url of ["ftp://example.com/", "example.com", "http://user:secret@example.com/", "javascript:alert(1)"]) {
      const err = await crawlSite(url, { outbound: outbound("") }).catch((e: unknown) => e);
      expect((err as CrawlError).code, url).toBe("invalid_url");
    }
  });

  it("never fetches links to another host, even one the allow-list admits", async () => {
    const other = await serve({ "/": page("Elsewhere") });
    const site = await serve({ "/": page("Home", [`http://localhost:${other.port}/`, "/next"]), "/next": page("Next") });
    const facts = await crawlSite(`${site.base}/`, {
      outbound: outbound(`127.0.0.1:${site.port},127.0.0.1:${other.port},localhost:${other.port}`),
    });
    expect(facts.pagesCrawled).toEqual([`${site.base}/`, `${site.base}/next`]);
    expect(other.requests).toEqual([]);
  });
});

describe("crawlSite within its limits", () => {
  it("abandons a page that hangs after pageTimeoutMs and finishes the crawl", async () => {
    const site = await serve({
      "/": page("Home", ["/hangs", "/trickles", "/fine"]),
      "/hangs": hang,
      // Headers and a first chunk, then nothing: the deadline covers the body too.
      "/trickles": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.write("<!doctype html><title>Slow");
      },
      "/fine": page("Fine"),
    });
    const started = Date.now();
    const facts = await crawlSite(`${site.base}/`, {
      outbound: outbound(`127.0.0.1:${site.port}`),
      limits: { pageTimeoutMs: 300 },
    });
    const elapsed = Date.now() - started;

    expect(facts.pagesCrawled).toEqual([`${site.base}/`, `${site.base}/fine`]);
    expect(facts.skipped).toEqual([
      { url: `${site.base}/hangs`, reason: "error", detail: "no complete answer within 300 ms" },
      { url: `${site.base}/trickles`, reason: "error", detail: "no complete answer within 300 ms" },
    ]);
    expect(facts.truncated).toBe(false);
    // The two slow pages were read side by side: one deadline, not two, plus the rest.
    expect(elapsed).toBeLessThan(2_000);
  });

  it("fails with timeout when the start page hangs, in bounded time", async () => {
    const site = await serve({ "/robots.txt": hang, "/": hang });
    const started = Date.now();
    const err = await crawlSite(`${site.base}/`, {
      outbound: outbound(`127.0.0.1:${site.port}`),
      limits: { pageTimeoutMs: 300 },
    }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(CrawlError);
    expect((err as CrawlError).code).toBe("timeout");
    // robots.txt (300 ms, then crawled as if it allowed everything) and the start page (300 ms).
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(elapsed).toBeLessThan(2_000);
  });

  it("stops reading a 50 MiB page at the byte budget and stops crawling", async () => {
    const fiftyMiB = 50 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, "a");
    let written = 0;
    let closedAt: number | undefined;
    const site = await serve({
      "/": page("Home", ["/huge", "/p1", "/p2", "/p3", "/p4", "/p5"]),
      "/huge": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.on("close", () => {
          closedAt = written;
        });
        const pump = () => {
          while (written < fiftyMiB && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
      },
      ...Object.fromEntries(["/p1", "/p2", "/p3", "/p4", "/p5"].map((p) => [p, page(p)])),
    });

    const facts = await crawlSite(`${site.base}/`, { outbound: outbound(`127.0.0.1:${site.port}`) });

    expect(facts.truncated).toBe(true);
    expect(facts.skipped).toContainEqual({
      url: `${site.base}/huge`,
      reason: "limit",
      detail: "the byte budget (5242880 bytes) ran out while reading",
    });
    // The wave after the one holding /huge was never sent.
    expect(facts.skipped).toContainEqual(expect.objectContaining({ url: `${site.base}/p4`, reason: "limit" }));
    expect(facts.skipped).toContainEqual(expect.objectContaining({ url: `${site.base}/p5`, reason: "limit" }));
    expect(site.requests).not.toContain("/p4");
    await expect.poll(() => closedAt).toBeDefined();
    // The server saw the connection closed early: what it wrote is the budget plus socket buffers.
    // (About 8 MB here: the 5 MiB read, what the kernel buffered on both sides, the last chunks in flight.)
    expect(closedAt!).toBeLessThan(16 * 1024 * 1024);
  });

  it("stops when the caller cancels, with the caller's reason", async () => {
    const site = await serve({ "/": hang, "/robots.txt": hang });
    const reason = new Error("shutting down");
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 100);
    const started = Date.now();
    const err = await crawlSite(`${site.base}/`, {
      outbound: outbound(`127.0.0.1:${site.port}`),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(err).toBe(reason);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("reads at most maxPages pages of a 40-page site", async () => {
    const paths = Array.from({ length: 40 }, (_, i) => `/p/${i + 1}`);
    const site = await serve({ "/": page("Home", paths), ...Object.fromEntries(paths.map((p) => [p, page(`Page ${p}`)])) });

    const facts = await crawlSite(`${site.base}/`, { outbound: outbound(`127.0.0.1:${site.port}`), limits: { maxPages: 10 } });

    expect(facts.pagesCrawled).toEqual([`${site.base}/`, ...paths.slice(0, 9).map((p) => `${site.base}${p}`)]);
    expect(facts.truncated).toBe(true);
    expect(facts.skipped).toEqual(
      paths.slice(9).map((p) => ({ url: `${site.base}${p}`, reason: "limit", detail: "the page limit (10) was reached" })),
    );
    expect(site.requests.filter((p) => p === "/" || p.startsWith("/p/"))).toHaveLength(10);
  });
});

describe("site crawler helpers", () => {
  it("follows links within the registrable domain only", () => {
    const base = "https://www.example.co.uk/products/";
    const domain = siteDomain("www.example.co.uk");
    expect(domain).toBe("example.co.uk");
    expect(crawlableLink("../about#team", base, domain)?.href).toBe("https://www.example.co.uk/about");
    expect(crawlableLink("https://docs.example.co.uk/start", base, domain)?.href).toBe("https://docs.example.co.uk/start");
    expect(crawlableLink("http://EXAMPLE.co.uk:80/x?", base, domain)?.href).toBe("http://example.co.uk/x");
    for (const href of [
      "https://example.com/",
      "https://evil-example.co.uk/",
      "https://example.co.uk.evil.test/",
      "mailto:a@example.co.uk",
      "tel:+441234",
      "javascript:void(0)",
      "https://user:pw@www.example.co.uk/",
      "/files/brochure.PDF",
      "/logo.png",
    ]) {
      expect(crawlableLink(href, base, domain), href).toBeUndefined();
    }
    // Private suffixes: two GitHub Pages sites are two sites.
    expect(crawlableLink("https://bob.github.io/", "https://alice.github.io/", siteDomain("alice.github.io"))).toBeUndefined();
    expect(siteDomain("127.0.0.1")).toBe("127.0.0.1");
    expect(siteDomain("[::1]")).toBe("::1");
    expect(siteDomain("localhost")).toBe("localhost");
  });

  it("normalises phone numbers to + and digits", () => {
    expect(normalisePhone("tel:+1 (555) 010-0199;ext=12")).toBe("+15550100199");
    expect(normalisePhone("020 7946 0000")).toBe("02079460000");
    expect(normalisePhone("tel:12")).toBeUndefined();
  });

  it("reads the MCP endpoint of a server card, a list and a client configuration", () => {
    const doc = new URL("https://example.com/.well-known/mcp.json");
    expect(mcpServersOf({ name: "x/y", transport: { type: "http", endpoint: "/mcp" } }, doc)).toEqual([
      { type: "mcp", url: "https://example.com/mcp", name: "x/y" },
    ]);
    expect(mcpServersOf({ mcpServers: { weather: { url: "https://mcp.example.net/" } } }, doc)).toEqual([
      { type: "mcp", url: "https://mcp.example.net/", name: "weather" },
    ]);
    expect(mcpServersOf({ servers: [{ url: "javascript:alert(1)" }, { endpoint: { url: "/b" } }] }, doc)).toEqual([
      { type: "mcp", url: "https://example.com/b", name: null },
    ]);
  });
});

describe("classifySite", () => {
  const base = { title: "", description: "", headings: [], navLabels: [], jsonLdTypes: [] };

  it("is deterministic and ignores the order of its input lists", () => {
    const input = {
      title: "Fresh bakery and coffee in Lyon",
      description: "Bread, pastries and coffee, baked every morning.",
      headings: ["Our menu", "Catering", "Coffee beans", "Opening hours"],
      navLabels: ["Menu", "Catering", "Contact"],
      jsonLdTypes: ["Bakery", "Organization"],
    };
    const first = classifySite(input);
    expect(first).toEqual({
      category: "food",
      // "menu" scores for food but is no tag: it is also every site's hamburger button.
      tags: ["coffee", "catering", "baked", "bakery", "beans", "bread", "fresh", "hours", "lyon", "morning"],
    });
    expect(classifySite(input)).toEqual(first);
    expect(
      classifySite({ ...input, headings: [...input.headings].reverse(), navLabels: [...input.navLabels].reverse() }),
    ).toEqual(first);
  });

  it("breaks equal scores by the category list and falls back to other", () => {
    // "api" (developer-tools) and "hotel" (travel) score 2 each: the category listed first wins.
    expect(categoryOf({ ...base, title: "Hotel API" })).toBe("developer-tools");
    expect(categoryOf({ ...base, title: "Hotel booking API" })).toBe("travel");
    expect(categoryOf({ ...base, headings: ["Hotel"] })).toBe("other");
    expect(categoryOf({ ...base, jsonLdTypes: ["GovernmentOrganization"] })).toBe("government");
  });

  it("tags by frequency, then alphabetically, without stopwords or short words", () => {
    expect(tagsOf({ ...base, title: "The zebra and the yak", headings: ["Yak wool", "Zebra stripes", "Yak"] })).toEqual([
      "yak",
      "zebra",
      "stripes",
      "wool",
    ]);
  });
});
