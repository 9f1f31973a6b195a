/**
 * The MCP server driven by a client Toolport did not write: the MCP Inspector's command-line mode
 * (`mcp-inspector --cli`, from @modelcontextprotocol/inspector, a devDependency of this package) over
 * Streamable HTTP, with the caller's key in the `svc-api-key` header, against a real stack. Each run
 * connects, sends one request, prints the result as JSON and exits, so what it prints is what a
 * third-party client made of our answers.
 *
 * The inspector runs from node_modules with this Node (never through npx, which could download it) and
 * reaches only the stack on loopback. Its package declares Node >= 22.19; its CLI mode works on the
 * Node 20 this repository supports, and a run that fails here fails the test with the inspector's own
 * output, rather than being skipped.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentKey, type ExecStack, registerAgent, startExecStack } from "./execution-support.js";
import { MCP_TOOL_NAMES } from "./mcp-support.js";

/** The inspector's launcher, as its package.json `bin` names it, or why it cannot be found. */
async function inspectorBin(): Promise<{ bin: string } | { missing: string }> {
  try {
    const manifest = createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector/package.json");
    const pkg = JSON.parse(await readFile(manifest, "utf8")) as { bin: Record<string, string> };
    return { bin: path.join(path.dirname(manifest), pkg.bin["mcp-inspector"] as string) };
  } catch (err) {
    return { missing: `@modelcontextprotocol/inspector is not installed in test/ (pnpm install): ${(err as Error).message}` };
  }
}

interface InspectorRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

let s: ExecStack;
let agent: AgentKey;
let home: string;
let inspector: { bin: string } | { missing: string };

/** One inspector CLI run against the stack's /mcp with the agent's key; `args` name the method and its flags. */
function runInspector(args: string[]): Promise<InspectorRun> {
  if ("missing" in inspector) throw new Error(inspector.missing);
  const argv = [
    inspector.bin,
    "--cli",
    s.stack.mcpUrl,
    "--transport",
    "http",
    "--header",
    `svc-api-key: ${agent.key}`,
    "--format",
    "json",
    "--quiet",
    ...args,
  ];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      argv,
      // Its own home: the inspector keeps a catalog and client settings under ~/.mcp-inspector.
      { env: { ...process.env, HOME: home }, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
        resolve({ code, stdout, stderr: err && !stderr ? String(err.message) : stderr });
      },
    );
  });
}

/** The `result` of a successful `--format json` run; fails with everything the inspector said otherwise. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
function resultOf(run: InspectorRun): any {
  const said = `inspector exited ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
  expect(run.code, said).toBe(0);
  let parsed: { result?: unknown };
  try {
    parsed = JSON.parse(run.stdout);
  } catch {
    throw new Error(`inspector printed no JSON object\n${said}`);
  }
  expect(parsed.result, said).toBeDefined();
  return parsed.result;
}

describe("the MCP Inspector's CLI against /mcp", () => {
  beforeAll(async () => {
    inspector = await inspectorBin();
    home = await mkdtemp(path.join(os.tmpdir(), "toolport-inspector-"));
    s = await startExecStack([], {}, ["catalog", "execution", "billing", "identity", "gateway", "mcp-server"]);
    agent = await registerAgent(s);
  });
  afterAll(async () => {
    await s?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("is installed where the test can run it without a download", () => {
    expect("missing" in inspector ? inspector.missing : "", "the inspector is needed for this file's tests").toBe("");
  });

  it("tools/list names the eleven tools", async () => {
    const result = resultOf(await runInspector(["--method", "tools/list"]));
    const names = (result.tools as { name: string }[]).map((t) => t.name);
    expect([...names].sort()).toEqual([...MCP_TOOL_NAMES].sort());
    for (const tool of result.tools) expect(tool.description, tool.name).toMatch(/\S/);
  });

  it("tools/call search_tools finds the built-in word_count, in structuredContent and in its text block", async () => {
    const result = resultOf(
      await runInspector([
        "--method",
        "tools/call",
        "--tool-name",
        "search_tools",
        "--tool-arg",
        "query=count words",
        "--tool-arg",
        "limit=5",
      ]),
    );
    expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
    const tools = result.structuredContent.tools as { id: string; name: string }[];
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.length).toBeLessThanOrEqual(5);
    expect(tools.map((t) => t.name)).toContain("word_count");
    const text = result.content.find((c: { type: string }) => c.type === "text");
    expect(JSON.parse(text.text)).toEqual(result.structuredContent);
  });
});
