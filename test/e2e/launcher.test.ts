/**
 * The launcher (`npm start` without its install step): from stopped to every health green with its
 * own Postgres and NATS under a data folder, then Ctrl-C stops everything and leaves no process. In
 * both layouts: one process with every role (the default) and a process per role (`--per-role`).
 * In the default layout the Toolport process is also killed (SIGKILL, as the kernel's OOM killer
 * does): the launcher says why it ended and starts it again while Postgres and NATS stay up, and the
 * process sizes its heap from TOOLPORT_MEMORY_MB, which /metrics shows (toolport_heap_limit_bytes).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
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
    { layout: "one process with every role", args: [], nodeProcesses: 1, crash: true },
    { layout: "a process per role", args: ["--per-role"], nodeProcesses: 8, crash: false },
  ])(
    "$layout: starts to green health, then stops everything on Ctrl-C",
    { timeout: 180_000 },
    async ({ args, nodeProcesses, crash }) => {
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
      dataDir = await mkdtemp(path.join(os.tmpdir(), "toolport-launcher-"));
      // 1024 MiB given: the heap gets three quarters (services/host heap-limit.ts).
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        TOOLPORT_DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        TOOLPORT_MEMORY_MB: "1024",
      };
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
      // Its Postgres runs with the launcher's settings (start.mjs POSTGRES_SETTINGS): autovacuum every 5 minutes.
      const db = new pg.Client({ connectionString: `postgres://toolport@127.0.0.1:${env.PGPORT}/postgres` });
      await db.connect();
      try {
        expect((await db.query("SHOW autovacuum_naptime")).rows[0].autovacuum_naptime).toBe("5min");
      } finally {
        await db.end();
      }

      if (crash) {
        // The heap limit set from the 1024 MiB given: 768 MiB of old space, plus V8's young generation (about
        // 100 MiB on Node 20, 190 MiB on Node 24), below the memory given (unset, V8 takes several GiB here).
        const scrape = await (await fetch(`http://127.0.0.1:${env.GATEWAY_PORT}/metrics`)).text();
        const limit = Number(/^toolport_heap_limit_bytes (\d+)/m.exec(scrape)?.[1]);
        expect(limit / 2 ** 20).toBeGreaterThanOrEqual(768);
        expect(limit / 2 ** 20).toBeLessThan(1024);
        expect(scrape).toMatch(/^toolport_heap_used_bytes \d+/m);

        // Kill the Toolport process (the last pid; Postgres and NATS come first), that process alone: what
        // it started (its heap-sized child) the launcher must clean up, or the restart finds its ports taken.
        const toolport = pids.at(-1) as number;
        process.kill(toolport, "SIGKILL");
        const restarted = Date.now() + 60_000;
        while (!/^restarted toolport: pid \d+$/m.test(output)) {
          if (launcher.exitCode !== null || Date.now() > restarted)
            throw new Error(`launcher did not restart toolport:\n${output}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(output).toMatch(/toolport exited unexpectedly: killed by SIGKILL/);
        expect(output).toMatch(/restarting toolport in 1s \(restart 1; crash 1 of 5 in a row before giving up\)/);
        // Postgres and NATS were never stopped; the new process serves again.
        expect(pids.slice(0, 2).every(alive)).toBe(true);
        expect(alive(toolport)).toBe(false);
        await expect
          .poll(async () => (await fetch(`http://127.0.0.1:${env.GATEWAY_PORT}/v1/health`).catch(() => undefined))?.status, {
            timeout: 60_000,
            interval: 250,
          })
          .toBe(200);
        const newPid = Number(/^restarted toolport: pid (\d+)$/m.exec(output)?.[1]);
        expect(newPid).not.toBe(toolport);
        pids.push(newPid);
      }

      launcher.kill("SIGINT");
      expect(await exited).toBe(0);
      // Give the kernel a moment to reap, then nothing we started may be left.
      await new Promise((r) => setTimeout(r, 200));
      expect(pids.filter(alive)).toEqual([]);
    },
  );

  it("gives up after repeated fast crashes, saying why, and stops Postgres and NATS", { timeout: 120_000 }, async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    dataDir = await mkdtemp(path.join(os.tmpdir(), "toolport-launcher-"));
    // A setting Toolport refuses at start: it exits 2 every time, at once.
    const env: NodeJS.ProcessEnv = { ...process.env, TOOLPORT_DATA_DIR: dataDir, LOG_LEVEL: "warn", TOOLPORT_MEMORY_MB: "lots" };
    delete env.DATABASE_URL;
    delete env.NATS_URL;
    await assignLauncherPorts(env);
    let output = "";
    launcher = spawn(process.execPath, ["deploy/local/start.mjs", "--no-install"], {
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
    const code = await new Promise<number | null>((resolve) => launcher?.once("exit", (c) => resolve(c)));
    expect(code, output).toBe(1);
    expect(output).toContain("TOOLPORT_MEMORY_MB must be a whole number");
    // Backoff doubling between the crashes, then the verdict.
    for (const wait of [1, 2, 4, 8]) expect(output).toContain(`restarting toolport in ${wait}s`);
    expect(output).toMatch(/toolport exited unexpectedly: exit code 2/);
    expect(output).toMatch(/toolport crashed 5 times in a row, each within 60s of starting: giving up/);
    expect(output).not.toContain("restarting toolport in 16s");
    expect(output).toMatch(/^stopped$/m);
  });
});
