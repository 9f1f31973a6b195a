/**
 * The description's examples: every operation shows an example of its JSON success answer and of its JSON
 * request body, and every example in the document (bodies, answers, parameters) is valid against the
 * schema next to it, so an example cannot teach a client something the API refuses or never sends.
 */
import { createLogger } from "@toolport/kit/logger";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { v1Routes } from "../app.js";
import { createServiceClients } from "../clients.js";
import { loadGatewayConfig } from "../config.js";
import { buildDocument } from "./document.js";
import { addDescriptionFormats } from "./formats.js";

const config = loadGatewayConfig({});
const api = v1Routes({ config, clients: createServiceClients(config), log: createLogger("test", "silent") });
const document = buildDocument(api.operations, { serverUrl: config.PUBLIC_URL });

type Json = Record<string, unknown>;
const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** Every `example` next to a `schema` in the document, with the JSON pointer of that schema. */
function examples(): Array<{ where: string; schemaPointer: string; example: unknown }> {
  const found: Array<{ where: string; schemaPointer: string; example: unknown }> = [];
  const walk = (node: unknown, pointer: string) => {
    if (!node || typeof node !== "object") return;
    const o = node as Json;
    if ("example" in o && "schema" in o) found.push({ where: pointer, schemaPointer: `${pointer}/schema`, example: o.example });
    for (const [key, value] of Object.entries(o))
      if (key !== "schema" && key !== "example") walk(value, `${pointer}/${escapePointer(key)}`);
  };
  walk(document.paths, "#/paths");
  walk((document.components as Json).responses, "#/components/responses");
  return found;
}

describe("the description's examples", () => {
  it("shows an example of every JSON success answer and every JSON request body", () => {
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const route = `${method.toUpperCase()} ${path}`;
        const body = (op.requestBody as { content?: Record<string, Json> } | undefined)?.content?.["application/json"];
        if (body && !("example" in body)) missing.push(`${route}: request body`);
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          if (!status.startsWith("2")) continue;
          const json = (response.content as Record<string, Json> | undefined)?.["application/json"];
          if (json && !("example" in json)) missing.push(`${route}: ${status} answer`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("keeps every example valid against its schema", () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
    addDescriptionFormats(ajv);
    ajv.addSchema(document as object, "openapi");
    const all = examples();
    expect(all.length).toBeGreaterThan(40);
    const invalid: string[] = [];
    for (const { where, schemaPointer, example } of all) {
      const validate = ajv.getSchema(`openapi${schemaPointer}`);
      if (!validate) invalid.push(`${where}: schema does not compile`);
      else if (!validate(example)) {
        invalid.push(
          `${where}: ${(validate.errors ?? []).map((e) => `${e.instancePath || "(example)"} ${e.message}`).join("; ")}`,
        );
      }
    }
    expect(invalid).toEqual([]);
  });

  it("catches a wrong example", () => {
    const ajv = new Ajv2020({ strict: false, allowUnionTypes: true });
    ajv.addSchema(document as object, "openapi");
    const validate = ajv.getSchema("openapi#/components/schemas/Error")!;
    expect(validate({ detail: "x", error: { code: "c", message: "x", details: {} } })).toBe(true);
    expect(validate({ detail: "x" })).toBe(false);
  });
});
