/**
 * @toolport/client as someone outside the repository gets it: `npm pack` of gateway/client (its prepack
 * builds dist/), installed with npm into an empty folder, then a TypeScript script there, typechecked
 * against the package's published types, compiled and run with Node against a running gateway: register,
 * search, call a built-in tool, read its result back, page through a list.
 *
 * The install is offline: the client's own dependencies (openapi-fetch and what it needs) are packed
 * from the workspace's copies and installed beside the client's tarball with `npm install --offline`, so
 * the test needs no registry, and a dependency that only the workspace could resolve would fail it.
 */
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../harness/stack.js";
import { until } from "../harness/wait.js";
import { type ExecStack, startExecStack } from "./execution-support.js";

const run = promisify(execFile);
const clientDir = path.join(repoRoot, "gateway/client");

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as Manifest;

/** Where Node would find package `name` required from `fromDir` (pnpm's layout: symlinks into .pnpm). */
function packageDir(fromDir: string, name: string): string {
  for (let dir = realpathSync(fromDir); ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== "node_modules") {
      const candidate = path.join(dir, "node_modules", name);
      if (existsSync(path.join(candidate, "package.json"))) return realpathSync(candidate);
    }
    if (path.dirname(dir) === dir) throw new Error(`${name} is not installed for ${fromDir}`);
  }
}

/** The runtime dependencies of the package in `dir`, transitively: each one's folder, once. */
function runtimeDependencies(dir: string, found = new Map<string, string>()): Map<string, string> {
  for (const name of Object.keys(manifest(dir).dependencies ?? {})) {
    const depDir = packageDir(dir, name);
    const key = `${name}@${manifest(depDir).version}`;
    if (found.has(key)) continue;
    found.set(key, depDir);
    runtimeDependencies(depDir, found);
  }
  return found;
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run("npm", args, {
    cwd,
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  return stdout;
}

/** The outsider's script: only the package's public exports, typed by its published declarations. */
const SCRIPT = `import { allPages, createToolportClient, type Tool } from "@toolport/client";

const baseUrl = process.env.TOOLPORT!;
const anonymous = createToolportClient({ baseUrl });
const registered = await anonymous.POST("/v1/agents", {
  body: { name: "packed-client", operator_email: "packed-client@example.com" },
});
if (registered.error) throw new Error(\`register: \${registered.error.error.code}\`);
const toolport = createToolportClient({ baseUrl, apiKey: registered.data.api_key });

const search = await toolport.GET("/v1/tools/search", { params: { query: { query: "calculate an arithmetic expression" } } });
if (search.error) throw new Error(\`search: \${search.error.error.code}\`);
const found = search.data.find((t) => t.name === "math_evaluate");
if (!found) throw new Error(\`search found \${search.data.map((t) => t.name).join(", ")}\`);

const called = await toolport.POST("/v1/tools/call/{tool_id}", {
  params: { path: { tool_id: found.id } },
  body: { tool_input: { expression: "2 * (3 + 4)" } },
});
if (called.error) throw new Error(\`call: \${called.error.error.code}\`);

const stored = await toolport.GET("/v1/tools/executions/{execution_id}/result", {
  params: { path: { execution_id: called.data.execution_id } },
});
if (stored.error) throw new Error(\`read back: \${stored.error.error.code}\`);
const part = await toolport.GET("/v1/tools/executions/{execution_id}/result", {
  params: { path: { execution_id: called.data.execution_id }, query: { path: "result" } },
});

const refused = await toolport.GET("/v1/tools/{tool_id}", { params: { path: { tool_id: "no-such-tool" } } });

const services = await allPages((cursor?: string) =>
  anonymous.GET("/v1/services/public", { params: { query: { limit: 1, cursor } } }),
);
const tool: Tool = found;

console.log(
  JSON.stringify({
    agentId: registered.data.agent_id,
    toolId: tool.id,
    called: { success: called.data.success, executionId: called.data.execution_id, result: called.data.result },
    stored: { status: stored.data.status, result: stored.data.result },
    part: part.data?.result,
    refused: { status: refused.response.status, code: refused.error?.error.code },
    services: services.data?.map((s) => s.name),
  }),
);
`;

describe("@toolport/client packed and installed outside the workspace", () => {
  let s: ExecStack;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "toolport-client-pack-"));
    s = await startExecStack([]);
    // The builtin tools are searchable once the catalog has indexed them.
    await until(
      "math_evaluate in the public search",
      async () => {
        const res = await fetch(`${s.stack.gatewayUrl}/v1/tools/public/search?query=math_evaluate`);
        const found = (await res.json()) as { name: string }[];
        return Array.isArray(found) && found.some((t) => t.name === "math_evaluate");
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  });
  afterAll(async () => {
    await s?.stop();
    if (work && !process.env.KEEP_PACK) rmSync(work, { recursive: true, force: true });
  });

  it("packs with its metadata and nothing of the workspace", async () => {
    const pkg = JSON.parse(readFileSync(path.join(clientDir, "package.json"), "utf8"));
    expect(pkg.private).toBeUndefined();
    expect(pkg).toMatchObject({ name: "@toolport/client", types: "./dist/index.d.ts", license: expect.any(String) });
    for (const spec of Object.values(pkg.dependencies as Record<string, string>)) {
      expect(spec).toMatch(/^\d+\.\d+\.\d+$/); // exact registry versions: no workspace: or file: specs
    }
    const listed = JSON.parse(await npm(["pack", "--dry-run", "--json"], clientDir)) as { files: { path: string }[] }[];
    const files = listed[0]!.files.map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining(["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts", "dist/schema.d.ts"]),
    );
    expect(files.filter((f) => f.includes(".test."))).toEqual([]);
  });

  it("installs from its tarball offline and registers, searches, calls, reads back and pages", async () => {
    const tarballs = path.join(work, "tarballs");
    const app = path.join(work, "app");
    for (const dir of [tarballs, app]) mkdirSync(dir, { recursive: true });
    await npm(["pack", "--pack-destination", tarballs], clientDir);
    // Packed from a plain copy: pnpm's store hard-links files of equal content (openapi-typescript-helpers'
    // three declaration files are one), and npm drops hard-link entries when it unpacks a tarball.
    for (const [key, depDir] of runtimeDependencies(clientDir)) {
      const copy = path.join(work, "copies", key.replace(/[/@]/g, "_"));
      cpSync(depDir, copy, { recursive: true, dereference: true });
      await npm(["pack", copy, "--pack-destination", tarballs], work);
    }
    const packed = readdirSync(tarballs);
    expect(packed).toContain("toolport-client-0.1.0.tgz");

    writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "outsider", private: true, type: "module" }));
    await npm(["install", "--offline", "--no-audit", "--no-fund", ...packed.map((f) => path.join(tarballs, f))], app);
    expect(existsSync(path.join(app, "node_modules/@toolport/client/dist/index.js"))).toBe(true);

    // Typechecked against the installed package's own declarations (the exports' `types`), then run.
    writeFileSync(path.join(app, "main.ts"), SCRIPT);
    const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc");
    await run(
      process.execPath,
      [
        tsc,
        "--strict",
        "--module",
        "nodenext",
        "--target",
        "es2022",
        "--types",
        "node",
        "--typeRoots",
        path.join(repoRoot, "node_modules/@types"),
        "main.ts",
      ],
      { cwd: app },
    ).catch((e: { stdout?: string }) => {
      throw new Error(`the script does not typecheck against the packed client:\n${e.stdout}`);
    });
    const { stdout } = await run(process.execPath, ["main.js"], {
      cwd: app,
      env: { ...process.env, TOOLPORT: s.stack.gatewayUrl },
    });
    const out = JSON.parse(stdout) as {
      agentId: string;
      toolId: string;
      called: { success: boolean; executionId: string; result: unknown };
      stored: { status: string; result: unknown };
      part: unknown;
      refused: { status: number; code: string };
      services: string[];
    };

    expect(out.called).toMatchObject({ success: true, result: { expression: "2 * (3 + 4)", result: 14 } });
    expect(out.stored).toEqual({ status: "success", result: out.called.result });
    expect(out.part).toBe(14);
    expect(out.refused).toEqual({ status: 404, code: "tool_not_found" });
    // Paged one service at a time: every public service, each once (the builtins are three).
    expect(out.services.length).toBeGreaterThanOrEqual(3);
    expect(new Set(out.services).size).toBe(out.services.length);

    // The tool the script found and ran is the gateway's math_evaluate.
    const listed = await s.call("GET", "/tools/public/search?query=math_evaluate");
    expect(listed.body.map((t: { id: string }) => t.id)).toContain(out.toolId);
  });
});
