/**
 * The compact Tool the MCP tools answer by default: what a model needs to choose a tool and call it,
 * each thing once. A model pays for every token it reads, and the catalog's PublicTool shape (what
 * `detail: "full"` returns) spends most of its size elsewhere: each parameter's description stands
 * in the parameter and again in its JSON Schema, the parameter's name is its key and a field, the
 * reliability block has nineteen fields, and empty or default fields are written out.
 *
 * Kept: id, name, service_id, description; per parameter its type, whether it is required, one
 * description, and what constrains a value (its JSON Schema without the schema's own title and
 * description, when the schema says more than the type; else enum, default, minimum and maximum);
 * readiness, with the configuration URL
 * when something is missing; reliability as success rate, calls and median seconds over 30 days (and
 * `flagged` when it is), absent when the tool was not called; deprecation only when deprecated.
 * Left out: slug (the id calls the tool), each parameter's location (tool_input is keyed by name), the
 * rest of the reliability block.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Schema keywords that describe rather than constrain a value, dropped from a parameter's schema. */
const ANNOTATIONS = new Set(["title", "description", "examples", "example", "$comment"]);

/** The first description of a schema: its own, or one of the parts it combines (allOf, anyOf, oneOf). */
function schemaDescription(schema: Json): string | undefined {
  if (typeof schema.description === "string" && schema.description) return schema.description;
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    const parts = schema[key];
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      const found = isObject(part) ? schemaDescription(part) : undefined;
      if (found) return found;
    }
  }
  return undefined;
}

function compactParameter(p: Json): Json {
  const schema = isObject(p.json_schema) ? p.json_schema : undefined;
  const out: Json = { type: p.type, required: p.required === true };
  const description = (typeof p.description === "string" && p.description) || (schema && schemaDescription(schema));
  if (description) out.description = description;
  // The schema, when it says more than the type, carries the constraints itself (without its own
  // description, said once above); without one, the parameter's own fields do.
  const constraints = schema ? Object.entries(schema).filter(([key]) => !ANNOTATIONS.has(key)) : [];
  if (constraints.some(([key]) => key !== "type")) out.schema = Object.fromEntries(constraints);
  else for (const key of ["enum", "default", "minimum", "maximum"]) if (p[key] !== undefined) out[key] = p[key];
  return out;
}

function compactReliability(r: unknown): Json | undefined {
  if (!isObject(r) || !r.calls_30d) return undefined;
  const out: Json = { success_rate_30d: r.success_rate_30d, calls_30d: r.calls_30d, p50_seconds: r.p50_seconds };
  if (r.flagged === true) out.flagged = true;
  return out;
}

/** A PublicTool (GET /v1/tools/public/search) in the compact form. */
export function compactTool(tool: Json): Json {
  const parameters = isObject(tool.parameters) ? tool.parameters : {};
  const out: Json = {
    id: tool.id,
    name: tool.name,
    service_id: tool.service_id,
    description: tool.description,
    parameters: Object.fromEntries(Object.entries(parameters).map(([name, p]) => [name, compactParameter(isObject(p) ? p : {})])),
    readiness: tool.readiness,
  };
  if (tool.readiness !== "ready" && tool.configuration_url) out.configuration_url = tool.configuration_url;
  const reliability = compactReliability(tool.reliability);
  if (reliability) out.reliability = reliability;
  if (tool.deprecated === true) {
    out.deprecated = true;
    if (tool.deprecation_message) out.deprecation_message = tool.deprecation_message;
    if (tool.sunset_date) out.sunset_date = tool.sunset_date;
  }
  return out;
}
