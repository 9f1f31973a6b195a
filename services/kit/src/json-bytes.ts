/**
 * JSON values that cross a service boundary travel as UTF-8 JSON text in a `bytes` field, not as
 * google.protobuf.Struct/Value: protobuf decoders stop at 100 nested messages and a Struct spends about
 * three messages per JSON level, so a tool result or a recursive schema ~33 levels deep could not be
 * decoded (and deeper ones overflowed the encoder's stack). Text has no depth limit on the wire, and
 * JSON.stringify/JSON.parse are also cheaper than building and walking Value trees.
 *
 * Empty bytes stand for "absent" (a proto3 field's default), so `null` is sent as the text `null`.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EMPTY = new Uint8Array(0);

/** UTF-8 JSON text of a value; `undefined` becomes empty bytes (absent). */
export function jsonBytes(value: unknown): Uint8Array {
  if (value === undefined) return EMPTY;
  return encoder.encode(JSON.stringify(value));
}

/** The value sent with jsonBytes; empty bytes read as `undefined`. */
export function fromJsonBytes<T = JsonValue>(bytes: Uint8Array | undefined): T | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  return JSON.parse(decoder.decode(bytes)) as T;
}

/** Like fromJsonBytes for a field that holds an object; absent (or not an object) reads as `{}`. */
export function objectFromJsonBytes(bytes: Uint8Array | undefined): JsonObject {
  const value = fromJsonBytes(bytes);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}

/** For an `optional bytes` field, where absent means "leave unchanged": `undefined` stays absent. */
export function optionalJsonBytes(value: unknown): Uint8Array | undefined {
  return value === undefined ? undefined : jsonBytes(value);
}
