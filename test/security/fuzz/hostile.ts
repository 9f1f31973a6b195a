/**
 * Hostile input, as arbitraries: strings no one should send (huge, NUL and control characters, astral,
 * right-to-left and combining characters, escaped lone surrogates), numbers at the edges (as JSON text,
 * where JavaScript would round them: -0, 2^53+1, -2^63, 1e308, NaN, Infinity), wrong types, and raw
 * bodies JSON.stringify cannot write: thousands of levels deep, duplicate keys, prototype-pollution keys
 * (`__proto__`, `constructor`, `prototype`), empty, not JSON, or sent under the wrong content type.
 */
import fc from "fast-check";

/** Over the gateway's 1 MiB body limit (BODY_LIMIT_BYTES) and over the publish limit's default too. */
export const OVER_BODY_LIMIT = 1_100_000;

export const hostileStrings: string[] = [
  "",
  " ",
  "x".repeat(120_000),
  "\u0000",
  "a\u0000b",
  "\u0001\u0002\u0007\b\t\n\u000b\f\r\u001b\u007f",
  "𝕏🦄👩‍👩‍👧‍👦",
  "\u202eevil\u202c",
  "שלום עולם",
  "e\u0301\u0301\u0301\u0301\u0301",
  "\u200b\ufeff",
  "\ud800",
  "\udfff\ud800",
  "../../../etc/passwd",
  "%00",
  "%2e%2e%2f",
  "' OR '1'='1' --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of a log4j lookup, sent as it is
  "${jndi:ldap://127.0.0.1/a}",
  "{{constructor.constructor('return 1')()}}",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
  "prototype",
  "null",
  "-1",
  "0",
  "NaN",
  "1e308",
  "9007199254740993",
  "-9223372036854775808",
];

export const hostileString: fc.Arbitrary<string> = fc.constantFrom(...hostileStrings);

/** JSON values of the wrong type for almost any field. */
export const wrongType: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
  [],
  [null],
  {},
  { $gt: "" },
  "",
  ["a", 1, null],
);

/** Numbers as JSON text, where the parser (not JavaScript) decides what they are. */
export const edgeNumbersText = [
  "-0",
  "1e308",
  "1e309",
  "-1e309",
  "9007199254740993",
  "-9223372036854775808",
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "1_000",
  "01",
];

/** A value for a query parameter or path segment: anything a URL can carry. */
export const hostileParam: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  fc.constantFrom(...edgeNumbersText),
  fc.string({ unit: "binary", maxLength: 40 }),
);

export interface RawBody {
  text: string;
  contentType?: string;
}

/**
 * Raw bodies for a write whose valid body (as JSON text) is `valid`: broken around it, or instead of it.
 */
export function hostileBodies(valid: unknown): fc.Arbitrary<RawBody> {
  const json = JSON.stringify(valid ?? {});
  const isObject = json.startsWith("{") && json !== "{}";
  const inner = isObject ? json.slice(1, -1) : "";
  const firstKey = isObject ? Object.keys(valid as object)[0]! : "a";
  const withKeys = (prefix: string) => (isObject ? `{${prefix},${inner}}` : `{${prefix}}`);
  const raw: RawBody[] = [
    { text: "" },
    { text: "null" },
    { text: "not json" },
    { text: "{" },
    { text: `${json}garbage` },
    { text: "<xml/>" },
    { text: "a=1&b=2", contentType: "application/x-www-form-urlencoded" },
    { text: json, contentType: "text/plain" },
    { text: json, contentType: "application/xml" },
    { text: json, contentType: "application/json; charset=utf-16" },
    { text: `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}` },
    { text: `${"[".repeat(20_000)}${"]".repeat(20_000)}` },
    // Duplicate keys: the first is valid, the second not (or the other way round).
    { text: withKeys(`${JSON.stringify(firstKey)}:{"$ne":null}`) },
    { text: isObject ? `{${inner},${JSON.stringify(firstKey)}:[1,2,3]}` : '{"a":1,"a":2}' },
    // Prototype pollution, at the root and one level down.
    { text: withKeys('"__proto__":{"is_platform_admin":true,"polluted":true}') },
    { text: withKeys('"constructor":{"prototype":{"polluted":true}}') },
    { text: withKeys('"prototype":{"polluted":true},"__proto__":null') },
    { text: isObject ? `{${inner.replace(/:\{/, ':{"__proto__":{"polluted":true},')}}` : '{"__proto__":[]}' },
    // Strings and numbers JavaScript's JSON.stringify would never write.
    { text: withKeys(`${JSON.stringify(firstKey)}:"\\ud800\\udc00\\ud800"`) },
    ...edgeNumbersText.map((n) => ({ text: withKeys(`${JSON.stringify(firstKey)}:${n}`) })),
    { text: withKeys(`"pad":"${"y".repeat(200_000)}"`) },
    { text: withKeys(`"pad":"${"z".repeat(OVER_BODY_LIMIT)}"`) },
    { text: `"${"\\u0000".repeat(1000)}"` },
    { text: "\u0000" },
    { text: "\ufeff{}" },
  ];
  return fc.constantFrom(...raw);
}

/** The valid body with one field replaced by a hostile or wrong-typed value (or a hostile extra key). */
export function mutatedBody(valid: unknown): fc.Arbitrary<unknown> {
  const value = fc.oneof(hostileString, wrongType);
  if (!valid || typeof valid !== "object" || Array.isArray(valid)) return fc.oneof(value, fc.constant([valid]));
  const keys = Object.keys(valid);
  return fc.oneof(
    keys.length
      ? fc.tuple(fc.constantFrom(...keys), value).map(([k, v]) => ({ ...(valid as object), [k]: v }))
      : value.map((v) => ({ a: v })),
    fc.tuple(hostileString, value).map(([k, v]) => ({ ...(valid as object), [k || "empty"]: v })),
  );
}
