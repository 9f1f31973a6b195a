/**
 * The page helpers against a tiny real HTTP server on 127.0.0.1 that answers `GET /v1/services/public`
 * like the gateway: pages of two, a `Link` header naming the next page at another address (the gateway's
 * PUBLIC_URL), none on the last page, and 400 `invalid_cursor` for a cursor it did not give.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { allPages, createToolportClient, nextCursor, PageError, pages, type Service } from "./index.js";

const names = ["alpha", "bravo", "charlie", "delta", "echo"];
const PAGE = 2;
let server: http.Server;
let baseUrl: string;
/** The query of every request the server got, in order. */
let asked: URLSearchParams[] = [];
/** A cursor the server refuses even though it gave it (a service removed in between, say). */
let refuse: string | undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    asked.push(url.searchParams);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== "/v1/services/public") return json(404, { error: { code: "not_found", message: "no" } });
    const cursor = url.searchParams.get("cursor");
    const start = cursor === null ? 0 : Number(cursor.replace(/^c/, ""));
    if ((cursor !== null && !/^c\d+$/.test(cursor)) || cursor === refuse) {
      return json(400, { detail: "bad cursor", error: { code: "invalid_cursor", message: "not a cursor we gave", details: {} } });
    }
    const end = start + PAGE;
    const link =
      end < names.length
        ? { link: `<https://toolport.example/v1/services/public?limit=${PAGE}&cursor=c${end}>; rel="next"` }
        : undefined;
    json(
      200,
      names.slice(start, end).map((name) => ({ id: name, name })),
      link,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  asked = [];
  refuse = undefined;
});

const page = (cursor?: string) =>
  createToolportClient({ baseUrl }).GET("/v1/services/public", { params: { query: { limit: PAGE, cursor } } });
const namesOf = (services: Service[] | undefined) => services?.map((s) => s.name);

describe("nextCursor", () => {
  const withLink = (link?: string) => new Response(null, link ? { headers: { link } } : {});

  it("reads the cursor of the rel=next link, whatever else the header holds", () => {
    expect(nextCursor(withLink('<https://h/v1/tools?limit=5&cursor=abc%3D%3D>; rel="next"'))).toBe("abc==");
    expect(nextCursor(withLink("</v1/tools?cursor=rel>; rel=next"))).toBe("rel");
    expect(
      nextCursor(
        withLink('<https://h/v1/tools?cursor=p>; rel="prev", <https://h/v1/tools?cursor=n>; title="a, b"; rel="last next"'),
      ),
    ).toBe("n");
  });

  it("is undefined on the last page and for a next link without a cursor", () => {
    expect(nextCursor(withLink())).toBeUndefined();
    expect(nextCursor(withLink('<https://h/v1/tools?cursor=p>; rel="prev"'))).toBeUndefined();
    expect(nextCursor(withLink('<https://h/v1/tools?limit=5>; rel="next"'))).toBeUndefined();
  });
});

describe("allPages", () => {
  it("reads three pages and stops on the last", async () => {
    const all = await allPages(page);
    expect(all.error).toBeUndefined();
    expect(namesOf(all.data)).toEqual(names);
    expect(all.truncated).toBe(false);
    expect(all.response.headers.get("link")).toBeNull();
    // Asked here (not at the Link's host), with the caller's own limit, and the cursor only from the second page.
    expect(asked.map((q) => q.toString())).toEqual([`limit=${PAGE}`, `limit=${PAGE}&cursor=c2`, `limit=${PAGE}&cursor=c4`]);
  });

  it("stops on an error and returns it with its response", async () => {
    refuse = "c4";
    const all = await allPages(page);
    expect(all.data).toBeUndefined();
    expect(all.response.status).toBe(400);
    expect(all.error).toMatchObject({ error: { code: "invalid_cursor" } });
    expect(asked).toHaveLength(3);
  });

  it("stops at maxItems, saying more remained", async () => {
    const some = await allPages(page, { maxItems: 3 });
    expect(namesOf(some.data)).toEqual(["alpha", "bravo", "charlie"]);
    expect(some.truncated).toBe(true);
    expect(asked).toHaveLength(2);
    const exact = await allPages(page, { maxItems: 5 });
    expect(exact.truncated).toBe(false);
  });
});

describe("pages", () => {
  it("yields each page in turn, and asks for no more once the loop stops", async () => {
    const seen: string[][] = [];
    for await (const services of pages(page)) seen.push(services.map((s) => s.name));
    expect(seen).toEqual([["alpha", "bravo"], ["charlie", "delta"], ["echo"]]);
    asked = [];
    for await (const services of pages(page)) {
      if (services.some((s) => s.name === "bravo")) break;
    }
    expect(asked).toHaveLength(1);
  });

  it("throws a PageError with the error body and response", async () => {
    refuse = "c2";
    const seen: string[] = [];
    const walk = async () => {
      for await (const services of pages(page)) seen.push(...services.map((s) => s.name));
    };
    const err = await walk().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageError);
    expect((err as PageError).response.status).toBe(400);
    expect((err as PageError<{ error: { code: string } }>).error.error.code).toBe("invalid_cursor");
    expect(seen).toEqual(["alpha", "bravo"]);
  });
});
