/**
 * The README's Quickstart, run as a newcomer pastes it. The `sh` blocks under "## Quickstart" (a block
 * whose info string says `no-run` is shown, not run) go through one bash, in order, with `TOOLPORT`
 * pointing at a started stack and `MY_API` at the README's own one-file API (its `js` block, run here as
 * the real upstream). Each block must succeed, and what it prints must mean what the README says beside
 * it: a key, math_evaluate found and ready, the call's result, the stored result read back, the published
 * API's tool called through the upstream, and the `.mcp.json` the gateway writes, matching the snippet
 * the README shows and the `claude mcp add` line.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../harness/stack.js";
import { until } from "../harness/wait.js";
import { type ExecStack, startExecStack } from "./execution-support.js";

const run = promisify(execFile);

interface Block {
  /** The `###` heading the block is under. */
  step: string;
  /** The info string after the fence, e.g. `sh`, `sh no-run`, `json`. */
  info: string;
  code: string;
}

/** The fenced blocks of the README's "## Quickstart" section, each with the `###` heading above it. */
function quickstartBlocks(readme: string): Block[] {
  const start = readme.indexOf("\n## Quickstart\n");
  if (start < 0) throw new Error('README.md has no "## Quickstart" section');
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const blocks: Block[] = [];
  let step = "";
  const lines = section.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("### ")) step = line.slice(4).trim();
    const fence = /^```(\S.*)$/.exec(line);
    if (!fence) continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    blocks.push({ step, info: fence[1]!.trim(), code: `${body.join("\n")}\n` });
  }
  return blocks;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The shape of a JSON value: its keys, recursively, with leaves' types. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shape(v)]),
    );
  }
  return typeof value;
}

describe("the README's Quickstart, pasted into bash", () => {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const blocks = quickstartBlocks(readme);
  const runnable = blocks.filter((b) => b.info.split(/\s+/)[0] === "sh" && !b.info.includes("no-run"));
  let s: ExecStack;
  let api: ChildProcess;
  let apiUrl: string;
  let folder: string;

  beforeAll(async () => {
    folder = mkdtempSync(path.join(tmpdir(), "toolport-readme-"));
    // The README's one-file API is the upstream: the code block saved as the README says, run with node.
    const hello = blocks.find((b) => b.info === "js" && b.code.includes("hello-api.mjs"));
    if (!hello) throw new Error("the Quickstart has no js block of hello-api.mjs");
    writeFileSync(path.join(folder, "hello-api.mjs"), hello.code);
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = spawn(process.execPath, ["hello-api.mjs"], {
      cwd: folder,
      env: { ...process.env, PORT: String(port) },
      stdio: "ignore",
    });
    // As the README says: Toolport started with the API's address allowed.
    s = await startExecStack([`127.0.0.1:${port}`]);
    // The builtin tools are searchable once the catalog has indexed them (a fresh catalog, seconds).
    await until(
      "math_evaluate in the public search",
      async () => {
        const res = await fetch(`${s.stack.gatewayUrl}/v1/tools/public/search?query=math_evaluate`);
        const found = (await res.json()) as { name: string }[];
        return Array.isArray(found) && found.some((t) => t.name === "math_evaluate");
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await until("the README's API to answer", async () => (await fetch(`${apiUrl}/greet?name=x`).catch(() => null))?.ok === true);
  });
  afterAll(async () => {
    api?.kill();
    await s?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it("finds the Quickstart's steps in the README, with the two set-up commands at the very top", () => {
    expect(readme.startsWith("# Toolport\n\n```sh\nnpm start\nnpm test\n```\n")).toBe(true);
    expect(runnable.map((b) => b.step)).toEqual([
      "1. Register an agent",
      "2. Find a tool",
      "3. Call it",
      "4. Read the result back",
      "5. Publish your own API and call it",
      "6. Connect Claude Code or another MCP client",
    ]);
  });

  it("runs every step against a started stack and prints what the README says", async () => {
    // One bash for all blocks, as in one terminal: variables carry from step to step. A marker line
    // before each block splits the output; `set -e` stops at the first failing command.
    const script = [
      "set -euo pipefail",
      ...runnable.flatMap((b, i) => [`echo '@@ block ${i} @@'`, b.code]),
      "echo '@@ done @@'",
    ].join("\n");
    const result = await run("bash", ["-c", script], {
      cwd: folder,
      env: { ...process.env, TOOLPORT: s.stack.gatewayUrl, MY_API: apiUrl },
    }).catch((e: { stdout: string; stderr: string; code: number }) => {
      const reached = [...e.stdout.matchAll(/@@ block (\d+) @@/g)].at(-1)?.[1];
      const step = reached === undefined ? "before the first step" : runnable[Number(reached)]!.step;
      throw new Error(`the Quickstart failed at "${step}" (exit ${e.code}):\n${e.stdout}\n${e.stderr}`);
    });
    expect(result.stdout).toContain("@@ done @@");
    const outputs = result.stdout
      .split(/^@@ (?:block \d+|done) @@\n/m)
      .slice(1, runnable.length + 1)
      .map((o) => o.trimEnd());
    const output = (step: string) => outputs[runnable.findIndex((b) => b.step.startsWith(step))]!;
    const code = (step: string) => runnable.find((b) => b.step.startsWith(step))!.code;

    // 1. The key, as the comment describes it.
    const key = output("1.");
    expect(key).toMatch(/^tp_[A-Za-z0-9]{43}$/);

    // 2. One line per tool; math_evaluate among them, ready.
    const found = output("2.").split("\n");
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(5);
    const line = found.find((l) => l.startsWith("math_evaluate "));
    expect(line).toMatch(/^math_evaluate \(ready\): [0-9a-f-]{36}$/);
    const toolId = line!.split(": ")[1]!;

    // 3. The call's result, exactly as the README's comment shows it.
    const called = output("3.");
    expect(JSON.parse(called)).toEqual({ expression: "2 * (3 + 4)^2", result: 98 });
    expect(code("3.")).toContain(`# ${called}`);

    // 4. The stored result, read back by path, as the comment shows it.
    expect(output("4.")).toBe("success 98");
    expect(code("4.")).toContain("# success 98");

    // 5. The published service's one tool, then its call through the README's own API.
    const [published, greeted, ...rest] = output("5.").split("\n");
    expect(rest).toEqual([]);
    expect(published).toMatch(/^greet: [0-9a-f-]{36}$/);
    expect(JSON.parse(greeted!)).toEqual({ greeting: "Hello, Ada!" });
    expect(code("5.")).toContain(`# ${greeted}`);
    const greetId = published!.slice("greet: ".length);
    // The agent's own service holds it, and the earlier call ran the tool found in step 2.
    const tool = await s.call("GET", `/tools/${greetId}`, { key });
    expect(tool.status).toBe(200);
    expect(tool.body.name).toBe("greet");
    const math = await s.call("GET", `/tools/${toolId}`, { key });
    expect(math.body.name).toBe("math_evaluate");

    // 6. The .mcp.json the step wrote is the gateway's, and the README's snippet has its shape.
    const written = JSON.parse(output("6."));
    expect(JSON.parse(readFileSync(path.join(folder, ".mcp.json"), "utf8"))).toEqual(written);
    const route = await s.call("GET", "/coding-client/mcp-json", { key });
    expect(route.status).toBe(200);
    expect(written).toEqual(route.body.mcp_json);
    const snippet = blocks.find((b) => b.info === "json" && b.step.startsWith("6."));
    if (!snippet) throw new Error("step 6 shows no .mcp.json snippet");
    const shown = JSON.parse(snippet.code);
    expect(shape(shown)).toEqual(shape(written));
    const [shownServer, writtenServer] = [shown.mcpServers.danube, written.mcpServers.danube];
    expect(shownServer.type).toBe(writtenServer.type);
    expect(new URL(shownServer.url).pathname).toBe(new URL(writtenServer.url).pathname);
    expect(shownServer.headers["svc-api-key"]).toBe(writtenServer.headers["svc-api-key"]);
    // The README names the address `npm start` gives the MCP server.
    expect(shownServer.url).toBe("http://localhost:8090/mcp");
  });

  it("shows the same `claude mcp add` line the gateway gives, without the organization header", async () => {
    const shown = blocks.find((b) => b.info.includes("no-run") && b.code.includes("claude mcp add"));
    if (!shown) throw new Error("step 6 shows no `claude mcp add` line");
    const command = shown.code.replace(/\\\n\s*/g, "").trim();
    const agent = await s.call("POST", "/agents", { body: { name: "readme-mcp", operator_email: "readme-mcp@example.com" } });
    const route = await s.call("GET", "/coding-client/mcp-json", { key: agent.body.api_key });
    const given = (route.body.instructions as string)
      .split("\n")
      .find((l) => l.startsWith("claude mcp add"))!
      .replace(s.stack.env.MCP_PUBLIC_URL!, "http://localhost:8090/mcp")
      .replace(/ --header 'svc-org-id: [^']*'/, "");
    expect(command).toBe(given);
  });
});
