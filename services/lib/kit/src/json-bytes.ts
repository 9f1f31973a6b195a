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

/**
 * JSON text passed on without being parsed: a page of tools carries megabytes of JSON Schema (each
 * parameter's, the declared output) that the catalog and the gateway only forward. Parsing it in one
 * process and writing it again in the next was most of such a page's time in both (catalog-scale bench,
 * CPU profiles). `jsonWithRaw` writes its bytes where the value stands, without decoding them; any other
 * serializer (plain JSON.stringify) gets the parsed value, so a RawJson is never wrong anywhere, only
 * slower there. The bytes must be UTF-8 JSON: they come from Postgres (jsonb as text) or JSON.stringify.
 */
export class RawJson {
  constructor(readonly bytes: Uint8Array) {}

  get text(): string {
    return decoder.decode(this.bytes);
  }

  toJSON(): unknown {
    if (collecting === null) return JSON.parse(this.text);
    collecting.push(this);
    return `${RAW_MARK}${collecting.length - 1}${RAW_MARK}`;
  }
}

/** The RawJson values the running jsonWithRaw met, by placeholder number. */
let collecting: RawJson[] | null = null;
/** U+0000 around a placeholder: JSON.stringify escapes it, and no stored string holds one (the gateway refuses it). */
const RAW_MARK = "\u0000";
const PLACEHOLDER = /"\\u0000(\d+)\\u0000"/g;

/**
 * A value's UTF-8 JSON, each RawJson's bytes in its place. The rest is stringified and encoded alone
 * and the raw bytes copied once: a page of 100 tools took 48 ms as one string (stringify, splice,
 * encode a 3 MB string) and takes a few this way.
 */
export function jsonWithRaw(value: unknown): Buffer {
  const raws: RawJson[] = [];
  collecting = raws;
  let json: string;
  try {
    json = JSON.stringify(value);
  } finally {
    collecting = null;
  }
  if (raws.length === 0) return Buffer.from(json);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const match of json.matchAll(PLACEHOLDER)) {
    parts.push(Buffer.from(json.slice(from, match.index)), (raws[Number(match[1])] as RawJson).bytes);
    from = (match.index as number) + match[0].length;
  }
  parts.push(Buffer.from(json.slice(from)));
  return Buffer.concat(parts);
}

/** A bytes field's JSON text as a RawJson (not decoded); empty bytes read as `undefined`. */
export function rawJsonBytes(bytes: Uint8Array | undefined): RawJson | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  return new RawJson(bytes);
}

/** The UTF-8 bytes of JSON text as it is (no parse, no stringify); `null` becomes empty bytes (absent). */
export function textJsonBytes(text: string | null | undefined): Uint8Array {
  return text === null || text === undefined ? EMPTY : encoder.encode(text);
}
