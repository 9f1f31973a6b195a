import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CallResultSchema } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import { describe, expect, it } from "vitest";
import {
  fromJsonBytes,
  jsonBytes,
  jsonWithRaw,
  objectFromJsonBytes,
  optionalJsonBytes,
  RawJson,
  rawJsonBytes,
  textJsonBytes,
} from "./json-bytes.js";

function nested(depth: number): unknown {
  let value: unknown = { leaf: "\u{1F600} ü" };
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

describe("JSON values as bytes", () => {
  it("carries a value 2,000 levels deep (protobuf decoders stop at 100 messages) through a protobuf message and back unchanged", () => {
    const deep = nested(2000);
    const wire = toBinary(CallResultSchema, create(CallResultSchema, { toolId: "t", resultJson: jsonBytes(deep) }));
    const back = fromBinary(CallResultSchema, wire);
    expect(fromJsonBytes(back.resultJson)).toEqual(deep);
  });

  it("reads empty bytes as absent and the text null as null", () => {
    expect(fromJsonBytes(new Uint8Array())).toBeUndefined();
    expect(fromJsonBytes(jsonBytes(undefined))).toBeUndefined();
    expect(fromJsonBytes(jsonBytes(null))).toBeNull();
    expect(optionalJsonBytes(undefined)).toBeUndefined();
    expect(fromJsonBytes(optionalJsonBytes({}))).toEqual({});
  });

  it("reads an object field as {} when absent or not an object", () => {
    expect(objectFromJsonBytes(undefined)).toEqual({});
    expect(objectFromJsonBytes(jsonBytes([1]))).toEqual({});
    expect(objectFromJsonBytes(jsonBytes({ a: 1 }))).toEqual({ a: 1 });
  });
});

describe("JSON text passed on unparsed (RawJson)", () => {
  const schema = '{"type": "object", "properties": {"q": {"type": "string", "description": "ü \\" \\u0000-free"}}}';
  const raw = (text: string) => new RawJson(textJsonBytes(text));

  it("writes each text's bytes where its value stands, in arrays and objects, and the rest as JSON.stringify does", () => {
    const value = {
      a: raw(schema),
      list: [raw("[1, 2]"), null, "\\u0000 0 \\u0000"],
      text: "a \u00e9 string",
      nested: { b: raw("null") },
    };
    const json = jsonWithRaw(value).toString("utf8");
    expect(json).toContain(`"a":${schema}`);
    expect(JSON.parse(json)).toEqual({
      a: JSON.parse(schema),
      list: [[1, 2], null, "\\u0000 0 \\u0000"],
      text: "a \u00e9 string",
      nested: { b: null },
    });
    expect(jsonWithRaw({ plain: ["é"] }).toString("utf8")).toBe('{"plain":["é"]}');
  });

  it("is the parsed value to any other serializer, and after jsonWithRaw returns", () => {
    const value = { a: raw(schema) };
    jsonWithRaw(value);
    expect(JSON.parse(JSON.stringify(value))).toEqual({ a: JSON.parse(schema) });
  });

  it("crosses bytes without a parse: empty bytes are absent, text goes through as it is", () => {
    expect(rawJsonBytes(new Uint8Array(0))).toBeUndefined();
    expect(textJsonBytes(null).length).toBe(0);
    expect(rawJsonBytes(textJsonBytes(schema))?.text).toBe(schema);
  });
});
