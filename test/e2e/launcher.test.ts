/**
 * The launcher (`npm start` without its install step): from stopped to every health green with its
 * own Postgres and NATS under a data folder, then Ctrl-C stops everything and leaves no process. In
 * both layouts: one process with every role (the default) and a process per role (`--per-role`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { assignLauncherPorts } from "../../deploy/local/infra.mjs";
import { repoRoot } from "../harness/stack.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("local launcher", () => {
  let launcher: ChildProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    if (launcher && launcher.exitCode === null) launcher.kill("SIGKILL");
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it.each([
    { layout: "one process with every role", args: [], nodeProcesses: 1 },
    { layout: "a process per role", args: ["--per-role"], nodeProcesses: 8 },
  ])(
    "$layout: starts to green health, then stops everything on Ctrl-C",
    { timeout: 120_000 },
    async ({ args, nodeProcesses }) => {
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
      dataDir = await mkdtemp(path.join(os.tmpdir(), "toolport-launcher-"));
      const env: NodeJS.ProcessEnv = { ...process.env, TOOLPORT_DATA_DIR: dataDir, LOG_LEVEL: "warn" };
      // The launcher must start its own servers here, not use the test run's.
      delete env.DATABASE_URL;
      delete env.NATS_URL;
      await assignLauncherPorts(env);

      let output = "";
      launcher = spawn(process.execPath, ["deploy/local/start.mjs", "--no-install", ...args], {
        cwd: repoRoot,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      launcher.stdout?.on("data", (c: Buffer) => {
        output += c.toString();
      });
      launcher.stderr?.on("data", (c: Buffer) => {
        output += c.toString();
      });
      const exited = new Promise<number | null>((resolve) => launcher?.once("exit", (code) => resolve(code)));

      const deadline = Date.now() + 90_000;
      while (!/^pids: [\d,]+$/m.test(output)) {
        if (launcher.exitCode !== null || Date.now() > deadline) throw new Error(`launcher did not become ready:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(output).toMatch(/ready in \d+(\.\d+)?s/);
      const pids = (/^pids: ([\d,]+)$/m.exec(output)?.[1] ?? "").split(",").map(Number);
      // The Node processes, Postgres and NATS.
      expect(pids.length).toBe(nodeProcesses + 2);
      expect(pids.every(alive)).toBe(true);

      const health = await fetch(`http://127.0.0.1:${env.GATEWAY_PORT}/v1/health`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { status: string }).status).toBe("ok");
      expect((await fetch(`http://127.0.0.1:${env.MCP_PORT}/mcp/health`)).status).toBe(200);
      // It prints where to find things.
      expect(output).toContain(`http://localhost:${env.GATEWAY_PORT}/v1`);
      expect(output).toContain(path.join(dataDir, "logs"));

      launcher.kill("SIGINT");
      expect(await exited).toBe(0);
      // Give the kernel a moment to reap, then nothing we started may be left.
      await new Promise((r) => setTimeout(r, 200));
      expect(pids.filter(alive)).toEqual([]);
    },
  );
});
