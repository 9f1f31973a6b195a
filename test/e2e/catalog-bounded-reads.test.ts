/**
 * The catalog at size (issue 30): no read route reads the whole catalog, and the list routes page.
 *
 * A catalog of 30,000 tools, almost all private to other organizations, is written straight into the
 * catalog's database and the catalog restarted, so its search index holds them all. Postgres counts the
 * rows every statement returns (pg_stat_statements, loaded by the test run's server): each route must
 * read a bounded number of rows per request, far below the catalog's size, whatever it answers.
 *
 * Then the three list routes are walked page by page through their `Link` headers while services and
 * tools are added between pages: every item present at the start comes exactly once, in the documented
 * order, and nothing comes twice.
 */
import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Call, gatewayClient } from "../harness/http.js";
import { type Stack, serviceNames, startStack } from "../harness/stack.js";
import { until } from "../harness/wait.js";

const PRIVATE_SERVICES = 200;
const TOOLS_PER_PRIVATE = 150;
const PUBLIC_SERVICES = 4;
const TOOLS_PER_PUBLIC = 75;
/** Rows a route may read per request: a page (at most 500) and its neighbours, never the catalog. */
const ROW_BOUND = 1_200;

let stack: Stack;
let db: Pool;
let call: Call;
let key: string;
let organizationId: string;
let publicServiceId: string;

/** Services and their tools, written the way publishing stores them (a realistic schema per tool). */
async function addServices(n: number, tools: number, visibility: string, org: string | null, prefix: string): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  await db.query(
    `INSERT INTO services (id, slug, name, service_type, visibility, organization_id, description)
     SELECT id, $2 || '-' || n, $2 || ' service ' || lpad(n::text, 4, '0'), 'api', $3, $4,
            'A service about weather forecasts, invoices and shipping labels'
       FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, n)`,
    [ids, `${prefix}-${randomUUID().slice(0, 6)}`, visibility, org],
  );
  const schema = JSON.stringify({
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`field_${i}`, { type: "string", description: "x".repeat(120) }]),
    ),
  });
  await db.query(
    `INSERT INTO tools (id, service_id, slug, source_key, name, description, method, path, input_schema, tags)
     SELECT gen_random_uuid(), s.id, s.slug || '-op-' || k, 'GET /op' || k,
            'get_forecast_' || lpad(k::text, 4, '0'), 'Get the weather forecast for a city, operation ' || k,
            'GET', '/op' || k, $3::jsonb, ARRAY['weather']
       FROM unnest($1::uuid[]) AS s0(id) JOIN services s ON s.id = s0.id, generate_series(1, $2) AS k`,
    [ids, tools, schema],
  );
  return ids;
}

/** Rows every statement of the catalog's database returned while `run` ran. */
async function rowsRead(run: () => Promise<unknown>): Promise<number> {
  await db.query("SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)");
  await run();
  const { rows } = await db.query<{ n: string }>(
    `SELECT coalesce(sum(rows), 0)::text AS n FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%'`,
  );
  return Number(rows[0]?.n ?? 0);
}

const nextUrl = (headers: Headers): string | null => {
  const link = headers.get("link");
  if (!link) return null;
  const m = /<([^>]+)>;\s*rel="next"/.exec(link);
  expect(m, link).not.toBeNull();
  return (m as RegExpExecArray)[1] as string;
};

/** Follows the Link headers from `first` (a /v1 path), calling `between` before each next page. */
async function walk<T>(first: string, options: { key?: string; between?: (page: number) => Promise<void> } = {}) {
  const items: T[] = [];
  let path: string | null = first;
  for (let page = 0; path; page++) {
    const res = await call("GET", path, { key: options.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    items.push(...(res.body as T[]));
    const next = nextUrl(res.headers);
    if (next) {
      const url = new URL(next);
      expect(url.origin).toBe(stack.gatewayUrl);
      path = url.pathname.replace(/^\/v1/, "") + url.search;
      await options.between?.(page);
    } else path = null;
    expect(page).toBeLessThan(10_000);
  }
  return items;
}

beforeAll(async () => {
  stack = await startStack([...serviceNames, "gateway"], {}, { layout: "per-role" });
  call = gatewayClient(stack.gatewayUrl);
  db = createPool(stack.env.CATALOG_DATABASE_URL as string, 2);
  await db.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  const agent = await call("POST", "/agents", { body: { name: "bounded-reads", operator_email: "bounded@example.com" } });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  key = agent.body.api_key;
  organizationId = (await call("GET", "/organizations", { key })).body[0].id;
  for (let i = 0; i < 4; i++) {
    await addServices(PRIVATE_SERVICES / 4, TOOLS_PER_PRIVATE, "private", randomUUID(), `other${i}`);
  }
  [publicServiceId] = (await addServices(PUBLIC_SERVICES, TOOLS_PER_PUBLIC, "public", null, "open")) as [string];
  await addServices(3, 100, "private", organizationId, "mine");
  await db.query("ANALYZE");
  // The index is rebuilt from Postgres on start: restart the catalog so it holds every row above.
  await stack.stop("catalog");
  await stack.start("catalog");
  await until(
    "search ready after the restart",
    async () => (await fetch(`${stack.gatewayUrl}/v1/tools/public/search?query=forecast`)).status === 200,
    {
      timeoutMs: 120_000,
    },
  );
}, 600_000);

afterAll(async () => {
  await db?.end();
  await stack?.stopAll();
});

describe("a 30,000-tool catalog", () => {
  it("holds what the test wrote", async () => {
    const { rows } = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM tools");
    expect(Number(rows[0]?.n)).toBeGreaterThan(PRIVATE_SERVICES * TOOLS_PER_PRIVATE);
  });

  it("answers every read route reading a bounded number of rows", async () => {
    const routes: { name: string; run: () => Promise<{ status: number; body: unknown }> }[] = [
      { name: "GET /tools", run: () => call("GET", "/tools", { key }) },
      { name: "GET /tools?limit=500", run: () => call("GET", "/tools?limit=500", { key }) },
      { name: "GET /tools/search (blank)", run: () => call("GET", "/tools/search", { key }) },
      { name: "GET /tools/search?query", run: () => call("GET", "/tools/search?query=weather%20forecast", { key }) },
      { name: "GET /tools/search ready_only", run: () => call("GET", "/tools/search?ready_only=true&tags=weather", { key }) },
      { name: "GET /tools/public/search", run: () => call("GET", "/tools/public/search?query=forecast%20city") },
      { name: "GET /tools/recommended", run: () => call("GET", "/tools/recommended?limit=50", { key }) },
      { name: "GET /tools/recommended (anonymous)", run: () => call("GET", "/tools/recommended?limit=50") },
      { name: "GET /services/public", run: () => call("GET", "/services/public") },
      { name: "GET /services/public/{id}/tools", run: () => call("GET", `/services/public/${publicServiceId}/tools`) },
      {
        name: "POST /agents",
        run: () => call("POST", "/agents", { body: { name: "newcomer", operator_email: "newcomer@example.com" } }),
      },
    ];
    const read: Record<string, number> = {};
    for (const route of routes) {
      let reply: { status: number; body: unknown } = { status: 0, body: null };
      read[route.name] = await rowsRead(async () => {
        reply = await route.run();
      });
      expect(reply.status, `${route.name}: ${JSON.stringify(reply.body).slice(0, 300)}`).toBe(200);
    }
    for (const [name, rows] of Object.entries(read)) {
      expect(rows, `${name}; rows read per request: ${JSON.stringify(read)}`).toBeLessThanOrEqual(ROW_BOUND);
    }
  });

  it("still finds what the caller sees, and only that", async () => {
    const found = await call("GET", "/tools/search?query=weather%20forecast", { key });
    expect(found.body.length).toBeGreaterThan(0);
    const visible = new Set(
      (
        await db.query<{ id: string }>(
          `SELECT t.id::text AS id FROM tools t JOIN services s ON s.id = t.service_id
            WHERE s.visibility IN ('public', 'internal') OR s.organization_id = $1`,
          [organizationId],
        )
      ).rows.map((r) => r.id),
    );
    for (const tool of found.body as { id: string }[]) expect(visible.has(tool.id)).toBe(true);
    const agent = await call("POST", "/agents", { body: { name: "second", operator_email: "second@example.com" } });
    expect(agent.status).toBe(200);
    expect(agent.body.getting_started.try_first.length).toBeGreaterThan(0);
  });
});

describe("paging", () => {
  it("GET /tools: every visible tool once, ready ones first, while services are added between pages", async () => {
    const { rows } = await db.query<{ id: string }>(
      `SELECT t.id::text AS id FROM tools t JOIN services s ON s.id = t.service_id
        WHERE (s.visibility IN ('public', 'internal') OR s.organization_id = $1)
          AND t.status = 'active' AND s.status <> 'retired' AND (t.sunset_date IS NULL OR t.sunset_date > now())`,
      [organizationId],
    );
    const before = new Set(rows.map((r) => r.id));
    const seen = await walk<{ id: string; readiness: string; service_id: string; name: string }>("/tools?limit=37", {
      key,
      between: async (page) => {
        if (page % 3 === 0) await addServices(1, 5, "public", null, `late${page}`);
      },
    });
    const ids = seen.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of before) expect(ids).toContain(id);
    // Within real services, tools the caller can call now come first.
    const services = new Map(
      (await db.query<{ id: string; is_demo: boolean }>("SELECT id::text AS id, is_demo FROM services")).rows.map((r) => [
        r.id,
        r.is_demo,
      ]),
    );
    const real = seen.filter((t) => !services.get(t.service_id));
    const firstNotReady = real.findIndex((t) => t.readiness !== "ready");
    if (firstNotReady >= 0) expect(real.slice(firstNotReady).every((t) => t.readiness !== "ready")).toBe(true);
  });

  it("GET /services/public: every public service once, by name, while services are added between pages", async () => {
    const { rows } = await db.query<{ id: string }>("SELECT id::text AS id FROM services WHERE visibility = 'public'");
    const seen = await walk<{ id: string; name: string }>("/services/public?limit=2", {
      between: async (page) => {
        await addServices(1, 1, "public", null, page % 2 ? "aaa" : "zzz");
      },
    });
    const ids = seen.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of rows) expect(ids).toContain(r.id);
  });

  it("GET /services/public/{id}/tools: every tool once, by name, while tools are added between pages", async () => {
    const { rows } = await db.query<{ id: string }>("SELECT id::text AS id FROM tools WHERE service_id = $1", [publicServiceId]);
    const seen = await walk<{ id: string; name: string }>(`/services/public/${publicServiceId}/tools?limit=10`, {
      between: async (page) => {
        await db.query(
          `INSERT INTO tools (id, service_id, slug, source_key, name, method, path)
           VALUES (gen_random_uuid(), $1, $2, $2, $3, 'GET', '/late')`,
          [publicServiceId, `late-${randomUUID()}`, page % 2 ? "aaa_early_name" : "zzz_late_name"],
        );
      },
    });
    const ids = seen.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of rows) expect(ids).toContain(r.id);
    const names = seen.map((t) => t.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it("refuses a cursor it did not give and a page size below 1, clamps a large one", async () => {
    const bad = await call("GET", "/tools?cursor=not-a-cursor", { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_cursor");
    const other = await call("GET", "/services/public?limit=1");
    const cursor = new URL(nextUrl(other.headers) as string).searchParams.get("cursor") as string;
    const crossed = await call("GET", `/tools?cursor=${encodeURIComponent(cursor)}`, { key });
    expect(crossed.status).toBe(400);
    expect(crossed.body.error.code).toBe("invalid_cursor");
    const zero = await call("GET", "/services/public?limit=0");
    expect(zero.status).toBe(400);
    expect(zero.body.error.code).toBe("invalid_limit");
    const huge = await call("GET", "/tools?limit=100000", { key });
    expect(huge.status).toBe(200);
    expect(huge.body.length).toBe(500);
    const last = await call("GET", `/services/public/${publicServiceId}/tools?limit=500`);
    expect(last.headers.get("link")).toBeNull();
  });
});
