/**
 * The directory RPCs' rules that need no database: platform admins only, the page's bounds, and a
 * directory that is not installed (installed = false with the install command for the list, 412
 * directory_not_installed for an import), which the catalog never installs by itself.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Code, DomainError } from "@toolport/kit/errors";
import { Grant } from "@toolport/kit/grants";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Caller } from "./access.js";
import type { CatalogDeps } from "./deps.js";
import { INSTALL_COMMAND, importFromDirectory, listDirectory } from "./directory.js";

const grants = new Set([Grant.MANAGE_CATALOG]);
const caller = (isPlatformAdmin: boolean): Caller => ({
  accountId: "acc-1",
  organizationId: "org-1",
  orgRole: "owner",
  isPlatformAdmin,
  allowedServices: null,
  allowedTools: null,
  requireConfirmation: false,
  authority: { grants, roleGrants: grants, role: "owner" },
});
// Nothing here reaches the database: a pool that fails the test if it is used.
const deps = {
  pool: {
    query: () => {
      throw new Error("no database in this test");
    },
  },
} as unknown as CatalogDeps;

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

describe("the directory for platform admins", () => {
  let tmp: string;
  const saved = { path: process.env.OPENAPI_DIRECTORY_PATH, cache: process.env.OPENAPI_DIRECTORY_CACHE };
  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), "toolport-directory-none-"));
    delete process.env.OPENAPI_DIRECTORY_PATH;
    process.env.OPENAPI_DIRECTORY_CACHE = tmp;
  });
  afterAll(() => {
    if (saved.path === undefined) delete process.env.OPENAPI_DIRECTORY_PATH;
    else process.env.OPENAPI_DIRECTORY_PATH = saved.path;
    if (saved.cache === undefined) delete process.env.OPENAPI_DIRECTORY_CACHE;
    else process.env.OPENAPI_DIRECTORY_CACHE = saved.cache;
    rmSync(tmp, { recursive: true, force: true });
  });

  it("refuses anyone else, and the anonymous", async () => {
    for (const p of [listDirectory(deps, {}, caller(false)), importFromDirectory(deps, { names: ["x"] }, caller(false))]) {
      const err = await refusal(p);
      expect([err.code, err.reason]).toEqual([Code.PermissionDenied, "platform_admin_only"]);
    }
    expect((await refusal(listDirectory(deps, {}, null))).code).toBe(Code.Unauthenticated);
  });

  it("answers installed = false with the install command, and never installs", async () => {
    const page = await listDirectory(deps, { query: "stripe" }, caller(true));
    expect(page).toMatchObject({ installed: false, entries: [], installCommand: INSTALL_COMMAND, limit: 25, offset: 0 });
    expect(page.message).toContain(tmp);
    const err = await refusal(importFromDirectory(deps, { names: ["stripe.com"] }, caller(true)));
    expect([err.code, err.reason]).toEqual([Code.FailedPrecondition, "directory_not_installed"]);
    expect(err.details).toEqual({ install_command: INSTALL_COMMAND });
  });

  it("checks the page and the names before anything else", async () => {
    expect((await refusal(listDirectory(deps, { limit: 0 }, caller(true)))).reason).toBe("invalid_limit");
    expect((await refusal(listDirectory(deps, { offset: -1 }, caller(true)))).reason).toBe("invalid_offset");
    expect((await refusal(importFromDirectory(deps, { names: [] }, caller(true)))).reason).toBe("invalid_names");
    const many = Array.from({ length: 21 }, (_, i) => `api${i}.example`);
    expect((await refusal(importFromDirectory(deps, { names: many }, caller(true)))).reason).toBe("invalid_names");
    // Repeats count once.
    const repeated = Array.from({ length: 30 }, () => "a.example");
    expect((await refusal(importFromDirectory(deps, { names: repeated }, caller(true)))).reason).toBe("directory_not_installed");
    const visibility = await refusal(importFromDirectory(deps, { names: ["a.example"], visibility: "internal" }, caller(true)));
    expect(visibility.reason).toBe("invalid_visibility");
  });
});
