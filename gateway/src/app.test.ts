/**
 * The order of the gateway's middleware, on the application createApp builds: error shaping is the
 * first, so a failure of the middleware outside the routes (here: encoding an answer) still leaves in
 * the error shape and is logged with its request id, and the access log and metrics record the status
 * an error is answered with, not the one Koa held before it was shaped.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@toolport/kit/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "./app.js";
import { loadGatewayConfig } from "./config.js";
import { createAppDeps } from "./deps.js";

const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const log = createLogger("gateway-test", "info");
  const capture = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
    lines.push({ level, obj, msg: msg ?? "" });
  };
  log.info = capture("info") as typeof log.info;
  log.error = capture("error") as typeof log.error;
  const app = createApp(createAppDeps(loadGatewayConfig({}), log));
  // After every route: an answer the JSON encoder (middleware/json-bytes.ts, near the top) cannot write.
  app.use(async (ctx, next) => {
    if (ctx.path !== "/unencodable") return next();
    ctx.body = { amount: 1n };
  });
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("createApp", () => {
  it("answers a failure outside the routes in the error shape and logs it once with the request id", async () => {
    const res = await fetch(`${base}/unencodable`, { headers: { "x-request-id": "req-unencodable-1" } });
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-request-id")).toBe("req-unencodable-1");
    expect(await res.json()).toEqual({
      detail: "internal error",
      error: { code: "internal_error", message: "internal error", details: {} },
    });
    const errors = lines.filter((l) => l.level === "error" && l.obj.request_id === "req-unencodable-1");
    expect(errors.map((l) => l.msg)).toEqual(["unhandled error"]);
  });

  it("records a refused request's own status in the access log and the metrics", async () => {
    const res = await fetch(`${base}/v1/tools/%00`, { headers: { "x-request-id": "req-nul-1" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_character");
    const access = lines.find((l) => l.msg === "request" && l.obj.path === "/v1/tools/%00");
    expect(access?.obj.status).toBe(400);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(
      /^toolport_http_request_duration_seconds_count\{[^}]*method="GET"[^}]*route="unmatched"[^}]*status="400"[^}]*\} [1-9]/m,
    );
  });
});
