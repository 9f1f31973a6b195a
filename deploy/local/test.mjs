// `npm test`: the install steps `npm start` uses, then every check in order, stopping at the first
// failure. Extra arguments go to vitest (`npm test -- --project unit`). Integration tests start
// their own Postgres and NATS on free ports, so the binaries must be installed, not running.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { elapsed, ensurePnpm, installPackages, run, step } from "./bootstrap.mjs";
import { ensureBinaries } from "./infra.mjs";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
/** The supported Node line (Node 20 ended on 2026-04-30; `npm start` still runs on it). */
const SUPPORTED_NODE = "24";

/**
 * A Node 24 binary: the `node` package from the npm registry, installed once into .cache/node24 (its
 * install script fetches the binary from the registry too), reused by later runs.
 */
async function supportedNode() {
  const dir = path.join(repoRoot, ".cache", `node${SUPPORTED_NODE}`);
  const node = path.join(dir, "node_modules", ".bin", "node");
  const version = () => spawnSync(node, ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
  if (!version().startsWith(`v${SUPPORTED_NODE}.`)) {
    step(`installing node@${SUPPORTED_NODE} from the npm registry into ${dir}`);
    await run("npm", [
      "i",
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--prefix",
      dir,
      `node@${SUPPORTED_NODE}`,
    ]);
  }
  return { node, version: version() };
}

async function main() {
  const pnpm = await ensurePnpm();
  await installPackages(pnpm);
  step("finding Postgres, nats-server (the tests start their own) and chromium (the page tests drive it)");
  ensureBinaries({ install: true, browser: true, log: (m) => step(m) });

  const checks = [
    ["checking generated code is up to date (pnpm run check:generated)", ["run", "check:generated"]],
    ["linting contracts (buf lint)", ["--filter", "@toolport/proto", "run", "lint"]],
    ["linting (pnpm run lint)", ["run", "lint"]],
    ["building (pnpm run build)", ["run", "build"]],
    ["running tests (vitest run)", ["exec", "vitest", "run", ...process.argv.slice(2)]],
  ];
  for (const [title, args] of checks) {
    step(title);
    await run(pnpm, args);
  }
  // The end-to-end suite once more on the supported release, so both the machine's Node and Node 24 are
  // proven (skipped when this already is Node 24 or later, or when arguments chose other tests).
  if (process.argv.length === 2 && Number(process.versions.node.split(".")[0]) < Number(SUPPORTED_NODE)) {
    const { node, version } = await supportedNode();
    step(`running the end-to-end suite again on Node ${version} (${path.relative(repoRoot, node)})`);
    await run(node, [path.join(repoRoot, "node_modules", "vitest", "vitest.mjs"), "run", "--project", "integration", "test/e2e"]);
  }
  step(`all checks passed in ${elapsed()}s`);
}

main().catch((err) => {
  console.error(`\nerror: ${err.message}`);
  step(`failed after ${elapsed()}s`);
  process.exit(1);
});
