import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import Router from "@koa/router";
import { DomainError, invalidArgument, toConnectError } from "@toolport/kit/errors";
import { createLogger } from "@toolport/kit/logger";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsentRequired } from "../http/errors.js";
import { errorMiddleware } from "./errors.js";

describe("errorMiddleware", () => {
  let base: string;
  let close: () => void;
  const logged: unknown[] = [];

  beforeAll(async () => {
    const log = createLogger("test", "error");
    log.error = ((obj: unknown) => {
      logged.push(obj);
    }) as typeof log.error;
    const app = new Koa();
    app.silent = true;
    app.use(errorMiddleware(log));
    const router = new Router();
    router.get("/crash", () => {
      throw new Error("secret connection string postgres://admin:hunter2@db");
    });
    router.get("/internal", () => {
      throw toConnectError(new TypeError("cannot read properties of undefined"));
    });
    router.get("/invalid", () => {
      throw toConnectError(
        invalidArgument("invalid_parameters", "limit must be a positive integer", { details: { field: "limit" } }),
      );
    });
    router.get("/unavailable", () => {
      throw new ConnectError("connect ECONNREFUSED 127.0.0.1:50051", Code.Unavailable);
    });
    router.get("/balance", () => {
      throw toConnectError(
        invalidArgument("insufficient_balance", "wallet balance too low", { details: { price_atomic: 10_000 } }),
      );
    });
    const consent = { tool_id: "t1", confirm_token: "ct_1", expires_at: "2026-12-01T00:00:00.000Z" };
    router.get("/consent", async () => {
      const asked = new DomainError(Code.Aborted, "confirmation_required", "repeat the call with confirm_token", {
        details: { tool_id: "t1", consent, confirm_token: "ct_1" },
      });
      await Promise.reject(toConnectError(asked)).catch(ConsentRequired.rethrow);
    });
    router.get("/conflict", async () => {
      const taken = new DomainError(Code.Aborted, "already_exists", "taken", { details: { confirm_token: "no" } });
      await Promise.reject(toConnectError(taken)).catch(ConsentRequired.rethrow);
    });
    app.use(router.routes());
    const server = app.listen(0);
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it("turns an unexpected throw into 500 with the error body, no stack and no message, and logs the cause", async () => {
    const res = await fetch(`${base}/crash`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      detail: "internal error",
      error: { code: "internal_error", message: "internal error", details: {} },
    });
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("at ");
    expect(logged.length).toBeGreaterThan(0);
  });

  it("keeps a service's internal error opaque", async () => {
    const res = await fetch(`${base}/internal`);
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ detail: "internal error", error: { code: "internal_error" } });
  });

  it("maps a domain error to its status, reason and details", async () => {
    const res = await fetch(`${base}/invalid`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      detail: "limit must be a positive integer",
      error: { code: "invalid_parameters", message: "limit must be a positive integer", details: { field: "limit" } },
    });
  });

  it("answers 503 with Retry-After when a service cannot be reached, without its address", async () => {
    const res = await fetch(`${base}/unavailable`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toBe("a backing service is unavailable");
  });

  it("uses the reason's own status where it is more specific than the code's (402 insufficient_balance)", async () => {
    const res = await fetch(`${base}/balance`);
    expect(res.status).toBe(402);
  });

  it("answers a consent request 409 with the error body and confirm_token and consent at the top level", async () => {
    const res = await fetch(`${base}/consent`);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      detail: "repeat the call with confirm_token",
      error: {
        code: "confirmation_required",
        message: "repeat the call with confirm_token",
        details: {
          tool_id: "t1",
          consent: { tool_id: "t1", confirm_token: "ct_1", expires_at: "2026-12-01T00:00:00.000Z" },
          confirm_token: "ct_1",
        },
      },
      confirm_token: "ct_1",
      consent: { tool_id: "t1", confirm_token: "ct_1", expires_at: "2026-12-01T00:00:00.000Z" },
    });
  });

  it("leaves any other service error as it is after the consent check", async () => {
    const res = await fetch(`${base}/conflict`);
    expect(res.status).toBe(409);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty("confirm_token");
    expect(body).toMatchObject({ error: { code: "already_exists" } });
  });
});
