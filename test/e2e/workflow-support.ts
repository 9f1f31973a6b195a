/**
 * Shared by the workflow tests: a real upstream HTTP API whose answers feed later steps (a profile with
 * an object, an array and a number), that echoes what a step sent, fails on request, charges, and
 * counts every call by the run tag and step it carries; its OpenAPI document; and a reader of the
 * workflow events on the stack's NATS stream.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import { fromBinary } from "@bufbuild/protobuf";
import { natsNames } from "@toolport/kit/events";
import { WorkflowRunStatus } from "@toolport/proto/toolport/common/v1/types_pb";
import { WorkflowEventSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { AckPolicy, connect, DeliverPolicy } from "nats";
import { closer, listen } from "../harness/upstreams.js";

export interface ShopApi {
  url: string;
  port: number;
  /** Bodies (or paths) each route received, in order. */
  received: Array<{ route: string; body: Record<string, unknown> }>;
  /** Calls seen per `<tag>:<step>` (routes that carry a tag and a step). */
  calls: Map<string, number>;
  /** Milliseconds /slow and /charge wait before they answer. */
  slowMs: number;
  /** When set, /slow also waits for it (a test holds calls in the upstream and releases them). */
  gate?: Promise<void>;
  close(): Promise<void>;
}

export async function startShopApi(): Promise<ShopApi> {
  const api = { received: [], calls: new Map<string, number>(), slowMs: 0 } as unknown as ShopApi;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const url = new URL(req.url!, "http://x");
    const [, route, arg] = url.pathname.split("/");
    api.received.push({ route: route!, body: route === "profile" ? { user_id: arg } : body });
    if (typeof body.tag === "string" && body.step !== undefined) {
      const key = `${body.tag}:${body.step}`;
      api.calls.set(key, (api.calls.get(key) ?? 0) + 1);
    }
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    switch (route) {
      case "profile":
        return json(200, {
          user: { id: Number(arg), name: "Ada", email: "ada@example.com" },
          orders: [
            { id: "o-1", total: 12.5 },
            { id: "o-2", total: 30 },
          ],
          count: 2,
        });
      case "compose":
        return json(200, { received: body });
      case "fail":
        return json(500, { error: "the shop is closed" });
      case "charge":
        await new Promise((r) => setTimeout(r, api.slowMs));
        return json(200, { charged: true, tag: body.tag, step: body.step });
      case "slow":
        await new Promise((r) => setTimeout(r, api.slowMs));
        await api.gate;
        return json(200, { tag: body.tag, step: body.step, done: true });
      default:
        return json(404, { error: "no such route" });
    }
  });
  api.port = await listen(server);
  api.url = `http://127.0.0.1:${api.port}`;
  api.close = closer(server);
  return api;
}

const stepBody = {
  type: "object",
  properties: { tag: { type: "string" }, step: { type: "integer" }, note: { type: "string" } },
};

/** The shop's OpenAPI document. */
export function shopDocument(title: string) {
  return {
    openapi: "3.0.3",
    info: { title, version: "1.0.0" },
    paths: {
      "/profile/{user_id}": {
        get: {
          operationId: "get_profile",
          parameters: [{ name: "user_id", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "a profile" } },
        },
      },
      "/compose": {
        post: {
          operationId: "compose",
          requestBody: {
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: {
                    owner: { type: "object" },
                    first_order: { type: "string" },
                    order_count: { type: "integer" },
                    totals: { type: "array" },
                    note: { type: "string" },
                    tag: { type: "string" },
                    step: { type: "integer" },
                  },
                },
              },
            },
          },
          responses: { "200": { description: "what it received" } },
        },
      },
      "/fail": {
        post: {
          operationId: "fail",
          requestBody: { content: { "application/json": { schema: stepBody } } },
          responses: { "500": { description: "closed" } },
        },
      },
      "/charge": {
        post: {
          operationId: "charge",
          requestBody: { content: { "application/json": { schema: stepBody } } },
          responses: { "200": { description: "charged" } },
        },
      },
      "/slow": {
        post: {
          operationId: "slow",
          requestBody: { content: { "application/json": { schema: stepBody } } },
          responses: { "200": { description: "done" } },
        },
      },
    },
  };
}

/** A run's step as the gateway answers it (a workflow's step has step_number, tool_id and tool_name too). */
export interface StepJson {
  step_number: number;
  tool_id: string;
  tool_name: string;
  status: string;
  execution_id: string | null;
  error: string | null;
  error_code: string | null;
  duration_ms: number;
  tool_input: unknown;
}

export interface SeenWorkflowEvent {
  subject: string;
  runId: string;
  workflowId: string;
  status: "completed" | "failed";
  stepsCompleted: number;
  stepsTotal: number;
  executionTimeMs: number;
  error: string | undefined;
  ownerId: string;
}

/**
 * Every workflow event on the stack's stream so far (a throwaway consumer from the start, read to the
 * end), its subject as the code names it (without the stack's NATS_NAMESPACE).
 */
export async function workflowEvents(stack: { env: Record<string, string> }): Promise<SeenWorkflowEvent[]> {
  const names = natsNames(stack.env.NATS_NAMESPACE);
  const nc = await connect({ servers: stack.env.NATS_URL });
  const jsm = await nc.jetstreamManager();
  const name = `wf-events-${randomUUID().slice(0, 8)}`;
  try {
    // One subject, not a list: the Debian nats-server predates filter_subjects (2.10).
    const info = await jsm.consumers.add(names.stream, {
      durable_name: name,
      filter_subject: names.wire("toolport.workflow.>"),
      deliver_policy: DeliverPolicy.All,
      ack_policy: AckPolicy.None,
    });
    const out: SeenWorkflowEvent[] = [];
    let left = info.num_pending;
    const consumer = await nc.jetstream().consumers.get(names.stream, name);
    while (left > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(left, 500), expires: 5000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        const e = fromBinary(WorkflowEventSchema, m.data);
        out.push({
          subject: names.logical(m.subject),
          runId: e.executionId,
          workflowId: e.workflowId,
          status: e.status === WorkflowRunStatus.COMPLETED ? "completed" : "failed",
          stepsCompleted: e.stepsCompleted,
          stepsTotal: e.stepsTotal,
          executionTimeMs: Number(e.executionTimeMs),
          error: e.error,
          ownerId: e.ownerId,
        });
      }
      if (got === 0) break;
      left -= got;
    }
    return out;
  } finally {
    await jsm.consumers.delete(names.stream, name).catch(() => {});
    await nc.close();
  }
}
