/**
 * Shared by the catalog's integration tests: a stack on a NATS server of its own (the durable
 * execution consumer is named per service, so stacks of other test files on the run's shared NATS
 * would take turns receiving the events this file publishes), agents registered through the
 * gateway, JSON helpers, and execution events published the way the execution service does.
 */

import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { natsNames } from "@toolport/kit/events";
import { ErrorClass, ExecutionStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { ExecutionEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { connect } from "nats";
import { expect } from "vitest";
import { freePort, startNats } from "../../deploy/local/infra.mjs";
import { checkReply } from "./shapes.js";
import { type ProcessName, type Stack, startStack } from "./stack.js";

export const SECRET_KEY = randomBytes(32).toString("hex");

export interface CatalogStack {
  stack: Stack;
  natsUrl: string;
  /** The stack's NATS namespace (NATS_NAMESPACE), for events a test publishes itself. */
  natsNamespace: string;
  url: (p: string) => string;
  stop(): Promise<void>;
}

export async function startCatalogStack(names: ProcessName[], env: Record<string, string> = {}): Promise<CatalogStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "catalog-nats-"));
  const nats = await startNats({ storeDir: dir, port: await freePort(), log: { info() {} } });
  try {
    const stack = await startStack(names, { NATS_URL: nats.url, CATALOG_SECRET_KEY: SECRET_KEY, ...env });
    return {
      stack,
      natsUrl: nats.url,
      natsNamespace: stack.env.NATS_NAMESPACE ?? "",
      url: (p) => `${stack.gatewayUrl}/v1${p}`,
      async stop() {
        await stack.stopAll();
        await nats.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await nats.stop();
    throw err;
  }
}

export interface Agent {
  id: string;
  key: string;
  headers: Record<string, string>;
}

export async function registerAgent(s: CatalogStack, name = `agent-${randomBytes(3).toString("hex")}`): Promise<Agent> {
  const res = await fetch(s.url("/agents"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, operator_email: `${name}@example.com` }),
  });
  const body = (await res.json()) as { agent_id: string; api_key: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return { id: body.agent_id, key: body.api_key, headers: { "svc-api-key": body.api_key } };
}

/** A parsed response body; the tests check its shape with assertions. */
// biome-ignore lint/suspicious/noExplicitAny: bodies are arbitrary JSON, narrowed by the assertions that read them
export type Body = any;

export async function call(
  s: CatalogStack,
  method: string,
  p: string,
  options: { agent?: Agent; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Body; headers: Headers }> {
  const res = await fetch(s.url(p), {
    method,
    headers: {
      ...(options.agent?.headers ?? {}),
      ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(options.headers ?? {}),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  // The spec's response shapes, checked as gatewayClient checks them (test/harness/shapes.ts).
  checkReply({ method, path: p, status: res.status, body, requestBody: options.body });
  return { status: res.status, body, headers: res.headers };
}

export function expectError(res: { status: number; body: Body }, status: number, code?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({
    detail: expect.anything(),
    error: { code: expect.any(String), message: expect.any(String), details: expect.any(Object) },
  });
  if (code) expect(res.body.error.code).toBe(code);
}

export interface ExecutionInit {
  toolId: string;
  serviceId: string;
  accountId?: string;
  success: boolean;
  seconds?: number;
  errorClass?: ErrorClass;
  errorType?: string;
  occurredAt?: Date;
}

/** Publishes toolport.execution.* events onto JetStream as the execution service's relay does. */
export async function publishExecutions(
  to: { natsUrl: string; natsNamespace: string },
  events: ExecutionInit[],
): Promise<string[]> {
  const { wire } = natsNames(to.natsNamespace);
  const nc = await connect({ servers: to.natsUrl });
  const js = nc.jetstream();
  const ids: string[] = [];
  try {
    for (const e of events) {
      const eventId = randomUUID();
      const msg = create(ExecutionEventSchema, {
        eventId,
        occurredAt: timestampFromDate(e.occurredAt ?? new Date()),
        requestId: "test",
        executionId: randomUUID(),
        toolId: e.toolId,
        toolName: "t",
        serviceId: e.serviceId,
        serviceName: "s",
        accountId: e.accountId ?? randomUUID(),
        organizationId: "",
        status: e.success ? ExecutionStatus.SUCCESS : ExecutionStatus.ERROR,
        seconds: e.seconds ?? 0.25,
        error: e.success ? undefined : "upstream answered 502",
        errorClass: e.success ? ErrorClass.UNSPECIFIED : (e.errorClass ?? ErrorClass.UPSTREAM),
        errorType: e.success ? undefined : (e.errorType ?? "http_502"),
      });
      await js.publish(
        wire(e.success ? "toolport.execution.completed" : "toolport.execution.failed"),
        toBinary(ExecutionEventSchema, msg),
        { msgID: eventId },
      );
      ids.push(eventId);
    }
  } finally {
    await nc.drain();
  }
  return ids;
}

export const TOOL_KEYS = [
  "id",
  "slug",
  "name",
  "description",
  "service_id",
  "status",
  "tags",
  "method",
  "path",
  "parameters",
  "output",
  "tips",
  "version",
  "is_paid",
  "price_per_call_cents",
  "readiness",
  "configuration_url",
  "reliability",
  "deprecated",
  "deprecation_message",
  "sunset_date",
  "created_at",
  "updated_at",
].sort();

export const PUBLIC_TOOL_KEYS = [
  "id",
  "name",
  "slug",
  "description",
  "service_id",
  "parameters",
  "readiness",
  "configuration_url",
  "reliability",
  "deprecated",
  "deprecation_message",
  "sunset_date",
].sort();

export const SERVICE_KEYS = [
  "id",
  "slug",
  "name",
  "summary",
  "description",
  "service_type",
  "category",
  "logo",
  "contact",
  "documentation_url",
  "verification_tier",
  "status",
  "visibility",
  "tool_count",
  "total_executions",
  "success_rate",
  "avg_rating",
  "rating_count",
  "is_popular",
  "is_demo",
  "version",
  "created_at",
  "updated_at",
].sort();

export const RELIABILITY_KEYS = [
  "window_days",
  "calls_7d",
  "calls_30d",
  "success_rate_30d",
  "p50_seconds",
  "p95_seconds",
  "last_success_at",
  "last_failure_at",
  "last_error_class",
  "last_error_type",
  "error_classes",
  "faults",
  "auth_failures_30d",
  "caller_failures_30d",
  "danube_failures_30d",
  "upstream_failures_30d",
  "distinct_callers_30d",
  "flagged",
  "refreshed_at",
].sort();
