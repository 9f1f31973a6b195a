/**
 * The copy an in-process call hands across must be what the wire would deliver (the message encoded
 * and decoded) and share no mutable object with the original. Each case compares copyMessage with
 * fromBinary(toBinary(...)) on real Toolport messages: maps of messages, oneofs (message and scalar
 * cases), Struct fields, Timestamps, bytes, optional fields and unknown fields.
 */

import type { DescMessage, Message } from "@bufbuild/protobuf";
import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  CredentialMaterialSchema,
  OpenApiSourceSchema,
  type ResolvedTool,
  ResolvedToolSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { ReliabilitySchema, ToolParameterSchema, ToolSchema } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import { describe, expect, it } from "vitest";
import { copyMessage } from "./message-copy.js";

const decoded = <T extends Message>(desc: DescMessage, message: T): T => fromBinary(desc, toBinary(desc, message)) as T;

/** Every object (and typed array) reachable from `value`. */
function objectsIn(value: unknown, found = new Set<object>()): Set<object> {
  if (value === null || typeof value !== "object" || found.has(value)) return found;
  found.add(value);
  if (ArrayBuffer.isView(value)) return found;
  for (const v of Object.values(value)) objectsIn(v, found);
  return found;
}

function sharesNothing(a: unknown, b: unknown) {
  const ours = objectsIn(a);
  for (const o of objectsIn(b)) if (ours.has(o)) return false;
  return true;
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

function resolvedTool() {
  return create(ResolvedToolSchema, {
    id: "tool-1",
    name: "List issues",
    parameters: {
      owner: create(ToolParameterSchema, { name: "owner", required: true, enumJson: json(["a", "b"]) }),
      page: create(ToolParameterSchema, { name: "page", minimum: 1, defaultJson: json(1) }),
    },
    inputSchemaJson: json({ type: "object" }),
    revision: 42n,
  });
}

describe("copyMessage", () => {
  const cases: [string, DescMessage, Message][] = [
    ["a map of messages, bytes and an int64", ResolvedToolSchema, resolvedTool()],
    [
      "a oneof with a message case",
      CredentialMaterialSchema,
      create(CredentialMaterialSchema, { kind: { case: "apiKey", value: { value: "k", parameterName: "key" } } }),
    ],
    [
      "a oneof with a scalar case and an optional field",
      OpenApiSourceSchema,
      create(OpenApiSourceSchema, { document: { case: "documentUrl", value: "https://x.test/openapi.json" }, baseUrl: "" }),
    ],
    ["an empty oneof", CredentialMaterialSchema, create(CredentialMaterialSchema)],
    [
      "Struct fields, Timestamps and unset optionals",
      ReliabilitySchema,
      create(ReliabilitySchema, {
        windowDays: 30,
        errorClasses: { auth: 1, nested: { list: [1, "two", null, true] } },
        lastSuccessAt: timestampFromMs(1_700_000_000_123),
        authFailures30d: 7n,
      }),
    ],
  ];

  for (const [what, desc, message] of cases) {
    it(`gives what the wire gives, sharing no object: ${what}`, () => {
      const copy = copyMessage(desc, message);
      expect(equals(desc, copy, decoded(desc, message))).toBe(true);
      expect(copy).toEqual(decoded(desc, message));
      expect(sharesNothing(message, copy)).toBe(true);
    });
  }

  it("keeps a mutation of either side on that side", () => {
    const original = resolvedTool();
    const copy = copyMessage(ResolvedToolSchema, original);
    (copy.parameters.owner as { name: string }).name = "changed";
    copy.inputSchemaJson[0] = 0;
    original.parameters.page = create(ToolParameterSchema, { name: "replaced" });
    original.parameters.owner?.enumJson.fill(0);
    expect(original.parameters.owner?.name).toBe("owner");
    expect(original.inputSchemaJson[0]).toBe("{".charCodeAt(0));
    expect(copy.parameters.page?.name).toBe("page");
    expect(new TextDecoder().decode(copy.parameters.owner?.enumJson)).toBe('["a","b"]');
  });

  it("copies a Buffer's bytes into a plain Uint8Array, as the wire does", () => {
    const buffer = Buffer.from('{"type":"object"}');
    const tool = create(ResolvedToolSchema, { inputSchemaJson: buffer });
    const copy = copyMessage(ResolvedToolSchema, tool);
    buffer[0] = 0;
    expect(copy.inputSchemaJson.constructor).toBe(Uint8Array);
    expect(new TextDecoder().decode(copy.inputSchemaJson)).toBe('{"type":"object"}');
    expect(decoded(ResolvedToolSchema, tool).inputSchemaJson.constructor).toBe(Uint8Array);
  });

  it("hands over 64-bit integers and unset scalars as the decoder returns them", () => {
    // A pg int8 column arrives as a string; a handler that passes it on untyped gets a bigint across the wire.
    const loose = create(ResolvedToolSchema, { id: "t" }) as unknown as Record<string, unknown>;
    loose.revision = "12345678901234567";
    loose.name = undefined;
    const message = loose as unknown as ResolvedTool;
    const copy = copyMessage(ResolvedToolSchema, message);
    expect(copy.revision).toBe(12345678901234567n);
    expect(decoded(ResolvedToolSchema, message).revision).toBe(12345678901234567n);
    // The encoder would write the text "undefined" here; the field's zero value is what the contract means.
    expect(copy.name).toBe("");
  });

  it("leaves behind a property the contract does not name, and keeps unknown fields", () => {
    const tool = create(ToolSchema, { id: "t" }) as unknown as Record<string, unknown>;
    tool.secretNotInContract = "x";
    // Field 999 is not in Tool: as a peer with a newer contract would send it.
    const withUnknown = fromBinary(ToolSchema, new Uint8Array([...toBinary(ToolSchema, tool as never), 0xb8, 0x3e, 0x05]));
    const copy = copyMessage(ToolSchema, withUnknown);
    expect(copy).not.toHaveProperty("secretNotInContract");
    expect(copyMessage(ToolSchema, tool as never)).not.toHaveProperty("secretNotInContract");
    expect(toBinary(ToolSchema, copy)).toEqual(toBinary(ToolSchema, withUnknown));
    expect(copy.$unknown?.[0]?.data).not.toBe(withUnknown.$unknown?.[0]?.data);
  });
});
