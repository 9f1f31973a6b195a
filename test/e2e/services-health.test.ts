/**
 * Every service process answers the standard grpc.health.v1 check to an independent gRPC client
 * (@grpc/grpc-js, not connect), which proves the wire is plain gRPC over HTTP/2.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type HealthCheckRequest,
  HealthCheckRequestSchema,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "@toolport/proto/grpc/health/v1/health_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, serviceNames, startStack } from "../harness/stack.js";

const HealthClient = grpc.makeGenericClientConstructor(
  {
    Check: {
      path: "/grpc.health.v1.Health/Check",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: HealthCheckRequest) => Buffer.from(toBinary(HealthCheckRequestSchema, m)),
      requestDeserialize: (b: Buffer) => fromBinary(HealthCheckRequestSchema, b),
      responseSerialize: (m: HealthCheckResponse) => Buffer.from(toBinary(HealthCheckResponseSchema, m)),
      responseDeserialize: (b: Buffer) => fromBinary(HealthCheckResponseSchema, b),
    },
  },
  "Health",
);

function check(port: number, service: string): Promise<{ status?: Status; code?: grpc.status }> {
  const client = new HealthClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (m: HealthCheckRequest) => Buffer.from(toBinary(HealthCheckRequestSchema, m)),
      (b: Buffer) => fromBinary(HealthCheckResponseSchema, b),
      create(HealthCheckRequestSchema, { service }),
      { deadline: Date.now() + 5000 },
      (err: grpc.ServiceError | null, res?: HealthCheckResponse) => {
        client.close();
        resolve(err ? { code: err.code } : { status: res?.status });
      },
    );
  });
}

const fullNames: Record<string, string> = {
  catalog: "toolport.catalog.v1.CatalogService",
  execution: "toolport.execution.v1.ExecutionService",
  billing: "toolport.billing.v1.BillingService",
  identity: "toolport.identity.v1.IdentityService",
  content: "toolport.content.v1.ContentService",
  webhooks: "toolport.webhooks.v1.WebhooksService",
};

describe("service health over plain gRPC", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack([...serviceNames], {}, { layout: "per-role" });
  });
  afterAll(() => stack?.stopAll());

  it.each(serviceNames)("%s reports SERVING for the process and for its gRPC service", async (name) => {
    expect(await check(stack.ports[name], "")).toEqual({ status: Status.SERVING });
    expect(await check(stack.ports[name], fullNames[name] as string)).toEqual({ status: Status.SERVING });
  });

  it("answers NOT_FOUND for a service it does not serve", async () => {
    expect(await check(stack.ports.catalog, "toolport.nope.v1.NopeService")).toEqual({ code: grpc.status.NOT_FOUND });
  });

  it("exits 0 on SIGTERM and is then unreachable", async () => {
    expect(await stack.stop("webhooks")).toBe(0);
    const after = await check(stack.ports.webhooks, "");
    expect(after.code).toBe(grpc.status.UNAVAILABLE);
  });
});
