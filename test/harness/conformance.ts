/**
 * The official MCP conformance suite (npm `@modelcontextprotocol/conformance`) and the Node it needs
 * (22 or later; the machine's Node may be older, and the system keeps running on it): both installed
 * from the npm registry on first use into `<repo>/.cache/mcp-conformance`, never as workspace
 * dependencies. The `node` package's install script fetches its binary from the registry too.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const CONFORMANCE_VERSION = "0.1.16";
const NODE_VERSION = "24";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const cacheDir = path.join(repoRoot, ".cache", "mcp-conformance");

export interface Conformance {
  /** The Node 24 binary. */
  node: string;
  /** The suite's command-line entry (run it with `node`). */
  cli: string;
}

export async function installConformance(log: (line: string) => void = () => {}): Promise<Conformance> {
  const node = path.join(cacheDir, "node_modules", ".bin", "node");
  const pkg = path.join(cacheDir, "node_modules", "@modelcontextprotocol", "conformance", "package.json");
  const cli = path.join(cacheDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
  const installed = async () => {
    if (!existsSync(node) || !existsSync(pkg)) return false;
    const { stdout } = await promisify(execFile)(node, ["-p", `require(${JSON.stringify(pkg)}).version`]);
    return stdout.trim() === CONFORMANCE_VERSION;
  };
  if (await installed()) return { node, cli };
  log(`installing node@${NODE_VERSION} and @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} into ${cacheDir}`);
  await promisify(execFile)(
    "npm",
    [
      "i",
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--prefix",
      cacheDir,
      `node@${NODE_VERSION}`,
      `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`,
    ],
    { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
  );
  if (!(await installed()))
    throw new Error(`npm installed node@${NODE_VERSION} and the conformance suite, but ${node} or ${pkg} is missing`);
  return { node, cli };
}
