import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { invalidArgument, readError, resourceExhausted, toConnectError } from "./errors.js";

describe("errors across the gRPC boundary", () => {
  it("keeps a domain error's code, reason, message and details", () => {
    const sent = toConnectError(
      invalidArgument("invalid_parameters", "limit must be a positive integer", { details: { field: "limit" } }),
    );
    expect(sent.code).toBe(Code.InvalidArgument);
    expect(readError(sent)).toEqual({
      code: Code.InvalidArgument,
      reason: "invalid_parameters",
      message: "limit must be a positive integer",
      details: { field: "limit" },
      detail: undefined,
    });
  });

  it("carries a structured detail override (the 429 usage body)", () => {
    const detail = {
      message: "free tier used up",
      usage: { calls_this_month: 5000, limit: 5000 },
      upgrade_url: "https://x/fund",
    };
    const received = readError(toConnectError(resourceExhausted("usage_limit_exceeded", "free tier used up", { detail })));
    expect(received.detail).toEqual(detail);
  });

  it("hides anything that is not a domain error behind 'internal error', keeping the cause", () => {
    const cause = new Error('relation "tools" does not exist');
    const sent = toConnectError(cause);
    expect(sent.code).toBe(Code.Internal);
    expect(sent.rawMessage).toBe("internal error");
    expect(sent.cause).toBe(cause);
  });

  it("answers 503, not 500, when the database is unreachable (down, restarting, the connection cut)", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const shutdown = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    for (const cause of [refused, shutdown, new Error("Connection terminated unexpectedly")]) {
      expect(readError(toConnectError(cause))).toMatchObject({ code: Code.Unavailable, reason: "service_unavailable" });
    }
  });

  it("reads a call the peer cut mid-way (connect-node's Aborted or Canceled, no detail) as the service unavailable", () => {
    for (const cut of [
      new ConnectError("read ECONNRESET", Code.Aborted),
      new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled),
    ]) {
      expect(readError(cut)).toMatchObject({ code: Code.Unavailable, reason: "service_unavailable" });
    }
  });

  it("gives a ConnectError without detail a reason from its code", () => {
    expect(readError(new ConnectError("nope", Code.Unimplemented)).reason).toBe("not_implemented");
    expect(readError(new ConnectError("gone", Code.NotFound)).reason).toBe("not_found");
  });
});
