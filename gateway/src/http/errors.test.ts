import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { errorBody, httpStatusFor } from "./errors.js";

describe("httpStatusFor", () => {
  it("maps every gRPC code a service returns to its HTTP status", () => {
    expect(httpStatusFor(Code.InvalidArgument)).toBe(400);
    expect(httpStatusFor(Code.Unauthenticated)).toBe(401);
    expect(httpStatusFor(Code.PermissionDenied)).toBe(403);
    expect(httpStatusFor(Code.NotFound)).toBe(404);
    expect(httpStatusFor(Code.AlreadyExists)).toBe(409);
    expect(httpStatusFor(Code.ResourceExhausted)).toBe(429);
    expect(httpStatusFor(Code.Unimplemented)).toBe(501);
    expect(httpStatusFor(Code.Unavailable)).toBe(503);
    expect(httpStatusFor(Code.DeadlineExceeded)).toBe(504);
    expect(httpStatusFor(Code.Internal)).toBe(500);
  });

  it("lets a reason override its code's status", () => {
    expect(httpStatusFor(Code.FailedPrecondition, "insufficient_balance")).toBe(402);
    expect(httpStatusFor(Code.InvalidArgument, "idempotency_key_reused")).toBe(422);
    expect(httpStatusFor(Code.InvalidArgument, "skill_too_large")).toBe(413);
    expect(httpStatusFor(Code.InvalidArgument, "some_other_reason")).toBe(400);
  });

  it("builds the dual error body", () => {
    expect(errorBody("not_implemented", "not built")).toEqual({
      detail: "not built",
      error: { code: "not_implemented", message: "not built", details: {} },
    });
  });
});
