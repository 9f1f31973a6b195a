/** Data Utilities: JSON paths and schemas, CSV, time zones, arithmetic, units and UUIDs. */
import { randomUUID } from "node:crypto";
import { defineTool, objectSchema } from "./define.js";
import { MAX_COLUMNS, parseCsv } from "./lib/csv.js";
import { MAX_PATH, parsePath, queryPath } from "./lib/json-path.js";
import { validateAgainstSchema } from "./lib/json-schema.js";
import { measureJson } from "./lib/json-size.js";
import { evaluate, MAX_LENGTH as MAX_EXPRESSION } from "./lib/math.js";
import { describeInstant, parseInstant } from "./lib/time.js";
import { convert, UNITS } from "./lib/units.js";
import { BuiltinInputError, type BuiltinService } from "./types.js";

export const MAX_CSV = 1_000_000;
export const MAX_QUERY_NODES = 500_000;

const timeZoneSchema = (description: string, fallback?: string) => ({
  type: "string",
  minLength: 1,
  maxLength: 64,
  ...(fallback === undefined ? {} : { default: fallback }),
  description,
});

const instantOutput = {
  iso: { type: "string", description: "ISO 8601 with the zone's offset, e.g. 2024-03-10T23:30:00+09:00." },
  unix: { type: "integer", description: "Seconds since 1970-01-01T00:00:00Z." },
  unix_ms: { type: "integer", description: "Milliseconds since the epoch." },
  timezone: { type: "string", description: "The IANA zone used." },
  date: { type: "string", description: "Local date, YYYY-MM-DD." },
  time: { type: "string", description: "Local time, HH:MM:SS (24-hour)." },
  weekday: { type: "string", description: "Local day of the week, e.g. Sunday." },
  utc_offset: { type: "string", description: "Offset from UTC at that instant, e.g. +09:00." },
};

const jsonQuery = defineTool<{ document: unknown; path: string }>({
  handler: "data.json_query",
  slug: "data-json-query",
  name: "json_query",
  description:
    'Pick values out of a JSON document with a dotted path: "user.name", "items[0].price", "items[-1]" (last), "items[].id" (from every element), ["key.with.dots"]. A string holding JSON is read as JSON.',
  tags: ["data", "json", "query", "path", "extract", "select"],
  tips: "With [] in the path the result is a list of every match; otherwise the single value. matched is false when nothing matched.",
  inputSchema: objectSchema(
    {
      document: { description: "The JSON document: any JSON value (or a string holding JSON)." },
      path: {
        type: "string",
        maxLength: MAX_PATH,
        default: "",
        description: 'The path, e.g. "orders[].total"; empty for the whole document.',
      },
    },
    ["document"],
  ),
  output: {
    matched: { type: "boolean", description: "Whether the path reached anything." },
    result: { type: "any", description: "The value at the path, a list of values when the path has [], or null." },
  },
  example: {
    document: {
      orders: [
        { id: "a", total: 12 },
        { id: "b", total: 30 },
      ],
    },
    path: "orders[].total",
  },
  run({ document, path }) {
    const segments = parsePath(path);
    if (measureJson(document, MAX_QUERY_NODES).nodes > MAX_QUERY_NODES)
      throw new BuiltinInputError(`document: more than ${MAX_QUERY_NODES} values`);
    return queryPath(document, segments);
  },
});

const jsonValidate = defineTool<{ document: unknown; schema: unknown }>({
  handler: "data.json_validate",
  slug: "data-json-validate",
  name: "json_validate",
  description:
    "Check a JSON document against a JSON Schema (draft-07, 2019-09 or 2020-12, chosen by $schema) and list every violation with its path, keyword and message. Formats such as email, date-time and uri are checked.",
  tags: ["data", "json", "schema", "validate", "validation", "ajv"],
  tips: "Patterns run on a linear-time engine: lookarounds and backreferences are not supported. Remote $refs are not fetched.",
  inputSchema: objectSchema(
    {
      document: { description: "The JSON value to check." },
      schema: { anyOf: [{ type: "object" }, { type: "boolean" }], description: "The JSON Schema to check it against." },
    },
    ["document", "schema"],
  ),
  output: {
    valid: { type: "boolean", description: "True when the document satisfies the schema." },
    draft: { type: "string", description: "The JSON Schema draft used." },
    errors: { type: "array", description: "Up to 50 violations: path (JSON Pointer), keyword, message, params." },
  },
  example: {
    document: { name: "Ada", age: -1 },
    schema: {
      type: "object",
      properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 } },
      required: ["name", "age"],
    },
  },
  run: ({ document, schema }) => validateAgainstSchema(document, schema),
});

const csvToJson = defineTool<{ csv: string; delimiter: string; header: boolean; infer_types: boolean; max_rows: number }>({
  handler: "data.csv_to_json",
  slug: "data-csv-to-json",
  name: "csv_to_json",
  description:
    "Convert CSV text to JSON: with a header row, one object per row keyed by column name; without, arrays of fields. Handles RFC 4180 quoting (quoted delimiters, line breaks and doubled quotes) and comma, semicolon, tab or pipe delimiters.",
  tags: ["data", "csv", "json", "convert", "parse", "spreadsheet", "tsv"],
  tips: "Every row must have as many fields as the header. Blank lines are skipped. infer_types turns numbers, true/false and empty fields into JSON numbers, booleans and null.",
  inputSchema: objectSchema(
    {
      csv: {
        type: "string",
        maxLength: MAX_CSV,
        description: `The CSV text (at most ${MAX_CSV.toLocaleString("en-US")} characters).`,
      },
      delimiter: { type: "string", enum: [",", ";", "\t", "|"], default: ",", description: "Field separator (default comma)." },
      header: { type: "boolean", default: true, description: "The first row names the columns (default true)." },
      infer_types: {
        type: "boolean",
        default: false,
        description: "Numbers, true/false and empty fields become JSON numbers, booleans and null (default false: all strings).",
      },
      max_rows: {
        type: "integer",
        minimum: 1,
        maximum: 50_000,
        default: 10_000,
        description: "Most data rows accepted (default 10,000; at most 50,000).",
      },
    },
    ["csv"],
  ),
  output: {
    columns: { type: "array", description: "Column names (with a header row)." },
    rows: { type: "array", description: "Objects keyed by column (with header) or arrays of fields (without)." },
    row_count: { type: "integer", description: "Data rows." },
  },
  example: { csv: 'name,city,visits\nAda,"London, UK",3\nLinus,Helsinki,5\n', infer_types: true },
  run({ csv, delimiter, header, infer_types, max_rows }) {
    const records = parseCsv(csv, { delimiter, maxRows: max_rows + (header ? 1 : 0) });
    const cell = infer_types ? inferType : (field: string) => field;
    if (!header) return { rows: records.map((r) => r.map(cell)), row_count: records.length };
    const [names = [], ...data] = records;
    const columns = uniqueColumnNames(names);
    const rows = data.map((record, i) => {
      if (record.length !== columns.length) {
        throw new BuiltinInputError(
          `csv: data row ${i + 1} has ${record.length} fields but the header has ${columns.length} columns`,
        );
      }
      return Object.fromEntries(columns.map((name, k) => [name, cell(record[k]!)]));
    });
    return { columns, rows, row_count: rows.length };
  },
});

/** Blank names become column_N; repeats get _2, _3... so no column overwrites another. */
function uniqueColumnNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.slice(0, MAX_COLUMNS).map((raw, k) => {
    const base = raw.trim() || `column_${k + 1}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base}_${count}`;
  });
}

function inferType(field: string): string | number | boolean | null {
  if (field === "") return null;
  if (field === "true" || field === "false") return field === "true";
  // Leading zeros ("007") and values beyond a double ("1e999") stay text: a number would change them.
  if (/^-?(?:0|[1-9]\d{0,14})(?:\.\d{1,15})?(?:[eE][-+]?\d{1,3})?$/.test(field) && Number.isFinite(Number(field)))
    return Number(field);
  return field;
}

const timeNow = defineTool<{ timezone: string }>({
  handler: "data.time_now",
  slug: "data-time-now",
  name: "time_now",
  description:
    "The current date and time in any IANA time zone (e.g. Europe/Paris, America/New_York, Asia/Tokyo): ISO 8601 timestamp, unix time, local date and time, weekday and UTC offset.",
  tags: ["time", "date", "clock", "timezone", "now"],
  inputSchema: objectSchema({ timezone: timeZoneSchema('IANA time zone, e.g. "America/New_York" (default "UTC").', "UTC") }),
  output: instantOutput,
  example: { timezone: "Europe/Paris" },
  run: ({ timezone }, ctx) => describeInstant(ctx.now(), timezone),
});

const timeConvert = defineTool<{ timestamp: string | number; from_timezone: string; to_timezone: string }>({
  handler: "data.time_convert",
  slug: "data-time-convert",
  name: "time_convert",
  description:
    "Convert a timestamp to another time zone: give an ISO 8601 time (with or without offset) or unix seconds and a target IANA zone; get the local date, time, weekday and offset there.",
  tags: ["time", "date", "timezone", "convert", "utc"],
  tips: 'A timestamp without an offset (e.g. "2024-03-10 09:00") is read in from_timezone (default UTC).',
  inputSchema: objectSchema(
    {
      timestamp: {
        anyOf: [
          { type: "string", minLength: 1, maxLength: 64 },
          { type: "number", minimum: -62_135_596_800, maximum: 253_402_300_799 },
        ],
        description: 'ISO 8601 (e.g. "2024-03-10T14:30:00Z", "2024-03-10 09:00") or unix seconds.',
      },
      from_timezone: timeZoneSchema("IANA zone of a timestamp written without an offset (default UTC).", "UTC"),
      to_timezone: timeZoneSchema('IANA zone to convert to, e.g. "Asia/Tokyo".'),
    },
    ["timestamp", "to_timezone"],
  ),
  output: instantOutput,
  example: { timestamp: "2024-03-10T14:30:00Z", to_timezone: "Asia/Tokyo" },
  run({ timestamp, from_timezone, to_timezone }) {
    const instant = parseInstant(timestamp, from_timezone);
    if (Number.isNaN(instant.getTime())) throw new BuiltinInputError("timestamp: out of range");
    return describeInstant(instant, to_timezone, "to_timezone");
  },
});

const mathEvaluate = defineTool<{ expression: string }>({
  handler: "data.math_evaluate",
  slug: "data-math-evaluate",
  name: "math_evaluate",
  description:
    "Calculate an arithmetic expression exactly as written: + - * / % ^ (power), parentheses, unary minus, functions sqrt, abs, round, floor, ceil, min, max, log, ln, log10, exp, sin, cos, tan and constants pi, e. A calculator, not code execution.",
  tags: ["math", "calculator", "arithmetic", "expression", "compute"],
  tips: "^ is right-associative and binds tighter than a leading minus (-2^2 = -4). Angles are radians. log(x) is natural; log(x, b) is base b. Results are rounded to 15 significant digits.",
  inputSchema: objectSchema(
    {
      expression: {
        type: "string",
        minLength: 1,
        maxLength: MAX_EXPRESSION,
        description: 'The expression, e.g. "2 * (3 + 4)^2 / sqrt(16)".',
      },
    },
    ["expression"],
  ),
  output: {
    expression: { type: "string", description: "The expression as given." },
    result: { type: "number", description: "Its value." },
  },
  example: { expression: "2 * (3 + 4)^2 / sqrt(16)" },
  run({ expression }) {
    const value = evaluate(expression);
    return { expression, result: Number.isInteger(value) ? value + 0 : Number(value.toPrecision(15)) };
  },
});

const unitConvert = defineTool<{ value: number; from: string; to: string }>({
  handler: "data.unit_convert",
  slug: "data-unit-convert",
  name: "unit_convert",
  description:
    "Convert a quantity between units of length (mm cm m km in ft yd mi nmi), mass (mg g kg t oz lb st), volume (ml l m3 tsp tbsp fl_oz cup pt qt gal, US), temperature (C F K) and data size (bit B kB MB GB TB KiB MiB GiB TiB).",
  tags: ["math", "units", "convert", "measurement", "temperature", "metric", "imperial"],
  tips: "Unit symbols are case-sensitive (MB is megabytes, MiB mebibytes). US customary volumes.",
  inputSchema: objectSchema(
    {
      value: { type: "number", minimum: -1e15, maximum: 1e15, description: "The quantity to convert." },
      from: { type: "string", enum: UNITS, description: "Unit of value." },
      to: { type: "string", enum: UNITS, description: "Unit to convert to (same kind as from)." },
    },
    ["value", "from", "to"],
  ),
  output: {
    result: { type: "number", description: "The converted quantity (12 significant digits)." },
    category: { type: "string", description: "length, mass, volume, temperature or data." },
  },
  example: { value: 5, from: "km", to: "mi" },
  run({ value, from, to }) {
    const { result, category } = convert(value, from, to);
    return { value, from, to, result, category };
  },
});

const uuidGenerate = defineTool<{ count: number }>({
  handler: "data.uuid_generate",
  slug: "data-uuid-generate",
  name: "uuid_generate",
  description: "Generate random version-4 UUIDs (RFC 9562) from a cryptographically secure source, 1 to 100 at a time.",
  tags: ["data", "uuid", "guid", "random", "id", "generate"],
  inputSchema: objectSchema({
    count: { type: "integer", minimum: 1, maximum: 100, default: 1, description: "How many (1 to 100, default 1)." },
  }),
  output: { uuids: { type: "array", description: "The UUIDs, lowercase." } },
  example: { count: 3 },
  run: ({ count }) => ({ uuids: Array.from({ length: count }, () => randomUUID()) }),
});

export const dataToolsService: BuiltinService = {
  slug: "data-tools",
  name: "Data Utilities",
  summary: "Query and validate JSON, convert CSV, time zones, calculator, unit conversion and UUIDs",
  description:
    "Everyday data handling without a network call: JSON path queries, JSON Schema validation, CSV to JSON, the current time and time-zone conversion, a safe calculator for arithmetic expressions, unit conversion and UUID generation.",
  category: "developer-tools",
  isDemo: false,
  version: "1.0.0",
  tools: [jsonQuery, jsonValidate, csvToJson, timeNow, timeConvert, mathEvaluate, unitConvert, uuidGenerate],
};
