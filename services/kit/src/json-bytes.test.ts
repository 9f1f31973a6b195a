import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CallResultSchema } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import { describe, expect, it } from "vitest";
import { fromJsonBytes, jsonBytes, objectFromJsonBytes, optionalJsonBytes } from "./json-bytes.js";

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
