import { describe, expect, it } from "vitest";
import { MAX_CSV } from "./data-tools.js";
import { BuiltinInputError, findBuiltin } from "./index.js";

const ctx = { now: () => new Date("2024-05-01T12:00:00Z") };
// biome-ignore lint/suspicious/noExplicitAny: results are checked field by field
const call = async (handler: string, input: Record<string, unknown>): Promise<any> => findBuiltin(handler)!.run(input, ctx);

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work().catch(() => undefined);
  return performance.now() - start;
}

describe("data.json_query", () => {
  const document = {
    user: { name: "Ada", "e.mail": "ada@example.com" },
    items: [
      { name: "pen", tags: ["a", "b"] },
      { name: "ink", tags: [] },
      { name: "pad", tags: ["c"] },
    ],
    payload: '{"x": {"y": 5}}',
    odd: { 'a]"b': 1 },
    empty: [],
  };

  it.each([
    ["user.name", { matched: true, result: "Ada" }],
    ['user["e.mail"]', { matched: true, result: "ada@example.com" }],
    ['odd["a]\\"b"]', { matched: true, result: 1 }],
    ["items[0].name", { matched: true, result: "pen" }],
    ["items.1.name", { matched: true, result: "ink" }],
    ["items[-1].name", { matched: true, result: "pad" }],
    ["items[].name", { matched: true, result: ["pen", "ink", "pad"] }],
    ["items[].tags[]", { matched: true, result: ["a", "b", "c"] }],
    ["payload.x.y", { matched: true, result: 5 }],
    ["", { matched: true, result: document }],
    ["user.age", { matched: false, result: null }],
    ["items[7]", { matched: false, result: null }],
    ["empty[].id", { matched: false, result: [] }],
    ["user.name.first", { matched: false, result: null }],
  ])("%s", async (path, expected) => {
    expect(await call("data.json_query", { document, path })).toEqual(expected);
  });

  it("matches a stored null as a match", async () => {
    expect(await call("data.json_query", { document: { a: null }, path: "a" })).toEqual({ matched: true, result: null });
  });

  it.each([
    ["a..b", /empty key at character 2/],
    ["a[x]", /\[x\] is not \[n\], \[\] or \["key"\]/],
    ["a[0", /unclosed \[ at character 2/],
    ["a[0]b", /expected \. or \[ after \]/],
    [".a", /empty key/],
  ])("refuses the malformed path %s, saying where", async (path, message) => {
    await expect(call("data.json_query", { document, path })).rejects.toThrow(message);
  });

  it("fans out over 100,000 items quickly", async () => {
    const big = { rows: Array.from({ length: 100_000 }, (_, i) => ({ id: i })) };
    const start = performance.now();
    const result = await call("data.json_query", { document: big, path: "rows[].id" });
    expect(result.result).toHaveLength(100_000);
    expect(performance.now() - start).toBeLessThan(500);
  });
});

describe("data.json_validate", () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 }, email: { type: "string", format: "email" } },
    required: ["name", "age"],
  };

  it("accepts a valid document and lists every violation of an invalid one", async () => {
    expect(await call("data.json_validate", { document: { name: "Ada", age: 36 }, schema })).toEqual({
      valid: true,
      draft: "draft-07",
      errors: [],
    });
    expect(await call("data.json_validate", { document: { age: -1, email: "nope" }, schema })).toEqual({
      valid: false,
      draft: "draft-07",
      errors: [
        { path: "/", keyword: "required", message: "must have required property 'name'", params: { missingProperty: "name" } },
        { path: "/age", keyword: "minimum", message: "must be >= 0", params: { comparison: ">=", limit: 0 } },
        { path: "/email", keyword: "format", message: 'must match format "email"', params: { format: "email" } },
      ],
    });
  });

  it("follows $schema to 2020-12", async () => {
    const tuple = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      prefixItems: [{ type: "number" }, { type: "string" }],
      items: false,
    };
    expect(await call("data.json_validate", { document: [1, "a"], schema: tuple })).toMatchObject({
      valid: true,
      draft: "2020-12",
    });
    expect(await call("data.json_validate", { document: [1, "a", true], schema: tuple })).toMatchObject({ valid: false });
  });

  it("accepts boolean schemas", async () => {
    expect(await call("data.json_validate", { document: 1, schema: false })).toMatchObject({
      valid: false,
      errors: [{ keyword: "false schema" }],
    });
  });

  it("runs a catastrophic-backtracking pattern in linear time", async () => {
    const hostile = { type: "string", pattern: "^(a|a)*$" };
    const start = performance.now();
    expect(await call("data.json_validate", { document: `${"a".repeat(50_000)}!`, schema: hostile })).toMatchObject({
      valid: false,
    });
    expect(await call("data.json_validate", { document: "aaaa", schema: hostile })).toMatchObject({ valid: true });
    expect(performance.now() - start).toBeLessThan(1_000);
  });

  it("refuses patterns a linear-time engine cannot run", async () => {
    await expect(call("data.json_validate", { document: "a", schema: { type: "string", pattern: "(?=a)a" } })).rejects.toThrow(
      /pattern "\(\?=a\)a" is not supported/,
    );
    await expect(call("data.json_validate", { document: "aa", schema: { type: "string", pattern: "(a)\\1" } })).rejects.toThrow(
      BuiltinInputError,
    );
  });

  it("refuses an invalid schema, an unsupported draft, and a remote $ref", async () => {
    await expect(call("data.json_validate", { document: 1, schema: { type: "strnig" } })).rejects.toThrow(
      /schema: invalid draft-07 JSON Schema/,
    );
    await expect(
      call("data.json_validate", { document: 1, schema: { $schema: "http://json-schema.org/draft-04/schema#" } }),
    ).rejects.toThrow(/use draft-07, 2019-09 or 2020-12/);
    await expect(
      call("data.json_validate", { document: 1, schema: { $ref: "https://example.com/schema.json" } }),
    ).rejects.toThrow(/can't resolve reference/);
  });

  it("bounds the work: uniqueItems on long arrays, deep documents, huge schemas", async () => {
    const long = Array.from({ length: 5_000 }, (_, i) => ({ i }));
    await expect(call("data.json_validate", { document: long, schema: { uniqueItems: true } })).rejects.toThrow(
      /uniqueItems can be checked on arrays of up to 1000 items/,
    );
    expect(await call("data.json_validate", { document: long, schema: { type: "array" } })).toMatchObject({ valid: true });
    const shortList = Array.from({ length: 1_000 }, (_, i) => ({ i }));
    expect(await timed(() => call("data.json_validate", { document: shortList, schema: { uniqueItems: true } }))).toBeLessThan(
      500,
    );
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    await expect(call("data.json_validate", { document: deep, schema: {} })).rejects.toThrow(
      /document: nests deeper than 128 levels/,
    );
    const wide = { anyOf: Array.from({ length: 2_500 }, () => ({ type: "string" })) };
    await expect(call("data.json_validate", { document: 1, schema: wide })).rejects.toThrow(/schema: more than 2000 nodes/);
  });

  it("compiles the largest schema it accepts in bounded time", async () => {
    const properties = Object.fromEntries(Array.from({ length: 990 }, (_, i) => [`p${i}`, { type: "integer" }]));
    expect(
      await timed(() => call("data.json_validate", { document: { p1: 1 }, schema: { type: "object", properties } })),
    ).toBeLessThan(1_000);
  });

  it("keeps no schema between calls (the same $id twice is fine)", async () => {
    const withId = { $id: "https://example.com/person", type: "object" };
    expect(await call("data.json_validate", { document: {}, schema: withId })).toMatchObject({ valid: true });
    expect(await call("data.json_validate", { document: 1, schema: withId })).toMatchObject({ valid: false });
  });
});

describe("data.csv_to_json", () => {
  it("reads a header row and quoted fields", async () => {
    expect(await call("data.csv_to_json", { csv: 'name,city,visits\nAda,"London, UK",3\nLinus,Helsinki,5\n' })).toEqual({
      columns: ["name", "city", "visits"],
      rows: [
        { name: "Ada", city: "London, UK", visits: "3" },
        { name: "Linus", city: "Helsinki", visits: "5" },
      ],
      row_count: 2,
    });
  });

  it("handles doubled quotes, line breaks inside quotes, CRLF, a BOM and blank lines", async () => {
    const csv = '\ufeffid,note\r\n1,"She said ""hi""\r\nthen left"\r\n\r\n2,""\r\n';
    expect(await call("data.csv_to_json", { csv })).toEqual({
      columns: ["id", "note"],
      rows: [
        { id: "1", note: 'She said "hi"\r\nthen left' },
        { id: "2", note: "" },
      ],
      row_count: 2,
    });
  });

  it("reads rows as arrays without a header, with other delimiters", async () => {
    expect(await call("data.csv_to_json", { csv: "a;b\n1;2", delimiter: ";", header: false })).toEqual({
      rows: [
        ["a", "b"],
        ["1", "2"],
      ],
      row_count: 2,
    });
    expect(await call("data.csv_to_json", { csv: "a\tb\n1\t2", delimiter: "\t" })).toEqual({
      columns: ["a", "b"],
      rows: [{ a: "1", b: "2" }],
      row_count: 1,
    });
  });

  it("infers numbers, booleans and nulls when asked, and only then", async () => {
    const csv = "n,f,b,e,s,z\n42,-1.5e3,true,,007,1e999\n";
    expect((await call("data.csv_to_json", { csv, infer_types: true })).rows).toEqual([
      { n: 42, f: -1500, b: true, e: null, s: "007", z: "1e999" },
    ]);
    expect((await call("data.csv_to_json", { csv })).rows).toEqual([
      { n: "42", f: "-1.5e3", b: "true", e: "", s: "007", z: "1e999" },
    ]);
  });

  it("names blank and repeated columns so none overwrites another", async () => {
    expect((await call("data.csv_to_json", { csv: "a,,a\n1,2,3" })).rows).toEqual([{ a: "1", column_2: "2", a_2: "3" }]);
  });

  it.each([
    ['a,b\n1,"2', /csv: a quoted field is never closed at line 2/],
    ['a,b\n1,"2"x', /csv: text after a closing quote .* at line 2, column 6/],
    ['a,b\n1,2"3', /csv: a quote inside an unquoted field .* at line 2, column 4/],
    ["a,b\n1,2,3", /csv: data row 1 has 3 fields but the header has 2 columns/],
  ])("refuses malformed CSV, saying where: %j", async (csv, message) => {
    await expect(call("data.csv_to_json", { csv })).rejects.toThrow(message);
  });

  it("enforces max_rows and the size cap", async () => {
    await expect(call("data.csv_to_json", { csv: "a\n1\n2\n3", max_rows: 2 })).rejects.toThrow(/more than 3 rows/);
    expect((await call("data.csv_to_json", { csv: "a\n1\n2", max_rows: 2 })).row_count).toBe(2);
    await expect(call("data.csv_to_json", { csv: "a".repeat(MAX_CSV + 1) })).rejects.toThrow(
      "csv: must NOT have more than 1000000 characters",
    );
  });

  it("parses a 1 MB CSV quickly", async () => {
    const csv = `id,name,amount\n${Array.from({ length: 40_000 }, (_, i) => `${i},"item, ${i}",${i * 3}`).join("\n")}`.slice(
      0,
      MAX_CSV,
    );
    const csvWhole = csv.slice(0, csv.lastIndexOf("\n"));
    const start = performance.now();
    const result = await call("data.csv_to_json", { csv: csvWhole, max_rows: 50_000, infer_types: true });
    expect(result.rows[1]).toEqual({ id: 1, name: "item, 1", amount: 3 });
    expect(performance.now() - start).toBeLessThan(1_000);
  });
});

describe("data.time_now and data.time_convert", () => {
  it("tells the time in a zone from the context clock", async () => {
    expect(await call("data.time_now", { timezone: "Europe/Paris" })).toEqual({
      iso: "2024-05-01T14:00:00+02:00",
      unix: 1714564800,
      unix_ms: 1714564800000,
      timezone: "Europe/Paris",
      date: "2024-05-01",
      time: "14:00:00",
      weekday: "Wednesday",
      utc_offset: "+02:00",
    });
    expect(await call("data.time_now", {})).toMatchObject({
      iso: "2024-05-01T12:00:00+00:00",
      timezone: "UTC",
      utc_offset: "+00:00",
    });
    expect(await call("data.time_now", { timezone: "Asia/Kolkata" })).toMatchObject({ time: "17:30:00", utc_offset: "+05:30" });
    expect(await call("data.time_now", { timezone: "America/St_Johns" })).toMatchObject({
      time: "09:30:00",
      utc_offset: "-02:30",
    });
  });

  it("refuses an unknown zone, suggesting the form", async () => {
    await expect(call("data.time_now", { timezone: "Mars/Olympus" })).rejects.toThrow(
      /timezone: unknown time zone "Mars\/Olympus"; use an IANA name/,
    );
  });

  it.each([
    [{ timestamp: "2024-03-10T14:30:00Z", to_timezone: "Asia/Tokyo" }, "2024-03-10T23:30:00+09:00", "Sunday"],
    [{ timestamp: "2024-01-01T00:00:00+05:30", to_timezone: "UTC" }, "2023-12-31T18:30:00+00:00", "Sunday"],
    [{ timestamp: 0, to_timezone: "UTC" }, "1970-01-01T00:00:00+00:00", "Thursday"],
    [{ timestamp: "1714564800", to_timezone: "America/New_York" }, "2024-05-01T08:00:00-04:00", "Wednesday"],
    // Wall-clock time read in from_timezone: 09:00 on the day New York moves to daylight time is 13:00 UTC.
    [
      { timestamp: "2024-03-10 09:00", from_timezone: "America/New_York", to_timezone: "UTC" },
      "2024-03-10T13:00:00+00:00",
      "Sunday",
    ],
    [
      { timestamp: "2024-01-15T09:00", from_timezone: "America/New_York", to_timezone: "Europe/London" },
      "2024-01-15T14:00:00+00:00",
      "Monday",
    ],
    [{ timestamp: "2024-07-01", to_timezone: "Australia/Sydney" }, "2024-07-01T10:00:00+10:00", "Monday"],
  ])("converts %j", async (input, iso, weekday) => {
    expect(await call("data.time_convert", input)).toMatchObject({ iso, weekday });
  });

  it("refuses timestamps that are not dates", async () => {
    await expect(call("data.time_convert", { timestamp: "2024-02-30T10:00:00Z", to_timezone: "UTC" })).rejects.toThrow(
      /not a real date and time/,
    );
    await expect(call("data.time_convert", { timestamp: "next tuesday", to_timezone: "UTC" })).rejects.toThrow(/is not ISO 8601/);
    await expect(call("data.time_convert", { timestamp: "2024-01-01", to_timezone: "Nowhere" })).rejects.toThrow(
      /to_timezone: unknown time zone/,
    );
    await expect(call("data.time_convert", { timestamp: 1e20, to_timezone: "UTC" })).rejects.toThrow(BuiltinInputError);
  });
});

describe("data.math_evaluate", () => {
  it.each([
    ["2 + 3 * 4", 14],
    ["(2 + 3) * 4", 20],
    ["2 ^ 3 ^ 2", 512],
    ["(2 ^ 3) ^ 2", 64],
    ["-2 ^ 2", -4],
    ["(-2) ^ 2", 4],
    ["2 ^ -1", 0.5],
    ["2 ^ 3 * 2", 16],
    ["1 - 2 - 3", -4],
    ["12 / 3 / 2", 2],
    ["7 / 2", 3.5],
    ["10 % 4", 2],
    ["-7 % 3", -1],
    ["--3", 3],
    ["0.1 + 0.2", 0.3],
    ["1e3 + .5", 1000.5],
    ["sqrt(16) + abs(-3)", 7],
    ["min(3, 1, 2) + max(1, 5)", 6],
    ["round(2.5) + round(-2.5)", 0],
    ["round(3.14159, 2)", 3.14],
    ["floor(-1.5) + ceil(1.2)", 0],
    ["log(e)", 1],
    ["log(8, 2)", 3],
    ["sin(pi / 2) + cos(0)", 2],
    ["2 * pi", 6.28318530717959],
    ["2 × 3 ÷ 4", 1.5],
    ["2^53 + 1", 9007199254740992],
  ])("%s = %d", async (expression, result) => {
    expect(await call("data.math_evaluate", { expression })).toEqual({ expression, result });
  });

  it.each([
    ["1 / 0", "expression: division by zero at character 3"],
    ["5 % (2 - 2)", "expression: modulo by zero at character 3"],
    ["sqrt(-1)", /no finite real-number result/],
    ["10 ^ 400", /infinite or too large/],
    ["2 +", /ends too early/],
    ["2 3", /unexpected "3" at character 3/],
    ["(2", /a closing parenthesis is missing/],
    ["2)", /unexpected "\)" at character 2/],
    ["abc(1)", /unknown name "abc"/],
    ["process.exit(1)", /unknown name "process"|malformed number/],
    ["2 ** 3", /unexpected "\*"/],
    ["sqrt(1, 2)", /sqrt takes 1 argument\(s\), not 2/],
    ["sqrt", /sqrt needs its arguments in parentheses/],
    ["1; 2", /unexpected ";" at character 2/],
    ["   ", "expression: is empty"],
    ["round(1.5, 99)", /places must be an integer from 0 to 15/],
  ])("refuses %j", async (expression, message) => {
    await expect(call("data.math_evaluate", { expression })).rejects.toThrow(message);
  });

  it("caps nesting depth", async () => {
    const nested = (n: number) => `${"(".repeat(n)}1${")".repeat(n)}`;
    expect((await call("data.math_evaluate", { expression: nested(40) })).result).toBe(1);
    await expect(call("data.math_evaluate", { expression: nested(60) })).rejects.toThrow(/nests deeper than 50 levels/);
    await expect(call("data.math_evaluate", { expression: `${"-".repeat(200)}1` })).rejects.toThrow(/nests deeper/);
    await expect(call("data.math_evaluate", { expression: Array(60).fill("2").join("^") })).rejects.toThrow(/nests deeper/);
  });

  it("rejects a 10,000-character expression fast", async () => {
    const long = "1+".repeat(4_999) + "1";
    expect(long.length).toBe(9_999);
    const start = performance.now();
    await expect(call("data.math_evaluate", { expression: long })).rejects.toThrow(
      "expression: must NOT have more than 1000 characters",
    );
    await expect(call("data.math_evaluate", { expression: `${"(".repeat(5_000)}${")".repeat(5_000)}` })).rejects.toThrow(
      BuiltinInputError,
    );
    expect(performance.now() - start).toBeLessThan(50);
  });

  it("evaluates a long flat sum at the limit", async () => {
    expect(await call("data.math_evaluate", { expression: "1+".repeat(499) + "1" })).toMatchObject({ result: 500 });
  });
});

describe("data.unit_convert", () => {
  it.each([
    [5, "km", "mi", 3.10685596119, "length"],
    [1, "in", "cm", 2.54, "length"],
    [100, "C", "F", 212, "temperature"],
    [32, "F", "C", 0, "temperature"],
    [0, "K", "C", -273.15, "temperature"],
    [1, "GiB", "MB", 1073.741824, "data"],
    [8, "bit", "B", 1, "data"],
    [1, "lb", "kg", 0.45359237, "mass"],
    [1, "gal", "l", 3.785411784, "volume"],
    [3, "tsp", "tbsp", 1, "volume"],
  ])("%d %s -> %s", async (value, from, to, result, category) => {
    expect(await call("data.unit_convert", { value, from, to })).toEqual({ value, from, to, result, category });
  });

  it("refuses mixing kinds, temperatures below absolute zero and unknown units", async () => {
    await expect(call("data.unit_convert", { value: 1, from: "km", to: "kg" })).rejects.toThrow(
      "to: cannot convert length (km) to mass (kg)",
    );
    await expect(call("data.unit_convert", { value: -300, from: "C", to: "K" })).rejects.toThrow(/below absolute zero/);
    await expect(call("data.unit_convert", { value: 1, from: "furlong", to: "m" })).rejects.toThrow(/from: must be one of/);
  });
});

describe("data.uuid_generate", () => {
  it("generates distinct version-4 UUIDs", async () => {
    const { uuids } = await call("data.uuid_generate", { count: 50 });
    expect(uuids).toHaveLength(50);
    expect(new Set(uuids).size).toBe(50);
    for (const uuid of uuids) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await call("data.uuid_generate", {})).uuids).toHaveLength(1);
  });

  it("refuses counts outside 1 to 100", async () => {
    await expect(call("data.uuid_generate", { count: 0 })).rejects.toThrow("count: must be >= 1");
    await expect(call("data.uuid_generate", { count: 101 })).rejects.toThrow("count: must be <= 100");
  });
});
