/**
 * A restart with a large catalog (issue 30): 30,000 tools written straight into the stack's catalog
 * database (a few through the API first), then the catalog role restarted. Search answers 503 until
 * the index is rebuilt, then 200; it finds tools from before the restart, at both ends of the
 * rebuild's id order (its pages), and the index holds exactly the catalog's tools. Then with the
 * index's snapshot (CATALOG_INDEX_SNAPSHOT): written on a clean stop, loaded on the next start and
 * brought up to date with the changes made while the catalog was down, answering as a rebuild does.
 * No timing is asserted: the bench (test/bench/catalog-scale.ts) measures the time to ready.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createPool, type Pool } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../harness/stack.js";

const SERVICES = 300;
const TOOLS_PER_SERVICE = 100;
/** Every tool whose number is a multiple of this carries a shared tag, so a search for it has a known answer. */
const MARKED_EVERY = 997;

let stack: Stack;
let db: Pool;
let key: string;

const api = (p: string) => `${stack.gatewayUrl}/v1${p}`;

async function search(query: string, limit = 100): Promise<{ status: number; ids: string[] }> {
  const res = await fetch(api(`/tools/search?query=${encodeURIComponent(query)}&limit=${limit}`), {
    headers: { "svc-api-key": key },
  });
  const body = (await res.json()) as { id: string }[];
  return { status: res.status, ids: res.status === 200 ? body.map((t) => t.id) : [] };
}

beforeAll(async () => {
  stack = await startStack(["catalog", "identity", "billing", "gateway"], {}, { layout: "per-role" });
  const agent = await fetch(api("/agents"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "restart-test", operator_email: "restart@example.com" }),
  });
  expect(agent.status).toBe(200);
  key = ((await agent.json()) as { api_key: string }).api_key;
  db = createPool(stack.env.CATALOG_DATABASE_URL as string, 2);
}, 180_000);

afterAll(async () => {
  await db?.end();
  await stack?.stopAll();
});

describe("restarting the catalog with a large catalog", () => {
  it("reaches ready, finds what was there and indexes every tool", async () => {
    // One service through the API, so the catalog's own writes are among what the restart must find.
    const published = await fetch(api("/services"), {
      method: "POST",
      headers: { "content-type": "application/json", "svc-api-key": key },
      body: JSON.stringify({
        name: "Quokka Weather",
        visibility: "public",
        api: {
          document_text: JSON.stringify({
            openapi: "3.0.3",
            info: { title: "Quokka Weather", version: "1" },
            servers: [{ url: "https://weather.example.com" }],
            paths: {
              "/forecast": {
                get: {
                  operationId: "quokkaForecast",
                  summary: "Quokka forecast for a city",
                  parameters: [{ name: "city", in: "query", description: "city name", schema: { type: "string" } }],
                  responses: { "200": { description: "OK" } },
                },
              },
            },
          }),
        },
      }),
    });
    expect(published.status).toBe(201);
    const quokka = ((await published.json()) as { tools: { id: string }[] }).tools[0]?.id;

    // 30,000 tools in 300 public services, each with a word of its own in its name (its number in
    // letters, which the tokenizer keeps whole: 123 -> zqbcd), parameters with descriptions and large
    // schemas (which the rebuild must not need), some inactive or of a retired service.
    await db.query(
      `INSERT INTO services (id, slug, name, summary, description, service_type, visibility, status)
       SELECT gen_random_uuid(), 'bulk-' || s, 'Bulk service ' || s, 'summary ' || s, 'Bulk records for restart tests',
              'api', 'public', CASE WHEN s % 50 = 0 THEN 'retired' ELSE 'active' END
         FROM generate_series(1, $1::int) AS s`,
      [SERVICES],
    );
    await db.query(
      `INSERT INTO tools (id, service_id, slug, name, description, status, tags, source_key, parameters, input_schema)
       SELECT gen_random_uuid(), s.id, s.slug || '-' || n, 'Bulk record zq' || translate(i::text, '0123456789', 'abcdefghij'),
              'Reads one bulk record by its key',
              CASE WHEN n % 10 = 0 THEN 'inactive' ELSE 'active' END,
              CASE WHEN i % $2::int = 0 THEN ARRAY['bulkmarker'] ELSE ARRAY[]::text[] END,
              'GET /r' || n,
              jsonb_build_object('key', jsonb_build_object('name', 'key', 'location', 'query', 'description', 'record key',
                                 'type', 'string', 'required', true,
                                 'jsonSchema', jsonb_build_object('type', 'string', 'description', repeat('long schema text ', 40)))),
              jsonb_build_object('type', 'object', 'description', repeat('long schema text ', 80))
         FROM services s, generate_series(1, $1::int) AS n,
              LATERAL (SELECT (substring(s.slug from 6)::int - 1) * $1::int + n AS i) AS k
        WHERE s.slug LIKE 'bulk-%'`,
      [TOOLS_PER_SERVICE, MARKED_EVERY],
    );
    const total = Number((await db.query("SELECT count(*)::int AS n FROM tools")).rows[0].n);
    expect(total).toBeGreaterThanOrEqual(SERVICES * TOOLS_PER_SERVICE);
    // Callable bulk tools at both ends of the id order and in the middle (the rebuild reads by id, in pages).
    const callable = `SELECT t.id::text, t.name FROM tools t JOIN services s ON s.id = t.service_id
                       WHERE t.slug LIKE 'bulk-%' AND t.status = 'active' AND s.status = 'active'`;
    const ends = await db.query<{ name: string; id: string }>(
      `(${callable} ORDER BY t.id LIMIT 1) UNION ALL (${callable} ORDER BY t.id DESC LIMIT 1)
       UNION ALL (${callable} ORDER BY t.id OFFSET 12000 LIMIT 1)`,
    );
    // One tool's parameter gets a description no other text has: the rebuild reads parameters' descriptions
    // from the column Postgres generates from `parameters` (migration 0005), which an update must refresh.
    const described = ends.rows[2] as { id: string };
    await db.query(
      `UPDATE tools SET parameters = jsonb_set(parameters, '{key,description}', '"wombat ledger key"') WHERE id = $1`,
      [described.id],
    );

    await restartCatalog();

    expect((await search("quokka forecast", 5)).ids).toContain(quokka);
    expect((await search("wombat ledger", 5)).ids).toEqual([described.id]);
    for (const row of ends.rows) {
      const unique = row.name.split(" ").at(-1) as string;
      expect((await search(unique, 5)).ids, `${row.name} (${row.id})`).toContain(row.id);
    }
    // Every marked tool that is callable (active, of an active service) and only those.
    const marked = await db.query<{ id: string }>(
      `SELECT t.id::text FROM tools t JOIN services s ON s.id = t.service_id
        WHERE 'bulkmarker' = ANY(t.tags) AND t.status = 'active' AND s.status = 'active'`,
    );
    expect(marked.rows.length).toBeGreaterThan(0);
    expect((await search("bulkmarker", 100)).ids.sort()).toEqual(marked.rows.map((r) => r.id).sort());

    // The index holds exactly the catalog's tools: the count the rebuild logged after the restart.
    expect((await lastLog("search index rebuilt"))?.tools).toBe(total);
  }, 300_000);

  it("loads the index's snapshot on a restart, brought up to date with what changed while it was down", async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), "toolport-index-"));
    const file = path.join(folder, "index.snapshot");
    stack.env.CATALOG_INDEX_SNAPSHOT = file;
    const total = Number((await db.query("SELECT count(*)::int AS n FROM tools")).rows[0].n);
    // The catalog now runs with the file: it has none yet, so it rebuilds; its clean stop writes it.
    await restartCatalog();
    expect((await lastLog("search index snapshot not used"))?.reason).toBe("no snapshot yet");
    await stack.stop("catalog");
    expect((await lastLog("search index snapshot written"))?.tools).toBe(total);

    // While it is down: one tool edited (its revision goes up, as with every write of the catalog's),
    // one deleted, one added, one service renamed (each of its tools' documents carries the name).
    const callable = await db.query<{ id: string; name: string; service_id: string }>(
      `SELECT t.id::text, t.name, t.service_id::text FROM tools t JOIN services s ON s.id = t.service_id
        WHERE t.slug LIKE 'bulk-1-%' AND t.status = 'active' ORDER BY t.id LIMIT 2`,
    );
    const [edited, deleted] = callable.rows as [(typeof callable.rows)[0], (typeof callable.rows)[0]];
    await db.query("UPDATE tools SET name = 'Bulk record koala', revision = revision + 1 WHERE id = $1", [edited.id]);
    await db.query("DELETE FROM tools WHERE id = $1", [deleted.id]);
    const added = (
      await db.query<{ id: string }>(
        `INSERT INTO tools (id, service_id, slug, name, description, source_key)
         VALUES (gen_random_uuid(), $1, 'bulk-1-platypus', 'Platypus ledger lookup', 'Finds a platypus ledger', 'GET /platypus')
         RETURNING id::text`,
        [edited.service_id],
      )
    ).rows[0]?.id;
    await db.query("UPDATE services SET name = 'Numbat Holdings' WHERE slug = 'bulk-7'");
    const numbats = await db.query<{ id: string }>(
      `SELECT t.id::text FROM tools t JOIN services s ON s.id = t.service_id WHERE s.slug = 'bulk-7' AND t.status = 'active'`,
    );

    await stack.start("catalog");
    await untilReady();
    const loaded = await lastLog("search index loaded from its snapshot");
    // Re-read: the edited and the added tool, the renamed service's 100 tools, and the built-in tools
    // (every start seeds them again, which counts as a re-import); the deleted one removed.
    const seeded = Number(
      (
        await db.query(
          `SELECT count(*)::int AS n FROM tools t JOIN services s ON s.id = t.service_id
            WHERE s.slug NOT LIKE 'bulk-%' AND s.name <> 'Quokka Weather'`,
        )
      ).rows[0].n,
    );
    expect(seeded).toBeGreaterThan(0);
    expect(loaded).toMatchObject({ tools: total, changed: 1 + 1 + TOOLS_PER_SERVICE + seeded, removed: 1 });
    // (Search ranks the other tools of a matching tool's service after it, so the match comes first.)
    expect((await search("koala", 5)).ids[0]).toBe(edited.id);
    expect((await search(edited.name.split(" ").at(-1) as string, 5)).ids).not.toContain(edited.id);
    expect((await search(deleted.name.split(" ").at(-1) as string, 5)).ids).not.toContain(deleted.id);
    expect((await search("platypus ledger", 5)).ids[0]).toBe(added);
    const numbatHits = (await search("numbat", 100)).ids;
    expect(numbatHits.length).toBeGreaterThan(0);
    expect(numbatHits.filter((id) => !numbats.rows.some((r) => r.id === id))).toEqual([]);

    // The same answers as a rebuild from Postgres gives (the clean stop writes the file again: remove it).
    const queries = ["bulkmarker", "koala", "platypus ledger", "numbat", "quokka forecast", "wombat ledger"];
    // Each side once it has applied what it was sent: the built-in tools every start seeds again reach the
    // index as events after it is ready, and on a busy machine a search can come before they are applied.
    const steadyAnswers = async () => {
      const answers = () => Promise.all(queries.map(async (q) => (await search(q, 100)).ids.sort()));
      let last = await answers();
      for (let i = 0; i < 20; i++) {
        await new Promise((r) => setTimeout(r, 500));
        const next = await answers();
        if (JSON.stringify(next) === JSON.stringify(last)) return next;
        last = next;
      }
      return last;
    };
    const fromSnapshot = await steadyAnswers();
    await stack.stop("catalog");
    await rm(file);
    await stack.start("catalog");
    await untilReady();
    expect((await lastLog("search index snapshot not used"))?.reason).toBe("no snapshot yet");
    const rebuilt = await steadyAnswers();
    // On a mismatch, say which query and which tools (name, service, slug) differ.
    const differing = await Promise.all(
      queries.map(async (q, i) => {
        const only = (a: string[], b: string[]) => a.filter((id) => !b.includes(id));
        const ids = [...only(rebuilt[i] ?? [], fromSnapshot[i] ?? []), ...only(fromSnapshot[i] ?? [], rebuilt[i] ?? [])];
        if (ids.length === 0) return null;
        const rows = await db.query(
          "SELECT t.id::text, t.name, t.slug, t.status, s.name AS service FROM tools t JOIN services s ON s.id = t.service_id WHERE t.id = ANY($1::uuid[])",
          [ids],
        );
        return { query: q, rebuiltOnly: only(rebuilt[i] ?? [], fromSnapshot[i] ?? []), rows: rows.rows };
      }),
    );
    expect(rebuilt, JSON.stringify(differing.filter(Boolean))).toEqual(fromSnapshot);
    await rm(folder, { recursive: true, force: true });
  }, 300_000);
});

/** Search answers 200 (503 with Retry-After until the index is ready). */
async function untilReady(): Promise<void> {
  let status = 0;
  for (let i = 0; i < 1200 && status !== 200; i++) {
    status = (await search("quokka forecast")).status;
    if (status !== 200) {
      expect(status).toBe(503);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  expect(status).toBe(200);
}

async function restartCatalog(): Promise<void> {
  await stack.stop("catalog");
  await stack.start("catalog");
  await untilReady();
}

/** The catalog's last log line whose message starts so, parsed. */
async function lastLog(msg: string): Promise<Record<string, unknown> | undefined> {
  const line = (await stack.log("catalog"))
    .split("\n")
    .filter((l) => l.includes(`"msg":"${msg}`))
    .at(-1);
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}
