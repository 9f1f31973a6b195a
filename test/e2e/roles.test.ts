/**
 * Roles (DESIGN.md "Roles"): one process can host any set of roles, and co-hosted roles call each other
 * in process while the others are reached over gRPC. Two layouts beyond the two the suite runs in:
 * every role in one process, checked to really be one process (health says where each role runs, logs
 * name their role); and a mixed one, gateway + execution + identity in one process with catalog and
 * billing each in a process of their own, where a tool call crosses both kinds of boundary.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createPool } from "@toolport/kit/pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../deploy/local/infra.mjs";
import { gatewayClient } from "../harness/http.js";
import { startProcess } from "../harness/process.js";
import { repoRoot, type Stack, startStack } from "../harness/stack.js";

const stacks: Stack[] = [];
const hosts: ChildProcess[] = [];

afterAll(async () => {
  await Promise.all(
    hosts.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
  await Promise.all(stacks.map((s) => s.stopAll()));
});

/** Registers an agent and runs the built-in word_count through the gateway; returns the call's reply. */
async function wordCount(call: ReturnType<typeof gatewayClient>) {
  const agent = await call("POST", "/agents", { body: { name: "roles-agent", operator_email: "roles@example.com" } });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  const tools = await call("GET", "/tools", { key: agent.body.api_key });
  const tool = tools.body.find((t: { slug: string | null }) => t.slug === "text-word-count");
  expect(tool).toBeDefined();
  return call("POST", `/tools/call/${tool.id}`, { key: agent.body.api_key, body: { tool_input: { text: "one two three" } } });
}

describe("roles", () => {
  it("hosts every role in one process: health says so, each log line names its role, calls work", async () => {
    const stack = await startStack(
      ["catalog", "execution", "billing", "identity", "content", "webhooks", "gateway"],
      {},
      { layout: "one-process" },
    );
    stacks.push(stack);
    const call = gatewayClient(stack.gatewayUrl);
    const health = await call("GET", "/health");
    expect(health.status).toBe(200);
    const pids = new Set<number>();
    for (const [name, role] of Object.entries(
      health.body.roles as Record<string, { status: string; runs: string; pid: number }>,
    )) {
      expect(role.status, name).toBe("serving");
      expect(role.runs, name).toBe("in_process");
      pids.add(role.pid);
    }
    expect(Object.keys(health.body.roles).sort()).toEqual([
      "billing",
      "catalog",
      "content",
      "execution",
      "gateway",
      "identity",
      "webhooks",
    ]);
    expect(pids.size).toBe(1);

    const res = await wordCount(call);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.success).toBe(true);

    const log = await readFile(path.join(stack.logDir, "toolport.log"), "utf8");
    const roles = new Set(
      log
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => (JSON.parse(line) as { service?: string }).service),
    );
    for (const name of ["catalog", "execution", "billing", "identity", "content", "webhooks", "gateway"])
      expect(roles).toContain(name);
    expect(log).toMatch(/"msg":"toolport listening: catalog, execution, billing, identity, content, webhooks, gateway"/);
  });

  it("mixes: gateway, execution and identity in one process call catalog and billing in theirs", async () => {
    const stack = await startStack(["catalog", "billing"], {}, { layout: "per-role" });
    stacks.push(stack);
    const ports = { gateway: await freePort(), execution: await freePort(), identity: await freePort() };
    const env = {
      ...stack.env,
      GATEWAY_PORT: String(ports.gateway),
      EXECUTION_PORT: String(ports.execution),
      IDENTITY_PORT: String(ports.identity),
      EXECUTION_URL: `http://127.0.0.1:${ports.execution}`,
      IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
      PUBLIC_URL: `http://127.0.0.1:${ports.gateway}`,
    };
    const logFile = path.join(stack.logDir, "mixed.log");
    const child = spawn(
      process.execPath,
      [path.join(repoRoot, "services/host/dist/main.js"), "--roles=gateway,execution,identity"],
      {
        cwd: repoRoot,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    hosts.push(child);
    const out = createWriteStream(logFile);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    let seen = "";
    child.stdout?.on("data", (c: Buffer) => {
      seen += c.toString();
    });
    const deadline = Date.now() + 30_000;
    while (!seen.includes("toolport listening")) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`host did not start:\n${await readFile(logFile, "utf8")}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const call = gatewayClient(`http://127.0.0.1:${ports.gateway}`);
    const health = await call("GET", "/health");
    const roles = health.body.roles as Record<string, { status: string; runs: string; pid?: number }>;
    expect(roles.execution).toEqual({ status: "serving", runs: "in_process", pid: child.pid });
    expect(roles.identity).toEqual({ status: "serving", runs: "in_process", pid: child.pid });
    expect(roles.gateway).toEqual({ status: "serving", runs: "in_process", pid: child.pid });
    expect(roles.catalog).toEqual({ status: "serving", runs: `127.0.0.1:${stack.ports.catalog}` });
    expect(roles.billing).toEqual({ status: "serving", runs: `127.0.0.1:${stack.ports.billing}` });
    // content and webhooks run nowhere here: reported, not hidden.
    expect(roles.content?.status).toBe("unreachable");
    expect(health.status).toBe(503);

    // Registration (identity in process -> billing over gRPC) and a call (execution in process -> catalog
    // and billing over gRPC) work across both kinds of boundary.
    const res = await wordCount(call);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.success).toBe(true);
  });

  it("--migrate creates and migrates the named services' databases, then exits 0 without serving", async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const pgUrl = inject("pgUrl");
    const database = (service: string) => {
      const url = new URL(pgUrl);
      url.pathname = `/m${tag}_${service}`;
      return url.toString();
    };
    const port = await freePort();
    const { output, exited } = startProcess(
      process.execPath,
      [path.join(repoRoot, "services/host/dist/main.js"), "--roles=content,gateway", "--migrate"],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          DATABASE_URL: pgUrl,
          NATS_URL: "nats://127.0.0.1:1",
          CONTENT_DATABASE_URL: database("content"),
          CONTENT_PORT: String(port),
          LOG_LEVEL: "info",
        },
      },
    );
    const code = await exited;
    // NATS is unreachable on purpose: migrating needs only Postgres.
    expect(code, output()).toBe(0);
    expect(output()).toContain('"migration":"content/0002_workflows.sql"');
    expect(output()).toContain("migrations applied");
    expect(output()).not.toContain("listening");
    const pool = createPool(database("content"), 1);
    try {
      const { rows } = await pool.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
      expect(rows.map((r) => r.name)).toEqual(
        expect.arrayContaining(["content/0001_content.sql", "content/0002_workflows.sql", "kit/0001_events.sql"]),
      );
    } finally {
      await pool.end();
    }
  });
});
