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

/** The latest release: the 2025 revisions' scenarios. */
export const CONFORMANCE_VERSION = "0.1.16";
/**
 * The first line with protocol revision 2026-07-28's scenarios (stateless serving, header validation,
 * caching, input_required, the Tasks extension), published as a pre-release; pinned.
 */
export const CONFORMANCE_2026_VERSION = "0.2.0-alpha.12";
const NODE_VERSION = "24";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface Conformance {
  /** The Node 24 binary. */
  node: string;
  /** The suite's command-line entry (run it with `node`). */
  cli: string;
}

export async function installConformance(
  log: (line: string) => void = () => {},
  version = CONFORMANCE_VERSION,
): Promise<Conformance> {
  // One folder per version, so the two suites' runs never reinstall each other.
  const cacheDir = path.join(
    repoRoot,
    ".cache",
    version === CONFORMANCE_VERSION ? "mcp-conformance" : `mcp-conformance-${version}`,
  );
  const node = path.join(cacheDir, "node_modules", ".bin", "node");
  const pkg = path.join(cacheDir, "node_modules", "@modelcontextprotocol", "conformance", "package.json");
  const cli = path.join(cacheDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
  const installed = async () => {
    if (!existsSync(node) || !existsSync(pkg)) return false;
    const { stdout } = await promisify(execFile)(node, ["-p", `require(${JSON.stringify(pkg)}).version`]);
    return stdout.trim() === version;
  };
  if (await installed()) return { node, cli };
  log(`installing node@${NODE_VERSION} and @modelcontextprotocol/conformance@${version} into ${cacheDir}`);
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
      `@modelcontextprotocol/conformance@${version}`,
    ],
    { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
  );
  if (!(await installed()))
    throw new Error(`npm installed node@${NODE_VERSION} and the conformance suite, but ${node} or ${pkg} is missing`);
  return { node, cli };
}
