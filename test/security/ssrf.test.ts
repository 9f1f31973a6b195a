/**
 * The SSRF corpus (ssrf/corpus.ts) against every dialler, through the gateway's /v1 as a client would:
 *  - execution: a service published with the URL as its base_url, then a call of its tool (rebinding: a
 *    first call reaching the allowed server, then a second; and an MCP server published while its name
 *    answered the allowed address, called after it answers a private one);
 *  - catalog, OpenAPI import: the URL as api.document_url (rebinding: publish, then re-import);
 *  - catalog, MCP import: the URL as mcp_server.url (rebinding: publish, then re-import);
 *  - webhooks: created with the URL, and an existing webhook updated to it; what is accepted (rebinding,
 *    redirects from the allowed server) gets a test delivery, which must be refused or not followed;
 *  - site crawl: a site registered with the URL; what is accepted is crawled, and the crawl must fail.
 * The services resolve names with the test's DNS server (OUTBOUND_DNS_SERVERS), and their allow lists name
 * only the allowed server (ssrf/canaries.ts). A URL counts as refused for a dialler only when the API
 * refused it with a refusal code (below) AND no canary saw a connection while it was tried; and no canary
 * may see a connection at all. Prints dialler x refused / total, and per category, with the stage each was
 * refused at.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExecStack, type Reply, startExecStack } from "../e2e/execution-support.js";
import { signupHuman } from "../harness/identity-http.js";
import { type AllowedServer, type Canaries, itemsDocument, startAllowedServer, startCanaries } from "./ssrf/canaries.js";
import { buildCorpus, CATEGORIES, type Category, type CorpusEntry } from "./ssrf/corpus.js";
import { startDnsServer, type TestDns } from "./ssrf/dns-server.js";

interface Outcome {
  refused: boolean;
  /** Where it was refused (or where it got through). */
  stage: string;
  /** The refusal code, or what came instead. */
  code: string;
}

interface Dialler {
  name: string;
  run(entry: CorpusEntry, tag: string): Promise<Outcome>;
}

/** Codes refusing a URL for its address (catalog: address_not_allowed; webhooks and sites: url_not_allowed). */
const ADDRESS_CODES = new Set(["address_not_allowed", "url_not_allowed"]);
/**
 * Codes refusing a URL for its form (not http(s), credentials in it): accepted only for the scheme and
 * userinfo categories. Execution (publish), webhooks and sites: invalid_url; the catalog's imports name
 * their field's code.
 */
const FORM_CODES = new Set(["invalid_url", "invalid_document_url", "invalid_mcp_server_url"]);
const FORM_CATEGORIES = new Set<Category>(["scheme", "userinfo / backslash"]);

/** A 400 in the spec's error shape whose code refuses this entry. */
function refusal(reply: Reply, entry: CorpusEntry, stage: string, extra: string[] = []): Outcome {
  const code: string = reply.body?.error?.code ?? `HTTP ${reply.status}`;
  const refused =
    reply.status === 400 &&
    (ADDRESS_CODES.has(code) || extra.includes(code) || (FORM_CODES.has(code) && FORM_CATEGORIES.has(entry.category)));
  return { refused, stage, code };
}

let dns: TestDns;
let canaries: Canaries;
let allowed: AllowedServer;
let s: ExecStack;
let token: string;
let key: string;
let corpus: CorpusEntry[];
/** A webhook on the allowed server, updated to each corpus URL (which must be refused). */
let standingWebhook: string;

beforeAll(async () => {
  dns = await startDnsServer();
  allowed = await startAllowedServer();
  // The canary port on every loopback address; the allowed server's port on the addresses it is not
  // allowed at (rebinding targets); and the default ports, where they can be bound.
  canaries = await startCanaries([
    { host: "::", port: 0 },
    { host: "127.0.0.2", port: allowed.port },
    { host: "::1", port: allowed.port },
    { host: "::", port: 80 },
    { host: "::", port: 443 },
  ]);
  const allowList = `127.0.0.1:${allowed.port}`;
  s = await startExecStack(
    [allowList],
    {
      OUTBOUND_DNS_SERVERS: dns.server,
      CATALOG_OUTBOUND_ALLOW: allowList,
      WEBHOOKS_OUTBOUND_ALLOW: allowList,
      CONTENT_OUTBOUND_ALLOW: allowList,
      // http:// receivers, so that the address check is what refuses a corpus URL (not its scheme).
      WEBHOOKS_ALLOW_HTTP: "true",
      WEBHOOKS_MAX_PER_USER: "1000",
      WEBHOOKS_POLL_MS: "200",
      CONTENT_CRAWL_POLL_MS: "200",
    },
    ["catalog", "execution", "billing", "identity", "webhooks", "content", "gateway"],
  );
  const human = await signupHuman(s.call, "ssrf");
  token = human.token;
  const created = await s.call("POST", "/api-keys", { token, body: { name: "ssrf" } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  key = created.body.key;
  const hook = await s.call("POST", "/webhooks", {
    token,
    body: { url: `${allowed.origin}/hook`, events: ["tool.execution.completed"] },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
  standingWebhook = hook.body.id;
  corpus = buildCorpus({ canaryPort: canaries.ports[0]!, allowedPort: allowed.port, dns, redirect: allowed.redirect });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await Promise.all([dns?.close(), canaries?.close(), allowed?.close()]);
}, 60_000);

const callTool = (toolId: string) => s.call("POST", `/tools/call/${toolId}`, { key, body: {} });

/** A call that ran and failed because the guard refused the address. */
function callRefusal(reply: Reply, stage: string): Outcome {
  if (reply.status !== 200) return { refused: false, stage, code: reply.body?.error?.code ?? `HTTP ${reply.status}` };
  const refused = reply.body.success === false && /not allowed \(/.test(reply.body.error);
  return { refused, stage, code: refused ? "address_not_allowed" : reply.body.success ? "success" : reply.body.error };
}

const execution: Dialler = {
  name: "execution",
  async run(entry, tag) {
    const published = await s.call("POST", "/services", {
      key,
      body: { api: { document: itemsDocument(), base_url: entry.url(tag) } },
    });
    if (published.status !== 201) return refusal(published, entry, "publish");
    const tool = published.body.tools[0].id as string;
    if (!entry.rebind) return callRefusal(await callTool(tool), "call");
    // The first call resolves to the allowed server; the second (a new connection) to the private address.
    const first = await callTool(tool);
    if (first.body.success !== true) return { refused: false, stage: "1st call", code: String(first.body.error) };
    const rest = callRefusal(await callTool(tool), "2nd call");
    if (!rest.refused) return rest;
    // An MCP server published while its name answered the allowed address, called after it changed.
    const mcpUrl = entry.url(`${tag}-mcp`);
    const name = new URL(mcpUrl).hostname;
    dns.set(name, entry.rebind.first);
    const mcp = await s.call("POST", "/services", { key, body: { mcp_server: { url: mcpUrl } } });
    if (mcp.status !== 201) return { refused: false, stage: "MCP publish", code: mcp.body?.error?.code };
    dns.set(name, entry.rebind.later);
    return callRefusal(await callTool(mcp.body.tools[0].id), "2nd call; MCP call");
  },
};

/** Publish by URL (OpenAPI document or MCP server); what is accepted is re-imported, and must be refused then. */
function catalogImport(
  name: string,
  body: (url: string) => Record<string, unknown>,
  extra: (e: CorpusEntry) => string[],
): Dialler {
  return {
    name,
    async run(entry, tag) {
      const url = entry.url(tag);
      const published = await s.call("POST", "/services", { key, body: body(url) });
      if (published.status !== 201) return refusal(published, entry, "publish", extra(entry));
      const again = await s.call("POST", `/services/${published.body.service.id}/reimport`, { key, body: body(url) });
      return refusal(again, entry, "reimport", extra(entry));
    },
  };
}

const catalogOpenApi = catalogImport(
  "catalog: OpenAPI URL",
  (url) => ({ api: { document_url: url } }),
  () => [],
);
// The MCP SDK follows same-origin redirects only: a redirect elsewhere ends the import before any dial.
const catalogMcp = catalogImport(
  "catalog: MCP server URL",
  (url) => ({ mcp_server: { url } }),
  (e) => (e.category === "redirect" ? ["mcp_server_unreachable"] : []),
);

interface Delivery {
  status: string;
  attempts: Array<{ status_code: number | null; error: string | null }>;
}

async function settledDelivery(webhookId: string): Promise<Delivery> {
  let found: Delivery | undefined;
  await expect
    .poll(
      async () => {
        const res = await s.call("GET", `/webhooks/${webhookId}/deliveries`, { token });
        found = res.body.deliveries?.[0];
        return found?.status;
      },
      { timeout: 30_000, interval: 250 },
    )
    .toMatch(/^(succeeded|failed)$/);
  return found!;
}

const webhooks: Dialler = {
  name: "webhooks",
  async run(entry, tag) {
    const url = entry.url(tag);
    if (!deferred(webhooks, entry)) {
      const created = await s.call("POST", "/webhooks", { token, body: { url, events: ["tool.execution.completed"] } });
      const updated = await s.call("PATCH", `/webhooks/${standingWebhook}`, { token, body: { url } });
      const [atCreate, atUpdate] = [refusal(created, entry, "create"), refusal(updated, entry, "update")];
      return { ...atCreate, refused: atCreate.refused && atUpdate.refused, stage: "create + update" };
    }
    const created = await s.call("POST", "/webhooks", { token, body: { url, events: ["tool.execution.completed"] } });
    if (created.status !== 200) return refusal(created, entry, "create");
    // Accepted at create (its name answered the allowed address, or the allowed server redirects): the
    // delivery dials it again, and must be refused there, or its redirect not followed.
    const test = await s.call("POST", `/webhooks/${created.body.id}/test`, { token });
    if (test.status !== 200) return { refused: false, stage: "test delivery", code: `HTTP ${test.status}` };
    const delivery = await settledDelivery(created.body.id);
    const refusedAll = delivery.attempts.every((a) => a.error === "address_not_allowed");
    const notFollowed = delivery.attempts.every((a) => a.status_code !== null && a.status_code >= 300 && a.status_code < 400);
    const refused = delivery.status === "failed" && (refusedAll || (entry.category === "redirect" && notFollowed));
    const code = refusedAll ? "address_not_allowed" : notFollowed ? "redirect not followed" : JSON.stringify(delivery.attempts);
    return { refused, stage: "delivery", code };
  },
};

const sites: Dialler = {
  name: "site crawl",
  async run(entry, tag) {
    const created = await s.call("POST", "/agent-sites", { token, body: { url: entry.url(tag), visibility: "private" } });
    if (created.status !== 200) return refusal(created, entry, "register");
    let record: { status: string; error: string | null } = { status: "pending", error: null };
    await expect
      .poll(
        async () => {
          record = (await s.call("GET", `/agent-sites/${created.body.id}`, { token })).body;
          return record.status;
        },
        { timeout: 30_000, interval: 250 },
      )
      .toMatch(/^(live|failed)$/);
    const error = record.error ?? "";
    // A redirect to another site is not followed (the crawl stays on the registered domain).
    const refused =
      record.status === "failed" && (/not allowed/.test(error) || (entry.category === "redirect" && /redirect/.test(error)));
    return { refused, stage: "crawl", code: error.slice(0, 80) };
  },
};

const DIALLERS = [execution, catalogOpenApi, catalogMcp, webhooks, sites];

/** Whether an attempt waits on background work (a delivery, a crawl) and so runs beside the others. */
const deferred = (d: Dialler, e: CorpusEntry) =>
  (d === webhooks || d === sites) && (e.category === "rebinding" || e.category === "redirect");

interface Row {
  dialler: string;
  entry: CorpusEntry;
  outcome: Outcome;
  /** Canary connections seen while it was tried. */
  hits: number;
}

async function attempt(d: Dialler, entry: CorpusEntry, tag: string): Promise<Row> {
  const start = Date.now();
  let outcome: Outcome;
  try {
    outcome = await d.run(entry, tag);
  } catch (err) {
    outcome = { refused: false, stage: "error", code: String((err as Error).message).slice(0, 120) };
  }
  const end = Date.now();
  const hits = canaries.hits.filter((h) => h.at >= start && h.at <= end).length;
  return { dialler: d.name, entry, outcome: { ...outcome, refused: outcome.refused && hits === 0 }, hits };
}

/** "a 3, b 1": how often each value occurs. */
function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([k, v]) => `${k} ${v}`).join(", ");
}

describe("SSRF corpus against every dialler", () => {
  it("refuses every corpus URL in every dialler, and no canary sees a connection", async () => {
    const started = Date.now();
    expect(corpus.length).toBeGreaterThanOrEqual(65);
    const rows: Row[] = [];
    const later: Array<[Dialler, CorpusEntry, string]> = [];
    let n = 0;
    for (const entry of corpus) {
      for (const d of DIALLERS) {
        const tag = (n++).toString(36);
        if (deferred(d, entry)) later.push([d, entry, tag]);
        else rows.push(await attempt(d, entry, tag));
      }
    }
    // Deliveries and crawls run side by side (a canary hit among them counts against each of them).
    rows.push(...(await Promise.all(later.map(([d, entry, tag]) => attempt(d, entry, tag)))));

    const table = DIALLERS.map((d) => {
      const mine = rows.filter((r) => r.dialler === d.name);
      const refused = mine.filter((r) => r.outcome.refused);
      return {
        dialler: d.name,
        refused: refused.length,
        total: mine.length,
        "refused at": tally(refused.map((r) => r.outcome.stage)),
        codes: tally(refused.map((r) => r.outcome.code.split(":")[0]!)),
      };
    });
    const byCategory = CATEGORIES.map((c) => {
      const row: Record<string, string | number> = { category: c, urls: corpus.filter((e) => e.category === c).length };
      for (const d of DIALLERS) {
        const mine = rows.filter((r) => r.dialler === d.name && r.entry.category === c);
        row[d.name] = `${mine.filter((r) => r.outcome.refused).length}/${mine.length}`;
      }
      return row;
    });
    const failures = rows
      .filter((r) => !r.outcome.refused)
      .map((r) => ({
        dialler: r.dialler,
        category: r.entry.category,
        label: r.entry.label,
        stage: r.outcome.stage,
        code: r.outcome.code,
        canary: r.hits,
      }));
    console.log(`SSRF corpus: ${corpus.length} URLs x ${DIALLERS.length} diallers; canaries on ${canaries.listening.join(", ")}`);
    console.table(table);
    console.table(byCategory);
    if (failures.length > 0) console.table(failures);
    console.log(
      `canary connections: ${canaries.hits.length}; allowed server requests: ${allowed.requests.length}; run time ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );

    expect(failures).toEqual([]);
    expect(canaries.hits).toEqual([]);
    for (const row of table) expect(row.refused, row.dialler).toBe(row.total);
  }, 180_000);
});
