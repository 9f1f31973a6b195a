// The install steps `npm start` and `npm test` share: find or install pnpm, then install the
// workspace's packages. Node built-ins only: this runs before `pnpm install`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file lives in deploy/local/). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const bold = (text) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${text}\x1b[0m` : text);

/** A progress line: `==> installing packages`. */
export function step(title) {
  console.log(bold(`==> ${title}`));
}

/** Run a command with inherited output; reject with a message naming it when it fails. */
export function run(cmd, args, { cwd = repoRoot, env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: "inherit" });
    child.on("error", (err) => reject(new Error(`${cmd} ${args.join(" ")}: ${err.message}`)));
    child.on("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")} failed (${signal ?? `exit ${code}`})`)),
    );
  });
}

const works = (cmd) => spawnSync(cmd, ["--version"], { stdio: "ignore" }).status === 0;

/**
 * A runnable pnpm: the one on PATH, one installed earlier into .tools/, or a fresh pnpm@10 from
 * the npm registry (globally when root, else into .tools/). Never corepack: its signature check
 * fails on this network.
 */
export async function ensurePnpm() {
  if (works("pnpm")) return "pnpm";
  const local = path.join(repoRoot, ".tools/node_modules/.bin/pnpm");
  if (works(local)) return local;
  if (process.getuid?.() === 0) {
    step("installing pnpm@10 globally (npm i -g pnpm@10)");
    try {
      await run("npm", ["i", "-g", "pnpm@10"]);
      if (works("pnpm")) return "pnpm";
    } catch (err) {
      console.log(`${err.message}; trying a local install instead`);
    }
  }
  step("installing pnpm@10 into .tools/ (npm install --prefix .tools pnpm@10)");
  await run("npm", ["install", "--prefix", path.join(repoRoot, ".tools"), "--no-save", "--no-audit", "--no-fund", "pnpm@10"]);
  if (!works(local)) throw new Error(`pnpm was installed but ${local} does not run`);
  return local;
}

/** `pnpm install`, held to the committed lockfile when there is one. */
export async function installPackages(pnpm) {
  const frozen = existsSync(path.join(repoRoot, "pnpm-lock.yaml"));
  step(`installing packages (pnpm install${frozen ? " --frozen-lockfile" : ""})`);
  await run(pnpm, frozen ? ["install", "--frozen-lockfile"] : ["install"]);
}

/** `pnpm run build` (tsc -b over the workspace; generated protobuf code is committed). */
export async function build(pnpm) {
  step("building (pnpm run build)");
  await run(pnpm, ["run", "build"]);
}

/** Seconds since this process started, to one decimal. */
export const elapsed = () => (performance.now() / 1000).toFixed(1);
