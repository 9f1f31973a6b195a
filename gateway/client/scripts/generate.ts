/**
 * Generates the client's committed files from the gateway's source, no build and no service needed:
 * - `openapi.json`: the document `GET /v1/openapi.json` serves (gateway/src/openapi/document.ts), with the
 *   fixed server URL below so the file does not depend on a deployment;
 * - `src/schema.ts`: its TypeScript types (openapi-typescript), which type the client in src/index.ts.
 *
 * `tsx --conditions=@toolport/source scripts/generate.ts` writes both (`pnpm --filter @toolport/client
 * generate`); with `--check` it writes nothing and fails, naming the file, when a committed one differs
 * from what the gateway's source gives now (`pnpm --filter @toolport/client check`, run by CI).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@toolport/kit/logger";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { v1Routes } from "../../src/app.js";
import { createServiceClients } from "../../src/clients.js";
import { loadGatewayConfig } from "../../src/config.js";
import { buildDocument } from "../../src/openapi/document.js";

const SERVER_URL = "http://localhost:8080";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const REGENERATE = "pnpm --filter @toolport/client generate";

/** The document as the gateway builds it: a fixed config, clients that would connect on first use (none is made). */
function documentText(): string {
  const config = loadGatewayConfig({ PUBLIC_URL: SERVER_URL });
  const api = v1Routes({ config, clients: createServiceClients(config), log: createLogger("client-generate", "silent") });
  return `${JSON.stringify(buildDocument(api.operations, { serverUrl: SERVER_URL }), null, 2)}\n`;
}

/** The types of the document exactly as written to openapi.json. */
async function schemaText(document: string): Promise<string> {
  const ast = await openapiTS(JSON.parse(document) as OpenAPI3, {
    // A property with a default stays optional: callers may leave it out (the server fills it in).
    defaultNonNullable: false,
    // `{type: "object"}` alone (a tool's input, error details) is any object, not an empty one.
    emptyObjectsUnknown: true,
    silent: true,
  });
  const header =
    "/**\n" +
    " * Generated from openapi.json by scripts/generate.ts (openapi-typescript): do not edit.\n" +
    ` * Regenerate with \`${REGENERATE}\`.\n` +
    " */\n\n";
  return header + astToString(ast);
}

const read = (path: string) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

const document = documentText();
const files = [
  { path: join(root, "openapi.json"), text: document },
  { path: join(root, "src", "schema.ts"), text: await schemaText(document) },
];

if (process.argv.includes("--check")) {
  const problems = files.flatMap((f) => {
    const committed = read(f.path);
    const name = `gateway/client/${relative(root, f.path)}`;
    if (committed === undefined) return [`${name} is missing`];
    return committed === f.text ? [] : [`${name} differs from what the gateway's source gives`];
  });
  if (problems.length > 0) {
    console.error(`@toolport/client: generated files are stale. Run \`${REGENERATE}\`.\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  process.stdout.write(`@toolport/client: ${files.map((f) => relative(root, f.path)).join(" and ")} are up to date.\n`);
} else {
  for (const f of files) writeFileSync(f.path, f.text);
  process.stdout.write(`@toolport/client: wrote ${files.map((f) => relative(root, f.path)).join(" and ")}.\n`);
}
