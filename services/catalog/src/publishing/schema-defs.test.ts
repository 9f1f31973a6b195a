/**
 * The `$defs` rule on hand-written documents: a self-recursive schema, a two-schema cycle and a shared
 * non-recursive schema through the OpenAPI importer; the size guard (a big shared schema, and a DAG
 * whose full inlining would double at every level); OpenAPI 3.0 keywords turned into JSON Schema; the
 * helpers that read schemas through `$ref`s; and MCP tools whose schemas refer into their own
 * definitions. Every schema is checked by ajv with the execution service's options.
 */
import type { Tool as McpTool } from "@modelcontextprotocol/client";
import { TOOL_INPUT_AJV_OPTIONS } from "@toolport/kit/tool-schema";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import type { JsonSchema, ToolParameterInfo } from "../domain/model.js";
import { exampleFor, exampleObject, schemaType } from "./json-schema.js";
import { toolFromMcp } from "./mcp.js";
import { importOpenApi, validateDocument } from "./openapi.js";
import { INLINE_LIMIT_BYTES } from "./schema-defs.js";

/** What the execution service compiles input schemas with; `logger: false` only silences ajv's
 * "unknown format ignored" lines (the catalog does not depend on ajv-formats), it changes no result. */
const ajv = new Ajv({ ...TOOL_INPUT_AJV_OPTIONS, logger: false });
const validator = (schema: JsonSchema | null | undefined) => {
  expect(schema).toBeTruthy();
  return ajv.compile(schema as JsonSchema);
};

const ok = { "200": { description: "ok" } };
const json = (schema: unknown) => ({ content: { "application/json": { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

async function load(paths: Record<string, unknown>, components: Record<string, unknown>, openapi = "3.0.3") {
  const doc = {
    openapi,
    info: { title: "Fixture", version: "1" },
    servers: [{ url: "https://api.example.com" }],
    paths,
    components,
  };
  const api = importOpenApi(await validateDocument(structuredClone(doc)));
  return (name: string) => {
    const tool = api.tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool;
  };
}

const treeSchemas = {
  TreeNode: {
    type: "object",
    required: ["name"],
    properties: { name: { type: "string" }, children: { type: "array", items: ref("TreeNode") } },
  },
  Planting: { type: "object", required: ["root"], properties: { root: ref("TreeNode"), note: { type: "string" } } },
};

describe("a self-recursive schema", () => {
  const paths = {
    "/trees": {
      post: {
        operationId: "plantTree",
        parameters: [{ $ref: "#/components/parameters/Like" }],
        requestBody: { required: true, ...json(ref("Planting")) },
        responses: { "201": { description: "the planted tree", ...json(ref("TreeNode")) } },
      },
    },
  };
  const components = {
    schemas: treeSchemas,
    parameters: { Like: { name: "like", in: "query", style: "deepObject", schema: ref("TreeNode") } },
  };
  const nested = { name: "a", children: [{ name: "b", children: [{ name: "c", children: [] }] }] };
  // Depth 3 breaks the schema: a node without its name.
  const broken = { name: "a", children: [{ name: "b", children: [{ children: [] }] }] };

  it("stays a $ref into $defs in the input schema, each parameter's schema, the body and the output", async () => {
    const tool = (await load(paths, components))("plantTree");
    expect(JSON.stringify(tool)).not.toContain("(recursive");
    const node = { $ref: "#/$defs/TreeNode" };
    const definition = {
      type: "object",
      required: ["name"],
      properties: { name: { type: "string" }, children: { type: "array", items: node } },
    };
    expect(tool.inputSchema).toMatchObject({ properties: { root: node }, required: ["root"], $defs: { TreeNode: definition } });
    expect(tool.parameters.root).toMatchObject({ location: "body", type: "object", required: true });
    expect(tool.parameters.root?.jsonSchema).toEqual({ ...node, $defs: { TreeNode: definition } });
    // A parameter whose schema is recursive at its root: a $ref, read through for its type.
    expect(tool.parameters.like).toMatchObject({
      location: "query",
      type: "object",
      jsonSchema: { ...node, $defs: { TreeNode: definition } },
    });
    expect(tool.requestBodySchema).toMatchObject({ properties: { root: node }, $defs: { TreeNode: definition } });
    expect(tool.output).toEqual({ ...node, description: "the planted tree", $defs: { TreeNode: definition } });
  });

  it("validates a nested input three levels deep and rejects one that breaks at depth 3", async () => {
    const tool = (await load(paths, components))("plantTree");
    const input = validator(tool.inputSchema);
    expect(input({ root: nested })).toBe(true);
    expect(input({ root: broken })).toBe(false);
    expect(input.errors?.[0]).toMatchObject({ instancePath: "/root/children/0/children/0", params: { missingProperty: "name" } });
    for (const schema of [tool.parameters.root?.jsonSchema, tool.parameters.like?.jsonSchema, tool.output]) {
      const validate = validator(schema);
      expect(validate(nested)).toBe(true);
      expect(validate(broken)).toBe(false);
    }
  });

  it("gives example calls that terminate and satisfy the schema", async () => {
    const tool = (await load(paths, components))("plantTree");
    const example = exampleObject(tool.inputSchema);
    expect(example).toEqual({ root: { name: "example" } });
    expect(validator(tool.inputSchema)(example)).toBe(true);
    // All properties of a small object: the recursion ends at the depth limit, with a null.
    const deep = exampleFor({ $ref: "#/$defs/T", $defs: { T: { type: "object", properties: { next: { $ref: "#/$defs/T" } } } } });
    expect(JSON.stringify(deep)).toMatch(/^(\{"next":)+null\}+$/);
  });
});

describe("a two-schema cycle (a folder whose items hold folders)", () => {
  const components = {
    schemas: {
      Folder: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, items: { type: "array", items: ref("Item") } },
      },
      Item: {
        type: "object",
        required: ["kind"],
        properties: {
          kind: { type: "string", enum: ["file", "folder"] },
          folder: ref("Folder"),
          size: { type: "integer", nullable: true },
        },
      },
    },
    responses: { Created: { description: "created", ...json(ref("Folder")) } },
  };
  const paths = {
    "/folders": {
      post: {
        operationId: "createFolder",
        requestBody: json(ref("Folder")),
        responses: { "201": { $ref: "#/components/responses/Created" } },
      },
    },
  };

  it("keeps both schemas in $defs and flattens the recursive body into parameters", async () => {
    const tool = (await load(paths, components))("createFolder");
    expect(tool.requestBodySchema).toMatchObject({ $ref: "#/$defs/Folder", $defs: { Folder: {}, Item: {} } });
    expect(Object.keys(tool.parameters).sort()).toEqual(["items", "name"]);
    expect(tool.parameters.items).toMatchObject({
      location: "body",
      type: "array",
      jsonSchema: { type: "array", items: { $ref: "#/$defs/Item" } },
    });
    expect(Object.keys(tool.parameters.items?.jsonSchema?.$defs as object).sort()).toEqual(["Folder", "Item"]);
    expect(tool.parameters.name?.jsonSchema).toBeUndefined();
    expect(tool.output).toMatchObject({ $ref: "#/$defs/Folder", description: "created" });
    // OpenAPI 3.0 `nullable` beside a type is JSON Schema's type list.
    expect(tool.inputSchema.$defs).toMatchObject({ Item: { properties: { size: { type: ["integer", "null"] } } } });
  });

  it("validates folders nested three deep and rejects a bad item at depth 3", async () => {
    const tool = (await load(paths, components))("createFolder");
    const folder = (name: string, items: unknown[] = []) => ({ name, items });
    const good = folder("a", [{ kind: "folder", size: null, folder: folder("b", [{ kind: "folder", folder: folder("c") }]) }]);
    const bad = folder("a", [{ kind: "folder", folder: folder("b", [{ kind: "link", folder: folder("c") }]) }]);
    for (const schema of [tool.inputSchema, tool.requestBodySchema, tool.output]) {
      const validate = validator(schema);
      expect(validate(good)).toBe(true);
      expect(validate(bad)).toBe(false);
    }
    const items = validator(tool.parameters.items?.jsonSchema);
    expect(items(good.items)).toBe(true);
    expect(items(bad.items)).toBe(false);
    // The body is optional, so nothing is required: the example holds its few properties, read through $defs.
    const example = exampleObject(tool.inputSchema);
    expect(example).toEqual({ name: "example", items: [{ kind: "file" }] });
    expect(validator(tool.inputSchema)(example)).toBe(true);
  });
});

describe("a shared schema that is not recursive", () => {
  const components = {
    schemas: {
      Address: {
        type: "object",
        required: ["city"],
        properties: { city: { type: "string" }, zip: { type: "string", example: "12345" } },
      },
      Order: {
        type: "object",
        properties: {
          billing: ref("Address"),
          shipping: ref("Address"),
          count: { type: "integer", minimum: 0, exclusiveMinimum: true },
          note: { allOf: [{ type: "string" }], nullable: true },
        },
      },
    },
    requestBodies: { Order: json(ref("Order")) },
  };
  const paths = {
    "/orders": { post: { operationId: "placeOrder", requestBody: { $ref: "#/components/requestBodies/Order" }, responses: ok } },
  };

  it("is written in place at both uses, with OpenAPI 3.0 keywords in their JSON Schema form", async () => {
    const tool = (await load(paths, components))("placeOrder");
    expect(JSON.stringify(tool)).not.toContain("$ref");
    expect(JSON.stringify(tool)).not.toContain("$defs");
    const address = {
      type: "object",
      required: ["city"],
      properties: { city: { type: "string" }, zip: { type: "string", examples: ["12345"] } },
    };
    expect(tool.parameters.billing?.jsonSchema).toEqual(address);
    expect(tool.parameters.shipping?.jsonSchema).toEqual(address);
    // Draft-04 style exclusiveMinimum is the number; `nullable` without a type means nothing (3.0.3).
    expect(tool.parameters.count?.jsonSchema).toEqual({ type: "integer", exclusiveMinimum: 0 });
    expect(tool.inputSchema.properties).toMatchObject({ note: { allOf: [{ type: "string" }] } });
    expect(JSON.stringify(tool)).not.toContain("nullable");
    const validate = validator(tool.inputSchema);
    expect(validate({ billing: { city: "Oslo" }, count: 1 })).toBe(true);
    expect(validate({ count: 0 })).toBe(false);
  });
});

describe("the size guard", () => {
  // A schema well over the inline limit: 200 properties with long descriptions.
  const big = {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [
        `field_${i}`,
        { type: "string", description: `Field ${i}: ${"words ".repeat(20)}` },
      ]),
    ),
  };

  it("keeps a big nested schema as a $ref into $defs, and writes it in place at the root", async () => {
    expect(JSON.stringify(big).length).toBeGreaterThan(INLINE_LIMIT_BYTES);
    const paths = {
      "/pairs": {
        post: {
          operationId: "comparePair",
          requestBody: json(ref("Pair")),
          responses: { "200": { description: "ok", ...json(ref("Big")) } },
        },
      },
    };
    const components = { schemas: { Big: big, Pair: { type: "object", properties: { left: ref("Big"), right: ref("Big") } } } };
    const tool = (await load(paths, components))("comparePair");
    expect(tool.parameters.left).toMatchObject({ type: "object", jsonSchema: { $ref: "#/$defs/Big", $defs: { Big: big } } });
    expect(tool.inputSchema).toMatchObject({ properties: { left: { $ref: "#/$defs/Big" }, right: { $ref: "#/$defs/Big" } } });
    expect(Object.keys(tool.inputSchema.$defs as object)).toEqual(["Big"]);
    expect(tool.output).toEqual({ ...big, description: "ok" });
  });

  it("bounds an output and a parameter schema that reach too much: own fields kept, reached schemas named", async () => {
    // Twelve distinct big schemas (each kept in $defs): 12 x 20 KB reached, over both bounds (128 and 64 KB).
    const schemas: Record<string, unknown> = {};
    for (let i = 0; i < 12; i++) schemas[`Part${i}`] = big;
    schemas.Hub = {
      type: "object",
      required: ["id"],
      properties: {
        id: { type: "string" },
        ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`part${i}`, ref(`Part${i}`)])),
      },
    };
    const body = { type: "object", properties: { hub: ref("Hub"), note: { type: "string" } } };
    const paths = {
      "/hubs": {
        post: {
          operationId: "makeHub",
          requestBody: json(body),
          responses: { "200": { description: "ok", ...json(ref("Hub")) } },
        },
      },
    };
    const doc = { openapi: "3.0.3", info: { title: "Hubs", version: "1" }, servers: [{ url: "https://api.example.com" }], paths };
    const api = importOpenApi(await validateDocument(structuredClone({ ...doc, components: { schemas } })));
    const tool = api.tools[0] as (typeof api.tools)[number];
    const output = tool.output as JsonSchema;
    expect(JSON.stringify(output).length).toBeLessThan(128 * 1024);
    expect(output).not.toHaveProperty("$defs");
    expect((output.properties as Record<string, JsonSchema>).id).toEqual({ type: "string" });
    expect((output.properties as Record<string, JsonSchema>).part3).toMatchObject({ title: "Part3" });
    expect(api.warnings.join(" ")).toMatch(/response schemas of 1 operations \(POST \/hubs\) reach more than 128 KB/);
    // The parameter: its type from the whole schema, its JSON Schema bounded.
    const hub = tool.parameters.hub as ToolParameterInfo;
    expect(hub.type).toBe("object");
    expect(JSON.stringify(hub.jsonSchema).length).toBeLessThan(64 * 1024);
    expect(hub.jsonSchema).not.toHaveProperty("$defs");
    // What the tool accepts is still whole: the input validates against every schema it reaches.
    expect(Object.keys(tool.inputSchema.$defs as object)).toEqual(expect.arrayContaining(["Part0", "Part11"]));
    const validate = validator(tool.inputSchema);
    expect(validate({ hub: { id: "h", part3: { field_1: "x" } } })).toBe(true);
    expect(validate({ hub: { id: "h", part3: { field_1: 2 } } })).toBe(false);
  });

  it("keeps a DAG whose full inlining doubles at every level to a size linear in its depth", async () => {
    // Level i refers to level i+1 twice: written in place, 24 levels would hold 2^24 copies of the leaf.
    const dag = async (levels: number) => {
      const schemas: Record<string, unknown> = { [`L${levels}`]: { type: "string", description: "leaf ".repeat(20) } };
      for (let i = levels - 1; i >= 0; i--)
        schemas[`L${i}`] = { type: "object", properties: { a: ref(`L${i + 1}`), b: ref(`L${i + 1}`) } };
      const paths = { "/dag": { post: { operationId: "sendDag", requestBody: json(ref("L0")), responses: ok } } };
      const started = performance.now();
      const tool = (await load(paths, { schemas }))("sendDag");
      expect(performance.now() - started).toBeLessThan(3000);
      // ajv's default inlineRefs would paste a $defs entry's code at each of its hundreds of uses.
      const validate = new Ajv({ strict: false, logger: false, inlineRefs: false }).compile(tool.inputSchema);
      expect(validate({ a: { a: { b: {} } }, b: {} })).toBe(true);
      expect(validate({ a: { a: { b: 1 } } })).toBe(false);
      return JSON.stringify(tool).length;
    };
    const at24 = await dag(24);
    const at48 = await dag(48);
    expect(at24).toBeLessThan(500_000);
    expect(at48 / at24).toBeLessThan(2.5);
  });
});

describe("schema helpers read through $ref and allOf", () => {
  const root = {
    $defs: {
      Named: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
      Sized: { type: "object", required: ["size"], properties: { size: { type: "integer", minimum: 3 } } },
    },
  };
  it("finds the type, and example objects with every required property of the allOf members", () => {
    expect(schemaType({ $ref: "#/$defs/Named" }, root)).toBe("object");
    expect(schemaType({ allOf: [{ $ref: "#/$defs/Named" }, { $ref: "#/$defs/Sized" }] }, root)).toBe("object");
    expect(schemaType({ $ref: "#/$defs/Nowhere" }, root)).toBe("string");
    const combined = { ...root, allOf: [{ $ref: "#/$defs/Named" }, { $ref: "#/$defs/Sized" }] };
    expect(exampleObject(combined)).toEqual({ name: "example", size: 3 });
    expect(exampleFor({ $ref: "#/$defs/Sized" }, 0, root)).toEqual({ size: 3 });
  });
});

describe("MCP tools whose schemas refer into their own definitions", () => {
  const mcpTool = (inputSchema: Record<string, unknown>, outputSchema?: Record<string, unknown>) =>
    ({ name: "plant", description: "Plant a tree", inputSchema, ...(outputSchema ? { outputSchema } : {}) }) as McpTool;

  it("keeps recursion as $defs, resolves #/definitions and #/properties references, per parameter", () => {
    const warnings: string[] = [];
    const node = {
      type: "object",
      required: ["label"],
      properties: { label: { type: "string" }, kids: { type: "array", items: { $ref: "#/definitions/Node" } } },
    };
    const tool = toolFromMcp(
      mcpTool(
        {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          required: ["tree"],
          properties: { tree: { $ref: "#/definitions/Node" }, backup: { $ref: "#/properties/tree" } },
          definitions: { Node: node },
        },
        { type: "object", properties: { planted: { $ref: "#/definitions/Node" } }, definitions: { Node: node } },
      ),
      "1",
      warnings,
    );
    expect(warnings).toEqual([]);
    expect(JSON.stringify(tool)).not.toContain("(recursive");
    expect(tool.parameters.tree).toMatchObject({ type: "object", required: true, jsonSchema: { $ref: "#/$defs/Node" } });
    expect(tool.parameters.backup).toMatchObject({ type: "object", required: false, jsonSchema: { $ref: "#/$defs/Node" } });
    const nested = { label: "a", kids: [{ label: "b", kids: [{ label: "c" }] }] };
    const broken = { label: "a", kids: [{ label: "b", kids: [{ kids: [] }] }] };
    for (const schema of [tool.parameters.tree?.jsonSchema, tool.parameters.backup?.jsonSchema]) {
      const validate = validator(schema);
      expect(validate(nested)).toBe(true);
      expect(validate(broken)).toBe(false);
    }
    const input = validator(tool.inputSchema);
    expect(input({ tree: nested, backup: nested })).toBe(true);
    expect(input({ tree: broken })).toBe(false);
    expect(validator(tool.output)({ planted: broken })).toBe(false);
  });

  it("reads the parameters of a root that is a $ref, and names a reference that leads nowhere", () => {
    const warnings: string[] = [];
    const tool = toolFromMcp(
      mcpTool({
        $ref: "#/definitions/Input",
        definitions: {
          Input: {
            type: "object",
            required: ["q"],
            properties: { q: { type: "string" }, extra: { $ref: "https://example.com/x.json" } },
          },
        },
      }),
      "1",
      warnings,
    );
    expect(tool.parameters.q).toMatchObject({ type: "string", required: true });
    expect(tool.inputSchema).toMatchObject({ type: "object", required: ["q"] });
    expect(warnings.join("\n")).toContain("https://example.com/x.json");
    expect(validator(tool.inputSchema)({ q: "x", extra: { anything: 1 } })).toBe(true);
  });
});
