/**
 * SIGTERM during a slow request: the request finishes with its answer, new calls are refused, and
 * the process exits 0 after closing its pool and NATS connection.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../../../deploy/local/infra.mjs";

const fixture = fileURLToPath(new URL("./fixtures/slow-service.ts", import.meta.url));

describe("graceful shutdown", () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
  });

  it("lets an in-flight call finish after SIGTERM, then exits 0", async () => {
    const port = await freePort();
    const db = new URL(inject("pgUrl"));
    db.pathname = `/t_slow_${randomBytes(3).toString("hex")}`;
    let output = "";
    child = spawn(process.execPath, ["--conditions=@toolport/source", "--import", "tsx", fixture], {
      env: { ...process.env, PORT: String(port), SLOW_DATABASE_URL: db.toString(), NATS_URL: inject("natsUrl"), SLOW_MS: "1500" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on("data", (c: Buffer) => {
      output += c.toString();
    });
    const deadline = Date.now() + 30_000;
    while (!output.includes("slow service listening")) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`fixture did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));

    const client = createClient(CatalogService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
    const started = Date.now();
    const slow = client.listPublicServices({});
    await new Promise((r) => setTimeout(r, 300));
    child.kill("SIGTERM");

    // The call that was running when the signal came still gets its answer.
    await expect(slow).resolves.toBeDefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);

    // A new connection after the signal is refused: the server no longer accepts.
    const fresh = createClient(CatalogService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
    const late = await fresh.listPublicServices({}, { timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(ConnectError);
    expect([Code.Unavailable, Code.Unknown, Code.Internal, Code.DeadlineExceeded]).toContain((late as ConnectError).code);

    expect(await exited).toBe(0);
    expect(output).toContain('"msg":"stopped"');
  });
});
