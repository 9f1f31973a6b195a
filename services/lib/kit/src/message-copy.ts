/**
 * A deep copy of a protobuf-es message, walked by its schema: what an in-process call hands across
 * instead of encoding the message and decoding the bytes (local-rpc.ts).
 *
 * The copy is what the wire would deliver, for a well-typed message: a new object for every message,
 * list and map; bytes as a fresh `Uint8Array` (a `Buffer` too, which the wire also turns into a plain
 * `Uint8Array`); 64-bit integers given as a number or a decimal string (a pg `int8` column) as the
 * `bigint` the decoder returns; an implicit-presence scalar left `undefined` as its zero value (the
 * encoder would send a string field as the text "undefined"); unknown fields kept; a property the
 * schema does not name left behind. Scalars are immutable and cross as they are; a value of the wrong
 * type is not checked here (TypeScript checks it, as it does the message an encoder is given).
 *
 * Why not a library's copy: `clone` of @bufbuild/protobuf copies bytes with `slice()`, which for a
 * `Buffer` is a view of the same memory, and walks through reflection; `structuredClone` keeps
 * properties the schema does not name and copies the whole buffer under a `Uint8Array` view (8 KiB for
 * a small pooled `Buffer`). test/bench/rpc-hop.mjs `copy` measured, for a 2.4 KB ResolveToolForCall
 * response, CPU per copy against an encode and decode: this walk 0.3x, `clone` 0.7x, `structuredClone`
 * 0.85x. Only proto3 files are ours: a message of another edition (defaults on a prototype) is copied
 * with `clone`.
 */
import { clone, type DescField, type DescMessage, type DescOneof, protoInt64, ScalarType } from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";

// biome-ignore lint/suspicious/noExplicitAny: the copy walks messages of every schema as records
type Value = any;
type Copy = (value: Value) => Value;
type Step = (from: Record<string, Value>, to: Record<string, Value>) => void;

const EDITION_PROTO3 = 999;
const copies = new WeakMap<DescMessage, Copy>();

/** A copy of `message` (a message of `desc`) that shares no mutable object with it. */
export function copyMessage<T>(desc: DescMessage, message: T): T {
  return copierOf(desc)(message) as T;
}

function copierOf(desc: DescMessage): Copy {
  let copy = copies.get(desc);
  if (copy !== undefined) return copy;
  if (desc.file.edition !== EDITION_PROTO3) {
    copy = (message) => clone(desc, message);
    copies.set(desc, copy);
    return copy;
  }
  const steps: Step[] = [];
  const typeName = desc.typeName;
  copy = (from) => {
    const to: Record<string, Value> = { $typeName: typeName };
    for (let i = 0; i < steps.length; i++) (steps[i] as Step)(from, to);
    const unknown = from.$unknown as { no: number; wireType: number; data: Uint8Array }[] | undefined;
    if (unknown !== undefined && unknown.length > 0) {
      to.$unknown = unknown.map((u) => ({ no: u.no, wireType: u.wireType, data: u.data.slice() }));
    }
    return to;
  };
  // Registered before the fields are compiled: a message type may contain itself.
  copies.set(desc, copy);
  for (const member of desc.members) steps.push(member.kind === "oneof" ? oneofStep(member) : fieldStep(member));
  return copy;
}

function fieldStep(field: DescField): Step {
  const name = field.localName;
  switch (field.fieldKind) {
    case "list": {
      const item =
        field.listKind === "message"
          ? messageCopy(field)
          : field.listKind === "scalar"
            ? scalarCopy(field.scalar, field.longAsString)
            : undefined;
      return (from, to) => {
        const list = from[name] as Value[] | undefined;
        to[name] = list === undefined ? [] : item === undefined ? list.slice() : list.map(item);
      };
    }
    case "map": {
      const value =
        field.mapKind === "message"
          ? messageCopy(field)
          : field.mapKind === "scalar"
            ? scalarCopy(field.scalar, false)
            : undefined;
      return (from, to) => {
        const map = from[name] as Record<string, Value> | undefined;
        const copied: Record<string, Value> = {};
        if (map !== undefined) {
          for (const key of Object.keys(map)) copied[key] = value === undefined ? map[key] : value(map[key]);
        }
        to[name] = copied;
      };
    }
    case "message": {
      const copy = messageCopy(field);
      return (from, to) => {
        const value = from[name];
        if (value !== undefined && value !== null) to[name] = copy(value);
      };
    }
    case "enum": {
      const zero = field.presence === IMPLICIT ? (field.enum.values[0]?.number ?? 0) : undefined;
      return (from, to) => {
        const value = from[name] ?? zero;
        if (value !== undefined) to[name] = value;
      };
    }
    case "scalar": {
      const copy = scalarCopy(field.scalar, field.longAsString);
      const implicit = field.presence === IMPLICIT;
      const { scalar, longAsString } = field;
      return (from, to) => {
        const value = from[name];
        if (value !== undefined && value !== null) to[name] = copy === undefined ? value : copy(value);
        else if (implicit) to[name] = scalarZero(scalar, longAsString);
      };
    }
  }
}

function oneofStep(oneof: DescOneof): Step {
  const name = oneof.localName;
  const cases = new Map<string, Copy | undefined>();
  for (const field of oneof.fields) {
    cases.set(
      field.localName,
      field.fieldKind === "message"
        ? messageCopy(field)
        : field.fieldKind === "scalar"
          ? scalarCopy(field.scalar, field.longAsString)
          : undefined,
    );
  }
  return (from, to) => {
    const value = from[name] as { case: string | undefined; value?: Value } | undefined;
    if (value?.case === undefined || !cases.has(value.case)) {
      to[name] = { case: undefined };
      return;
    }
    const copy = cases.get(value.case);
    to[name] = { case: value.case, value: copy === undefined ? value.value : copy(value.value) };
  };
}

/** The copy of a message-typed field's value, as protobuf-es represents it in that field. */
function messageCopy(field: DescField & { message: DescMessage }): Copy {
  const message = field.message;
  if (field.fieldKind === "message" && !field.oneof && isWrapperDesc(message)) {
    // A singular wrapper field (not in a oneof) holds the wrapped scalar itself.
    const inner = message.fields[0] as DescField & { fieldKind: "scalar" };
    const copy = scalarCopy(inner.scalar, inner.longAsString);
    return copy ?? ((value) => value);
  }
  if (message.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value") {
    // A Struct (in any field but Value's) is held as a plain JSON object.
    return (value) => structuredClone(value);
  }
  // Resolved on first use: the field's type may be the message being compiled.
  let copy: Copy | undefined;
  return (value) => {
    copy ??= copierOf(message);
    return copy(value);
  };
}

/** How a scalar crosses: bytes copied, 64-bit integers as the decoder returns them; others as they are. */
function scalarCopy(scalar: ScalarType, longAsString: boolean): Copy | undefined {
  switch (scalar) {
    case ScalarType.BYTES:
      return (value: ArrayLike<number>) => new Uint8Array(value);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return longAsString ? (value) => String(value) : (value) => (typeof value === "bigint" ? value : protoInt64.parse(value));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return longAsString ? (value) => String(value) : (value) => (typeof value === "bigint" ? value : protoInt64.uParse(value));
    default:
      return undefined;
  }
}

const IMPLICIT = 2; // google.protobuf.FeatureSet.FieldPresence.IMPLICIT

function scalarZero(scalar: ScalarType, longAsString: boolean): Value {
  switch (scalar) {
    case ScalarType.STRING:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.BYTES:
      return new Uint8Array(0);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return longAsString ? "0" : protoInt64.zero;
    default:
      return 0;
  }
}
