/**
 * The official MCP conformance suite's client authorization scenarios (issue 32) against Toolport's
 * upstream MCP OAuth client: services/catalog/src/bin/mcp-oauth-client.ts (built), which drives the same
 * discovery, registration, authorization request, issuer check and token requests the catalog uses for an
 * OAuth-protected MCP server. Both suite lines run: 0.1.16 (revision 2025-11-25 and the 2025-03-26
 * back-compatibility scenarios) and 0.2.0-alpha.12 (revision 2026-07-28). Every scenario must pass except
 * those in the committed expected-failures files, each with its reason; the suite itself fails a run where
 * a listed scenario passes, so the lists cannot go stale. Each applicable scenario is asserted by name.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { CONFORMANCE_2026_VERSION, type Conformance, installConformance } from "../harness/conformance.js";

const COMMAND = fileURLToPath(new URL("../../services/catalog/dist/bin/mcp-oauth-client.js", import.meta.url));
const EXPECTED = fileURLToPath(new URL("./mcp-oauth-client-expected.yml", import.meta.url));
const EXPECTED_2026 = fileURLToPath(new URL("./mcp-oauth-client-2026-expected.yml", import.meta.url));

/** The auth suite's scenarios, both lines (revision 2025-11-25, and 2026-07-28 in the newer line). */
const AUTH = [
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
];
/** Revision 2026-07-28's further authorization scenarios (still in the newer line's draft suite). */
const AUTH_2026 = [
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
  "auth/authorization-server-migration",
  "auth/iss-supported",
  "auth/iss-not-advertised",
  "auth/iss-supported-missing",
  "auth/iss-wrong-issuer",
  "auth/iss-unexpected",
  "auth/iss-normalized",
  "auth/metadata-issuer-mismatch",
];
const BACKCOMPAT = ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"];

let suite: Conformance;
let suite2026: Conformance;

beforeAll(async () => {
  if (!existsSync(COMMAND)) throw new Error(`${COMMAND} is missing: build first (pnpm exec tsc -b)`);
  [suite, suite2026] = await Promise.all([
    installConformance((line) => process.stderr.write(`${line}\n`)),
    installConformance((line) => process.stderr.write(`${line}\n`), CONFORMANCE_2026_VERSION),
  ]);
}, 600_000);

function runClient(which: Conformance, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      which.node,
      [which.cli, "client", "--command", `${process.execPath} ${COMMAND}`, ...args],
      { timeout: 300_000, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

/** Runs a suite (or one scenario) and checks every named scenario passed. */
async function expectPassed(which: Conformance, args: string[], scenarios: string[]) {
  const { code, output } = await runClient(which, args);
  expect(code, output.slice(-4000)).toBe(0);
  for (const scenario of scenarios) {
    expect(output, scenario).toMatch(
      new RegExp(`(✓ ${scenario}: [1-9]\\d* passed, 0 failed)|(Passed: ([1-9]\\d*)/\\3, 0 failed)`),
    );
  }
  return output;
}

describe("the official MCP conformance suite (client authorization scenarios) against the upstream OAuth client", () => {
  it("0.1.16, revision 2025-11-25: every auth scenario passes", async () => {
    await expectPassed(suite, ["--suite", "auth", "--expected-failures", EXPECTED], AUTH);
  }, 360_000);

  it("0.1.16: the 2025-03-26 fallback passes; extensions and the inconsistent back-compat scenario are the listed failures", async () => {
    await expectPassed(
      suite,
      ["--suite", "backcompat", "--expected-failures", EXPECTED],
      ["auth/2025-03-26-oauth-endpoint-fallback"],
    );
    await expectPassed(suite, ["--suite", "extensions", "--expected-failures", EXPECTED], []);
    await expectPassed(suite, ["--suite", "draft", "--expected-failures", EXPECTED], AUTH_2026.slice(0, 3));
  }, 360_000);

  it("0.2.0-alpha.12, revision 2026-07-28: every auth scenario, the back-compat ones and the new authorization scenarios pass", async () => {
    await expectPassed(
      suite2026,
      ["--suite", "auth", "--spec-version", "2026-07-28", "--expected-failures", EXPECTED_2026],
      AUTH,
    );
    await expectPassed(suite2026, ["--suite", "backcompat", "--expected-failures", EXPECTED_2026], BACKCOMPAT);
    await expectPassed(suite2026, ["--suite", "extensions", "--expected-failures", EXPECTED_2026], []);
    // The draft suite holds non-authorization client scenarios too: the authorization ones run by name.
    for (const scenario of AUTH_2026) {
      await expectPassed(suite2026, ["--scenario", scenario, "--expected-failures", EXPECTED_2026], [scenario]);
    }
  }, 600_000);
});
