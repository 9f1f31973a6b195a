import { Code, ConnectError } from "@connectrpc/connect";
import { domainToConnect, invalidArgument, notFound, permissionDenied, unauthenticated, unavailable } from "@toolport/kit/errors";
import { describe, expect, it } from "vitest";
import { serviceVisible } from "./catalog.js";

const answering = (err?: ConnectError) => () => (err ? Promise.reject(err) : Promise.resolve({}));

describe("whether a skill's service is one the caller can see", () => {
  it("is yes when the catalog shows it, also when the caller sees but does not manage it", async () => {
    expect(await serviceVisible(answering())).toBe(true);
    const notOwner = domainToConnect(permissionDenied("not_service_owner", "only the service's organization may change it"));
    expect(await serviceVisible(answering(notOwner))).toBe(true);
  });

  it("is no for any other refusal, never a 503", async () => {
    for (const refusal of [
      domainToConnect(notFound("service_not_found", "service x not found")),
      domainToConnect(invalidArgument("invalid_request", "bad id")),
      domainToConnect(permissionDenied("forbidden", "no")),
      domainToConnect(unauthenticated("unauthenticated", "who?")),
      new ConnectError("no such service", Code.NotFound),
    ]) {
      expect(await serviceVisible(answering(refusal)), refusal.message).toBe(false);
    }
  });

  it("is 503 catalog_unavailable only when the catalog could not answer", async () => {
    for (const outage of [
      domainToConnect(unavailable("service_unavailable", "down")),
      new ConnectError("deadline", Code.DeadlineExceeded),
      new ConnectError("internal error", Code.Internal),
      // A peer cut mid-call, without the service's own detail.
      new ConnectError("socket hang up", Code.Aborted),
    ]) {
      await expect(serviceVisible(answering(outage)), outage.message).rejects.toMatchObject({
        code: Code.Unavailable,
        reason: "catalog_unavailable",
      });
    }
  });
});
