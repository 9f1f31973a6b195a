/**
 * Real API descriptions published through the gateway on real processes (catalog, identity, billing,
 * gateway; Postgres and NATS): Box's OpenAPI 3.0 document (1.7 MB, deep shared schemas) by URL from a
 * server started here on loopback (allowed with CATALOG_OUTBOUND_ALLOW), and Slack's Swagger 2.0
 * document (1.2 MB, over the 1 MiB limit of other routes) inline. Every operation arrives as a tool
 * whose schemas ajv compiles after crossing gRPC, search finds a Box tool by what it does, and a
 * re-import changes nothing. The documents come from shared/openapi-corpus beside the repository.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { TOOL_INPUT_AJV_OPTIONS } from "@toolport/kit/tool-schema";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Agent,
  type Body,
  type CatalogStack,
  call,
  expectError,
  registerAgent,
  startCatalogStack,
} from "../harness/catalog-stack.js";
import { BOX, corpusText, countOperations, SLACK } from "../harness/corpus.js";

/** What the execution service compiles input schemas with; `logger: false` only silences ajv's
 * "unknown format ignored" lines (the catalog does not depend on ajv-formats), it changes no result. */
const ajv = new Ajv({ ...TOOL_INPUT_AJV_OPTIONS, logger: false });

/** Every parameter's json_schema compiles; the problems, named, otherwise. */
function parameterSchemaProblems(tools: Body[]): string[] {
  const problems: string[] = [];
  for (const tool of tools) {
    for (const [key, p] of Object.entries(tool.parameters as Record<string, Body>)) {
      if (p.json_schema === undefined) continue;
      try {
        ajv.compile(p.json_schema);
      } catch (err) {
        problems.push(`${tool.name} ${key}: ${(err as Error).message}`);
      }
    }
  }
  return problems;
}

/** A tool as a re-import must leave it: everything but the time of the write. */
const unchanged = (tool: Body) => {
  const { updated_at: _, ...rest } = tool;
  return rest;
};

let s: CatalogStack;
let agent: Agent;
let documents: Server;
let documentsUrl: string;
let box: { service: Body; tools: Body[] };
let slack: { service: Body; tools: Body[]; warnings: string[] };

beforeAll(async () => {
  const boxText = corpusText(BOX);
  documents = createServer((req, res) => {
    if (req.url === `/${BOX}`) res.writeHead(200, { "content-type": "application/json" }).end(boxText);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
  documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  s = await startCatalogStack(["catalog", "identity", "billing", "gateway"], {
    CATALOG_OUTBOUND_ALLOW: new URL(documentsUrl).host,
  });
  agent = await registerAgent(s);
}, 120_000);
afterAll(async () => {
  await s?.stop();
  documents?.close();
});

describe("Box's OpenAPI 3.0 document, by URL", () => {
  beforeAll(async () => {
    const res = await call(s, "POST", "/services", { agent, body: { api: { document_url: `${documentsUrl}/${BOX}` } } });
    expect(res.status, JSON.stringify(res.body).slice(0, 2000)).toBe(201);
    box = res.body;
  }, 120_000);

  it("publishes every operation as a tool whose parameters are valid JSON Schema", async () => {
    expect(box.service).toMatchObject({ name: "Box Platform API", service_type: "api" });
    expect(box.tools).toHaveLength(countOperations(corpusText(BOX)));
    expect(parameterSchemaProblems(box.tools)).toEqual([]);

    // The machine-readable input schema of every tool, as it arrives after gRPC, compiles too.
    const problems: string[] = [];
    for (const tool of box.tools) {
      const d = await call(s, "GET", `/tools/${tool.id}/describe`, { agent });
      expect(d.status).toBe(200);
      try {
        ajv.compile(d.body.input_schema);
      } catch (err) {
        problems.push(`${tool.name}: ${(err as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it("keeps $defs across the services: a $ref'd parameter validates input nested three deep", async () => {
    const tool = box.tools.find((t) => t.name === "post_ai_agents");
    expect(tool.parameters.ask).toMatchObject({ type: "object", json_schema: { $ref: "#/$defs/AiStudioAgentAsk" } });
    const d = await call(s, "GET", `/tools/${tool.id}/describe`, { agent });
    expect(d.body.input_schema.$defs).toHaveProperty("AiStudioAgentAsk");
    const validate = ajv.compile(d.body.input_schema);
    const input = (numTokensPerChunk: unknown) => ({
      type: "ai_agent",
      name: "Contracts",
      access_state: "enabled",
      ask: {
        type: "ai_agent_ask",
        access_state: "enabled",
        description: "Answers questions about contracts",
        long_text: { embeddings: { strategy: { id: "basic", num_tokens_per_chunk: numTokensPerChunk } } },
      },
    });
    expect(validate(input(64)), ajv.errorsText(validate.errors)).toBe(true);
    expect(validate(input(100_000))).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe("/ask/long_text/embeddings/strategy/num_tokens_per_chunk");
  });

  it("lists every tool with the same parameters and output as publishing returned (a page hands its schemas on unparsed)", async () => {
    const listed: Body[] = [];
    let next = `/tools?service_id=${box.service.id}&limit=100`;
    for (let i = 0; i < 10 && next; i++) {
      const res = await call(s, "GET", next, { agent });
      expect(res.status).toBe(200);
      listed.push(...res.body);
      next = /<[^>]*\/v1(\/tools\?[^>]*)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1] ?? "";
    }
    expect(listed.map((t) => t.id).sort()).toEqual(box.tools.map((t) => t.id).sort());
    const published = new Map(box.tools.map((t) => [t.id, t]));
    for (const tool of listed) {
      const { parameters, output } = published.get(tool.id) as Body;
      expect({ name: tool.name, parameters: tool.parameters, output: tool.output }).toEqual({
        name: tool.name,
        parameters,
        output,
      });
    }
    expect(listed.some((t) => t.output !== null)).toBe(true);
    expect(listed.some((t) => Object.values(t.parameters as Record<string, Body>).some((p) => p.json_schema))).toBe(true);
  });

  it("is found by what a tool does, in words other than its name", async () => {
    // The agent's search ranks ready tools first (the built-ins and other services' credential-free tools;
    // Box's tools need a credential), so the words are asked of Box's tools: the first five of its own.
    // (Across the whole catalog the answer depended on what else this file had published by then.)
    const cases = [
      { query: "list the items in a folder", name: "get_folders_id_items" },
      { query: "share a file with a colleague", name: "put_files_id#add_shared_link" },
    ];
    for (const { query, name } of cases) {
      const res = await call(s, "GET", `/tools/search?query=${encodeURIComponent(query)}&service_id=${box.service.id}`, {
        agent,
      });
      expect(res.status).toBe(200);
      const top = res.body.slice(0, 5);
      const expected = box.tools.find((t) => t.name === name);
      expect(
        top.map((t: Body) => t.id),
        `${query}: ${top.map((t: Body) => t.name)}`,
      ).toContain(expected.id);
    }
  });

  it("re-imports from the same URL without changing anything", async () => {
    const again = await call(s, "POST", `/services/${box.service.id}/reimport`, { agent, body: {} });
    expect(again.status, JSON.stringify(again.body).slice(0, 2000)).toBe(200);
    expect(again.body.deactivated_tool_ids).toEqual([]);
    expect(again.body.tools.map(unchanged)).toEqual(box.tools.map(unchanged));
  }, 120_000);
});

describe("Slack's Swagger 2.0 document, inline", () => {
  beforeAll(async () => {
    const res = await call(s, "POST", "/services", { agent, body: { api: { document_text: corpusText(SLACK) } } });
    expect(res.status, JSON.stringify(res.body).slice(0, 2000)).toBe(201);
    slack = res.body;
  }, 120_000);

  it("is converted and publishes every operation with its parameters and security scheme", async () => {
    expect(slack.tools).toHaveLength(countOperations(corpusText(SLACK)));
    expect(slack.warnings[0]).toMatch(/^converted from Swagger 2\.0 to OpenAPI 3\.0/);
    expect(parameterSchemaProblems(slack.tools)).toEqual([]);
    const post = slack.tools.find((t) => t.name === "chat_postMessage");
    expect(post).toMatchObject({ method: "POST", path: "/chat.postMessage", readiness: "needs_credential" });
    expect(post.parameters.token).toMatchObject({ location: "header", type: "string", required: true });
    expect(post.parameters.channel).toMatchObject({ location: "body", type: "string" });
    const service = await call(s, "GET", `/services/${slack.service.id}`, { agent });
    expect(service.body.publishing).toMatchObject({ base_url: "https://slack.com/api" });
    expect(service.body.publishing.security_schemes).toMatchObject([{ name: "slackAuth", type: "oauth2" }]);
  });

  it("re-imports the same text without changing anything", async () => {
    const again = await call(s, "POST", `/services/${slack.service.id}/reimport`, {
      agent,
      body: { api: { document_text: corpusText(SLACK) } },
    });
    expect(again.status, JSON.stringify(again.body).slice(0, 2000)).toBe(200);
    expect(again.body.deactivated_tool_ids).toEqual([]);
    expect(again.body.tools.map(unchanged)).toEqual(slack.tools.map(unchanged));
  }, 120_000);

  it("refuses a Swagger 2.0 document the converter cannot handle with a 400 naming why", async () => {
    const doc = {
      swagger: "2.0",
      info: { title: "t", version: "1" },
      paths: {},
      securityDefinitions: { "a b": { type: "basic" }, a_b: { type: "basic" } },
    };
    const res = await call(s, "POST", "/services", { agent, body: { api: { document: doc } } });
    expectError(res, 400, "invalid_openapi_document");
    expect(res.body.error.message).toContain(
      "could not be converted to OpenAPI 3.0: Duplicate sanitised securityScheme name a_b",
    );
  });
});
