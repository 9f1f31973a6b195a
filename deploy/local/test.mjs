// `npm test`: the install steps `npm start` uses, then every check in order, stopping at the first
// failure. Extra arguments go to vitest (`npm test -- --project unit`). Integration tests start
// their own Postgres and NATS on free ports, so the binaries must be installed, not running.
import { elapsed, ensurePnpm, installPackages, run, step } from "./bootstrap.mjs";
import { ensureBinaries } from "./infra.mjs";

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
  step(`all checks passed in ${elapsed()}s`);
}

main().catch((err) => {
  console.error(`\nerror: ${err.message}`);
  step(`failed after ${elapsed()}s`);
  process.exit(1);
});
