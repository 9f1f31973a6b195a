/**
 * The container image, without a Docker engine (none runs here): deploy/Dockerfile is read, its deploy
 * command is run as its build stage runs it (into a temporary folder instead of /out), and the folder is
 * started as its ENTRYPOINT and CMD start it, in a process of its own against the harness's Postgres and
 * NATS. Checked: the Dockerfile's shape (two stages on a pinned Node 20 tag, a numeric non-root user, the
 * role runner as entry point), a deployed folder with production dependencies only, every role serving,
 * a tool call and the console through its gateway, nothing written into the folder (the image runs on a read-only root
 * filesystem), and a SIGTERM that drains and exits 0.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../deploy/local/infra.mjs";
import { startProcess } from "../harness/process.js";
import { repoRoot, serviceNames } from "../harness/stack.js";

const run = promisify(execFile);
const dockerfile = path.join(repoRoot, "deploy/Dockerfile");

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
async function instructions(): Promise<Array<{ op: string; args: string }>> {
  const text = (await readFile(dockerfile, "utf8")).replace(/\\\n/g, " ");
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(" ") };
    });
}

/** Every file below `dir` with its size and modification time. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const s = await stat(file);
    out.set(path.relative(dir, file), `${s.size}:${s.mtimeMs}`);
  }
  return out;
}

describe("the container image (deploy/Dockerfile), built and started without Docker", () => {
  let dir: string;
  let steps: Array<{ op: string; args: string }>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "toolport-image-"));
    steps = await instructions();
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("is two stages on one digest-pinned Node 24 image, runs as a numeric non-root user, and enters the role runner", () => {
    const from = steps.filter((s) => s.op === "FROM").map((s) => s.args.split(/\s+/)[0]!);
    expect(from).toHaveLength(2);
    for (const image of from) {
      // Node 24 LTS (Node 20 ended on 2026-04-30), the digest deciding which bytes.
      expect(image).toMatch(/^node:24(\.\d+\.\d+)?-[a-z-]+@sha256:[0-9a-f]{64}$/);
      expect(image).not.toMatch(/latest/);
    }
    expect(new Set(from).size, "build and runtime on the same base").toBe(1);
    const user = steps.filter((s) => s.op === "USER").at(-1)?.args;
    expect(user).toMatch(/^\d+:\d+$/);
    expect(Number(user!.split(":")[0])).toBeGreaterThan(0);
    expect(JSON.parse(steps.find((s) => s.op === "ENTRYPOINT")!.args)).toEqual(["node", "/app/dist/main.js"]);
    expect(JSON.parse(steps.find((s) => s.op === "CMD")!.args)).toEqual(["--roles=all"]);
    expect(steps.find((s) => s.op === "STOPSIGNAL")?.args).toBe("SIGTERM");
  });

  it("deploys production dependencies only, starts every role, answers a call, writes nothing, and drains on SIGTERM", async () => {
    // The build stage's deploy command, into the temporary folder (the test command has built dist/).
    const deploy = steps.find((s) => s.op === "RUN" && s.args.includes(" deploy "))!.args;
    expect(deploy).toMatch(/ \/out$/);
    const [bin, ...args] = deploy.replace(/ \/out$/, ` ${dir}`).split(/\s+/);
    await run(bin!, args, { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
    expect(existsSync(path.join(dir, "dist/main.js"))).toBe(true);
    const store = await readdir(path.join(dir, "node_modules/.pnpm"));
    // The console's build tools and libraries stay out: its built files are all the gateway serves.
    for (const dev of ["typescript@", "vitest@", "@biomejs+biome@", "tsx@", "vite@", "react-dom@"]) {
      expect(
        store.filter((p) => p.startsWith(dev)),
        dev,
      ).toEqual([]);
    }
    const before = await snapshot(dir);

    // The image's ENTRYPOINT and CMD, /app being the deployed folder; databases of this test only.
    const entry = JSON.parse(steps.find((s) => s.op === "ENTRYPOINT")!.args) as string[];
    const cmd = JSON.parse(steps.find((s) => s.op === "CMD")!.args) as string[];
    const tag = randomBytes(3).toString("hex");
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "production",
      DATABASE_URL: inject("pgUrl"),
      NATS_URL: inject("natsUrl"),
      NATS_NAMESPACE: `img${tag}`,
      LOG_LEVEL: "info",
    };
    const ports: Record<string, number> = {};
    for (const name of [...serviceNames, "gateway", "mcp"]) {
      ports[name] = await freePort();
      env[`${name.toUpperCase()}_PORT`] = String(ports[name]);
    }
    for (const s of serviceNames) {
      env[`${s.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[s]}`;
      const db = new URL(inject("pgUrl"));
      db.pathname = `/img${tag}_${s}`;
      env[`${s.toUpperCase()}_DATABASE_URL`] = db.toString();
    }
    const gateway = `http://127.0.0.1:${ports.gateway}`;
    env.GATEWAY_URL = gateway;
    env.PUBLIC_URL = gateway;
    const { child, output, exited } = startProcess(
      entry[0]!,
      [...entry.slice(1).map((a) => a.replace(/^\/app\//, `${dir}/`)), ...cmd],
      { cwd: dir, env },
    );
    try {
      await expect
        .poll(async () => (await fetch(`${gateway}/v1/health`).catch(() => undefined))?.status, {
          timeout: 60_000,
          interval: 250,
        })
        .toBe(200);
      const health = (await (await fetch(`${gateway}/v1/health`)).json()) as { services: Record<string, string> };
      expect(
        Object.values(health.services).every((s) => s === "serving"),
        JSON.stringify(health),
      ).toBe(true);

      const agent = await fetch(`${gateway}/v1/agents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: `image-${tag}`, operator_email: `image-${tag}@example.com` }),
      });
      expect(agent.status).toBe(200);
      const { api_key: key } = (await agent.json()) as { api_key: string };
      const called = await fetch(`${gateway}/v1/tools/call/text-word-count`, {
        method: "POST",
        headers: { "content-type": "application/json", "svc-api-key": key },
        body: JSON.stringify({ tool_input: { text: "one two three" } }),
      });
      expect(called.status).toBe(200);
      expect(((await called.json()) as { result: { words: number } }).result.words).toBe(3);

      // The console is in the image: its page and the script it loads.
      const page = await fetch(`${gateway}/console/keys`);
      expect(page.status).toBe(200);
      const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
      expect(script).toBeDefined();
      expect((await fetch(`${gateway}${script}`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited, output().slice(-2000)).toBe(0);
    expect(output()).toContain('"msg":"stopped"');
    // Nothing was written into the deployed folder while it ran.
    expect(await snapshot(dir)).toEqual(before);
  });
});
