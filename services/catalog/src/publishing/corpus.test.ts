/**
 * Import of the real-world API descriptions in shared/openapi-corpus (beside the repository; see its
 * README): Box's OpenAPI 3.0 document (1.7 MB, deep shared schemas) and Slack's Swagger 2.0 document
 * (1.2 MB, converted on import). Every operation becomes a tool, every schema the import produces
 * compiles with ajv under the execution service's options and is valid draft-07 JSON Schema, schemas
 * kept as `$ref`s into `$defs` still validate nested input, and a document the converter cannot handle
 * is still a 400.
 */
import { TOOL_INPUT_AJV_OPTIONS } from "@toolport/kit/tool-schema";
import { Ajv } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { BOX, corpusText, countOperations, SLACK } from "../../../../test/harness/corpus.js";
import type { JsonSchema } from "../domain/model.js";
import { type ImportedApi, importOpenApi, parseDocumentText, validateDocument } from "./openapi.js";

/** What the execution service compiles input schemas with; `logger: false` only silences ajv's
 * "unknown format ignored" lines (the catalog does not depend on ajv-formats), it changes no result. */
const ajv = new Ajv({ ...TOOL_INPUT_AJV_OPTIONS, logger: false });

/** Every JSON Schema a tool carries, named for the failure message. */
function schemasOf(tool: ImportedApi["tools"][number]): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = [[`${tool.name} inputSchema`, tool.inputSchema]];
  for (const [key, p] of Object.entries(tool.parameters))
    if (p.jsonSchema) out.push([`${tool.name} parameter ${key}`, p.jsonSchema]);
  if (tool.requestBodySchema) out.push([`${tool.name} requestBodySchema`, tool.requestBodySchema]);
  if (tool.output) out.push([`${tool.name} output`, tool.output]);
  return out;
}

function expectValidSchemas(api: ImportedApi) {
  const problems: string[] = [];
  for (const tool of api.tools) {
    for (const [what, schema] of schemasOf(tool)) {
      if (!ajv.validateSchema(schema)) problems.push(`${what}: not draft-07 JSON Schema: ${ajv.errorsText(ajv.errors)}`);
      try {
        ajv.compile(schema);
      } catch (err) {
        problems.push(`${what}: ajv cannot compile it: ${(err as Error).message}`);
      }
    }
  }
  expect(problems).toEqual([]);
}

const JSON_TYPES = ["string", "integer", "number", "boolean", "array", "object"];

describe.each([
  { name: "Box Platform API (OpenAPI 3.0.2)", file: BOX, operations: 296 },
  { name: "Slack Web API (Swagger 2.0)", file: SLACK, operations: 174 },
])("$name", ({ file, operations }) => {
  let text: string;
  let api: ImportedApi;
  beforeAll(async () => {
    text = corpusText(file);
    api = importOpenApi(await validateDocument(parseDocumentText(text)));
  }, 60_000);

  it("imports every operation as a tool", () => {
    expect(countOperations(text)).toBe(operations);
    expect(api.tools).toHaveLength(operations);
    expect(new Set(api.tools.map((t) => t.sourceKey)).size).toBe(operations);
    for (const tool of api.tools) {
      for (const p of Object.values(tool.parameters)) expect(JSON_TYPES).toContain(p.type);
    }
    expect(JSON.stringify(api.tools)).not.toContain("(recursive");
  });

  it("gives tools whose every schema ajv compiles and that are valid JSON Schema", () => {
    expectValidSchemas(api);
  }, 60_000);

  it("imports the same tools again from the same document", async () => {
    const again = importOpenApi(await validateDocument(parseDocumentText(text)));
    expect(again).toEqual(api);
  }, 60_000);
});

describe("Box: schemas kept as $refs into $defs", () => {
  let api: ImportedApi;
  beforeAll(async () => {
    api = importOpenApi(await validateDocument(parseDocumentText(corpusText(BOX))));
  }, 60_000);

  it("validates a parameter through its $defs three levels deep, and rejects a break at depth 3", () => {
    // AI Studio's `ask` agent is shared by create and update and is over the inline limit: a $ref.
    const ask = api.tools.find((t) => t.name === "post_ai_agents")?.parameters.ask;
    expect(ask).toMatchObject({ location: "body", type: "object", jsonSchema: { $ref: "#/$defs/AiStudioAgentAsk" } });
    const validate = ajv.compile(ask?.jsonSchema as JsonSchema);
    const agent = (numTokensPerChunk: unknown) => ({
      type: "ai_agent_ask",
      access_state: "enabled",
      description: "Answers questions about contracts",
      long_text: {
        model: "azure__openai__gpt_4o_mini",
        embeddings: { strategy: { id: "basic", num_tokens_per_chunk: numTokensPerChunk } },
      },
    });
    expect(validate(agent(64)), ajv.errorsText(validate.errors)).toBe(true);
    expect(validate(agent(100_000))).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe("/long_text/embeddings/strategy/num_tokens_per_chunk");
    expect(validate(agent("sixty-four"))).toBe(false);

    // The tool's whole input schema carries the same definitions at its root.
    const input = ajv.compile(api.tools.find((t) => t.name === "post_ai_agents")?.inputSchema as JsonSchema);
    expect(
      input({ type: "ai_agent", name: "Contracts", access_state: "enabled", ask: agent(64) }),
      ajv.errorsText(input.errors),
    ).toBe(true);
    expect(input({ type: "ai_agent", name: "Contracts", access_state: "enabled", ask: agent(100_000) })).toBe(false);
  });

  it("keeps big shared response schemas once, in $defs, not inlined at every use", () => {
    const search = api.tools.find((t) => t.name === "get_search");
    expect(Object.keys(search?.output?.$defs ?? {}).sort()).toEqual(["File", "File--Full", "Folder", "WebLink"]);
    // Fully inlined, this output was 313 KB.
    expect(JSON.stringify(search?.output).length).toBeLessThan(150_000);
  });
});

describe("Slack: Swagger 2.0 converted on import", () => {
  let api: ImportedApi;
  beforeAll(async () => {
    api = importOpenApi(await validateDocument(parseDocumentText(corpusText(SLACK))));
  }, 60_000);

  it("keeps each operation's parameters, body, server and security scheme", () => {
    expect(api.warnings[0]).toMatch(/^converted from Swagger 2\.0 to OpenAPI 3\.0 \(swagger2openapi\)/);
    expect(api.baseUrl).toBe("https://slack.com/api");
    expect(api.securitySchemes).toMatchObject([
      {
        name: "slackAuth",
        type: "oauth2",
        description: "",
        oauthFlows: {
          authorizationCode: {
            authorizationUrl: "https://slack.com/oauth/authorize",
            tokenUrl: "https://slack.com/api/oauth.access",
          },
        },
      },
    ]);
    expect(api.securitySchemes[0]?.oauthFlows?.authorizationCode?.scopes).toContain("chat:write:user");

    const post = api.tools.find((t) => t.name === "chat_postMessage");
    expect(post).toMatchObject({
      method: "POST",
      path: "/chat.postMessage",
      requestBodyContentType: "application/x-www-form-urlencoded",
      security: ["slackAuth"],
    });
    expect(post?.parameters.token).toMatchObject({ location: "header", type: "string", required: true });
    expect(post?.parameters.channel).toMatchObject({ location: "body", type: "string" });
    expect(post?.parameters.link_names).toMatchObject({ location: "body", type: "boolean" });
    expect(post?.requestBodySchema).toMatchObject({ type: "object", required: ["channel"] });

    const list = api.tools.find((t) => t.name === "conversations_list");
    expect(list).toMatchObject({ method: "GET", security: ["slackAuth"] });
    expect(list?.parameters.limit).toMatchObject({ location: "query", type: "integer", required: false });
    expect(Object.keys(list?.parameters ?? {}).sort()).toEqual(["cursor", "exclude_archived", "limit", "token", "types"]);
  });
});

describe("a Swagger 2.0 document the converter cannot handle", () => {
  it("is a 400 invalid_openapi_document naming why", async () => {
    const doc = {
      swagger: "2.0",
      info: { title: "t", version: "1" },
      paths: {},
      // Both names sanitise to a_b, which OpenAPI 3 components cannot tell apart.
      securityDefinitions: { "a b": { type: "basic" }, a_b: { type: "basic" } },
    };
    const refusal = await validateDocument(doc).then(
      () => null,
      (err: { reason: string; message: string; details: Record<string, unknown> }) => err,
    );
    expect(refusal?.reason).toBe("invalid_openapi_document");
    expect(refusal?.message).toBe(
      "the Swagger 2.0 document could not be converted to OpenAPI 3.0: Duplicate sanitised securityScheme name a_b",
    );
    expect(refusal?.details).toEqual({ field: "api" });
  });
});
