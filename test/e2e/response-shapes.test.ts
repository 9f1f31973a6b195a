/**
 * The response-shape check of the harness (test/harness/shapes.ts): each schema accepts a valid sample of
 * its shape and rejects what the spec rules out, naming the bad field; the route table picks the right
 * shape; and gatewayClient fails a call whose 2xx body is off-shape (against a small fake gateway).
 * Lives under test/e2e because the integration project does not include test/harness.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@toolport/kit/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { v1Routes } from "../../gateway/src/app.js";
import { createServiceClients } from "../../gateway/src/clients.js";
import { loadGatewayConfig } from "../../gateway/src/config.js";
import { buildDocument } from "../../gateway/src/openapi/document.js";
import { DescriptionMismatchError } from "../harness/described.js";
import { gatewayClient } from "../harness/http.js";
import { checkReply, type Mismatch, routeBody, ShapeMismatchError, type ShapeName, shapeMismatches } from "../harness/shapes.js";

const T = "2026-03-01T12:00:00.000Z";
const TOOL_ID = "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10";
const SERVICE_ID = "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b";
const EXECUTION_ID = "c1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8";

const reliabilityBlock = () => ({
  window_days: 30,
  calls_7d: 3,
  calls_30d: 12,
  success_rate_30d: 0.75,
  p50_seconds: 0.2,
  p95_seconds: 1.4,
  last_success_at: T,
  last_failure_at: null,
  last_error_class: "upstream",
  last_error_type: "http_502",
  error_classes: { upstream: 3 },
  faults: {},
  auth_failures_30d: 0,
  caller_failures_30d: 0,
  danube_failures_30d: 0,
  upstream_failures_30d: 3,
  distinct_callers_30d: 2,
  flagged: false,
  refreshed_at: T,
});

const parameter = () => ({ name: "q", location: "query", description: "the query", type: "string", required: true });

const tool = (): Record<string, unknown> => ({
  id: TOOL_ID,
  slug: "echo-item",
  name: "echo_item",
  description: "Echoes an item",
  service_id: SERVICE_ID,
  status: "active",
  tags: ["echo"],
  method: "POST",
  path: "/echo/items/{item_id}",
  parameters: { q: { ...parameter(), default: "x", enum: ["x", "y"] } },
  output: null,
  tips: null,
  version: "1.0.0",
  is_paid: true,
  price_per_call_cents: 5,
  readiness: "ready",
  configuration_url: null,
  reliability: null,
  deprecated: false,
  deprecation_message: null,
  sunset_date: null,
  created_at: T,
  updated_at: T,
});

const publicTool = (): Record<string, unknown> => ({
  id: TOOL_ID,
  name: "echo_item",
  slug: null,
  description: "Echoes an item",
  service_id: SERVICE_ID,
  parameters: { q: { ...parameter(), minimum: 0, maximum: 9, encode_slashes: false, json_schema: { type: "string" } } },
  readiness: "needs_credential",
  configuration_url: "https://toolport.example/console/services/x/connect",
  reliability: reliabilityBlock(),
  deprecated: true,
  deprecation_message: "use echo_item_v2",
  sunset_date: "2026-06-01T00:00:00.000Z",
});

const service = (): Record<string, unknown> => ({
  id: SERVICE_ID,
  slug: "echo",
  name: "Echo",
  summary: "echoes",
  description: "An echo API",
  service_type: "api",
  category: "developer",
  logo: "https://example.com/logo.png",
  contact: { name: "Ops", url: "https://example.com", email: "ops@example.com" },
  documentation_url: "https://example.com/docs",
  verification_tier: "unverified",
  status: "active",
  visibility: "public",
  tool_count: 7,
  total_executions: 120,
  success_rate: 0.5,
  avg_rating: 4,
  rating_count: 2,
  is_popular: false,
  is_demo: false,
  version: "1.0.0",
  created_at: T,
  updated_at: T,
});

const responseMeta = () => ({
  truncated: true,
  original_response_chars: 90000,
  response_chars: 31990,
  dropped_items: { "items[]": { kept: 10, total: 40 } },
});

const executionResult = (): Record<string, unknown> => ({
  execution_id: EXECUTION_ID,
  tool_id: TOOL_ID,
  status: "success",
  executed_at: T,
  error: null,
  path: null,
  result: { items: [1, 2] },
  truncated: false,
  response_meta: null,
});

const element = (): Record<string, unknown> => ({
  tool_id: TOOL_ID,
  success: true,
  result: { ok: true },
  error: null,
  execution_id: EXECUTION_ID,
  truncated: false,
});

const singleCall = (): Record<string, unknown> => ({
  tool_id: TOOL_ID,
  success: true,
  result: { ok: true },
  error: null,
  execution_id: EXECUTION_ID,
  truncated: false,
  response_meta: null,
});

const consent = () => ({
  tool_id: TOOL_ID,
  tool_name: "delete_orders",
  parameters: { id: "o-1" },
  confirm_token: "ct_abc",
  expires_at: T,
});

/** The mismatches of `value` as `shape`, asserting one names `pointer` and says `expected`. */
function expectRejected(shape: ShapeName, value: unknown, pointer: string, expected: string | RegExp): Mismatch[] {
  const found = shapeMismatches(shape, value);
  expect(found, `${shape} should reject ${JSON.stringify(value)}`).not.toEqual([]);
  const atPointer = found.filter((m) => m.pointer === pointer);
  expect(atPointer, JSON.stringify(found)).not.toEqual([]);
  expect(atPointer.map((m) => m.expected).join(" | ")).toMatch(expected);
  return found;
}

const WORKFLOW_ID = "3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7";
const workflow = () => ({
  id: WORKFLOW_ID,
  name: "Digest",
  description: "three steps",
  steps: [
    { step_number: 1, tool_id: TOOL_ID, tool_name: "get_profile", description: "", input_mapping: { id: "{{inputs.id}}" } },
    { step_number: 2, tool_id: TOOL_ID, tool_name: "compose", description: "d", input_mapping: { u: "{{steps.1.result.user}}" } },
  ],
  owner_id: SERVICE_ID,
  visibility: "private",
  tags: ["demo"],
  created_at: T,
  updated_at: T,
  input_schema: null,
  total_executions: 3,
  success_rate: 66.67,
});
const workflowSummary = () => ({
  id: WORKFLOW_ID,
  name: "Digest",
  description: "",
  step_count: 2,
  owner_id: SERVICE_ID,
  visibility: "public",
  tags: [],
  total_executions: 0,
  success_rate: 0,
  created_at: T,
});

const without = (o: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));

describe("valid samples pass", () => {
  it.each([
    ["Tool", tool()],
    ["Tool", { ...tool(), reliability: reliabilityBlock(), output: { id: { type: "string" } }, tips: "page with cursor" }],
    ["Tool", { ...tool(), method: "", path: `${SERVICE_ID}/` }],
    ["PublicTool", publicTool()],
    ["Reliability", null],
    ["Reliability", reliabilityBlock()],
    ["Service", service()],
    ["ExecutionResult", executionResult()],
    ["ExecutionResult", { ...executionResult(), path: "items[0]", path_matched: false, result: null }],
    [
      "ExecutionResult",
      {
        ...executionResult(),
        truncated: true,
        response_meta: { ...responseMeta(), cursor: "next-page" },
        stored_truncated: true,
        stored_meta: { truncated: true, original_chars: 3_000_000, stored_chars: 1_000_000, limit: 1_000_000, kind: "json" },
        cursor: "next-page",
        _meta: { redaction: { count: 1, fields: [{ path: "token", key: "token", rule: "generic" }], mode: "mask" } },
      },
    ],
    ["ExecutionResult", { ...executionResult(), status: "error", error: "upstream answered 502", result: null }],
    ["BatchElement", element()],
    ["BatchElement", { ...element(), projection: { kept: ["items[].id"], unmatched: ["nope"] } }],
    ["BatchElement", { ...element(), truncated: true, response_meta: responseMeta() }],
    [
      "BatchElement",
      {
        ...element(),
        success: false,
        result: null,
        error: "confirmation required",
        execution_id: null,
        error_code: "confirmation_required",
        consent: consent(),
      },
    ],
    [
      "BatchElement",
      { ...element(), success: false, result: null, error: "tool x not found", execution_id: null, error_code: "tool_not_found" },
    ],
    ["BatchElement", { ...element(), success: false, result: null, error: "upstream answered 500" }],
    ["SingleCallResult", singleCall()],
    ["SingleCallResult", { ...singleCall(), truncated: true, response_meta: responseMeta(), passthrough_reason: "new key" }],
    ["Workflow", workflow()],
    ["Workflow", { ...workflow(), visibility: "public", input_schema: { type: "object" } }],
    ["WorkflowSummary", workflowSummary()],
  ] as [ShapeName, unknown][])("%s sample %#", (shape, value) => {
    expect(shapeMismatches(shape, value)).toEqual([]);
  });
});

describe("Tool (full shape)", () => {
  it("rejects a null path or method: both are strings", () => {
    expectRejected("Tool", { ...tool(), path: null }, "/path", /^string$/);
    expectRejected("Tool", { ...tool(), method: null }, "/method", /^string$/);
  });

  it("rejects a fractional price_per_call_cents: an integer", () => {
    const [m] = expectRejected("Tool", { ...tool(), price_per_call_cents: 1.5 }, "/price_per_call_cents", /^integer$/);
    expect(m!.got).toBe("number 1.5 (not an integer)");
  });

  it("rejects a missing readiness, and a readiness the spec does not name", () => {
    const [m] = expectRejected(
      "Tool",
      without(tool(), "readiness"),
      "/readiness",
      /present: one of "ready", "needs_credential", "unavailable"/,
    );
    expect(m!.got).toBe("nothing (missing)");
    expectRejected("Tool", { ...tool(), readiness: "ok" }, "/readiness", /one of "ready"/);
  });

  it("rejects a status other than active or inactive", () => {
    expectRejected("Tool", { ...tool(), status: "retired" }, "/status", /one of "active", "inactive"/);
  });

  it("rejects tags that are not strings, and a timestamp that is not ISO 8601", () => {
    expectRejected("Tool", { ...tool(), tags: ["a", 2] }, "/tags/1", /^string$/);
    expectRejected("Tool", { ...tool(), created_at: "yesterday" }, "/created_at", /ISO 8601 timestamp/);
    expectRejected("Tool", { ...tool(), sunset_date: "2026-06-01 00:00" }, "/sunset_date", /ISO 8601 timestamp/);
  });

  it("rejects a field the spec does not list (the shape is closed)", () => {
    expectRejected("Tool", { ...tool(), base_url: "https://x" }, "/base_url", /no such field/);
  });

  it("rejects needs_credential without a configuration_url", () => {
    expectRejected(
      "Tool",
      { ...tool(), readiness: "needs_credential" },
      "/configuration_url",
      /string \(configuration_url is set when readiness is needs_credential\)/,
    );
  });

  it("rejects a parameter entry without its type", () => {
    expectRejected(
      "Tool",
      { ...tool(), parameters: { q: without(parameter(), "type") } },
      "/parameters/q/type",
      /present: string/,
    );
  });

  it("checks the reliability block inside it", () => {
    expectRejected(
      "Tool",
      { ...tool(), reliability: { ...reliabilityBlock(), calls_30d: "12" } },
      "/reliability/calls_30d",
      /integer/,
    );
  });
});

describe("Tool (trimmed public shape)", () => {
  it("rejects full-shape fields and credential details: it has none", () => {
    expectRejected("PublicTool", { ...publicTool(), method: "GET" }, "/method", /no such field/);
    expectRejected("PublicTool", { ...publicTool(), security_schemes: [] }, "/security_schemes", /no such field/);
  });

  it("rejects a parameter entry without its name, and a missing configuration_url", () => {
    expectRejected(
      "PublicTool",
      { ...publicTool(), parameters: { q: without(parameter(), "name") } },
      "/parameters/q/name",
      /present/,
    );
    expectRejected("PublicTool", without(publicTool(), "configuration_url"), "/configuration_url", /present/);
  });
});

describe("Reliability block", () => {
  it("rejects a missing key, a fractional count and an unknown key", () => {
    expectRejected("Reliability", without(reliabilityBlock(), "refreshed_at"), "/refreshed_at", /present/);
    expectRejected("Reliability", { ...reliabilityBlock(), distinct_callers_30d: 2.5 }, "/distinct_callers_30d", /integer/);
    expectRejected("Reliability", { ...reliabilityBlock(), p99_seconds: 3 }, "/p99_seconds", /no such field/);
  });

  it("rejects a non-numeric success rate, and an empty array for the block", () => {
    expectRejected("Reliability", { ...reliabilityBlock(), success_rate_30d: "75%" }, "/success_rate_30d", /number or null/);
    expectRejected("Reliability", [], "", /object or null/);
  });
});

describe("Service", () => {
  it("rejects enum values the spec does not name", () => {
    expectRejected("Service", { ...service(), service_type: "rest" }, "/service_type", /"api", "mcp_server", "internal"/);
    expectRejected("Service", { ...service(), verification_tier: "gold" }, "/verification_tier", /"unverified"/);
    expectRejected("Service", { ...service(), status: "inactive" }, "/status", /"active", "degraded", "retired"/);
    expectRejected("Service", { ...service(), visibility: "secret" }, "/visibility", /"local_only"/);
  });

  it("rejects a fractional count, a string rate and an incomplete contact", () => {
    expectRejected("Service", { ...service(), tool_count: 1.5 }, "/tool_count", /integer/);
    expectRejected("Service", { ...service(), success_rate: "0.5" }, "/success_rate", /number/);
    expectRejected("Service", { ...service(), contact: { name: "Ops", url: "https://x" } }, "/contact/email", /present: string/);
  });
});

describe("Execution result", () => {
  it("rejects path_matched when no path was given, and its absence when one was", () => {
    expectRejected(
      "ExecutionResult",
      { ...executionResult(), path_matched: true },
      "/path_matched",
      /absent \(path_matched is present only/,
    );
    expectRejected("ExecutionResult", { ...executionResult(), path: "items" }, "/path_matched", /present: boolean/);
  });

  it("rejects stored_truncated false, and stored_meta without stored_truncated or the other way round", () => {
    const meta = { truncated: true, original_chars: 10, stored_chars: 5, limit: 5, kind: "text" };
    expectRejected(
      "ExecutionResult",
      { ...executionResult(), stored_truncated: false, stored_meta: meta },
      "/stored_truncated",
      /true/,
    );
    expectRejected("ExecutionResult", { ...executionResult(), stored_meta: meta }, "/stored_meta", /absent/);
    expectRejected("ExecutionResult", { ...executionResult(), stored_truncated: true }, "/stored_meta", /present/);
    expectRejected(
      "ExecutionResult",
      { ...executionResult(), stored_truncated: true, stored_meta: { ...meta, kind: "binary" } },
      "/stored_meta/kind",
      /"json", "text"/,
    );
  });

  it("rejects response_meta that does not follow truncated", () => {
    expectRejected(
      "ExecutionResult",
      { ...executionResult(), response_meta: responseMeta() },
      "/response_meta",
      /null \(response_meta is null unless truncated/,
    );
    expectRejected("ExecutionResult", { ...executionResult(), truncated: true }, "/response_meta", /object/);
    expectRejected(
      "ExecutionResult",
      { ...executionResult(), truncated: true, response_meta: { ...responseMeta(), response_chars: 1.5 } },
      "/response_meta/response_chars",
      /integer/,
    );
  });

  it("rejects an unknown status, and a failed execution with a result", () => {
    expectRejected("ExecutionResult", { ...executionResult(), status: "failed" }, "/status", /"success", "error"/);
    expectRejected(
      "ExecutionResult",
      { ...executionResult(), status: "error", error: "boom" },
      "/result",
      /null \(a failed execution stores nothing/,
    );
  });
});

describe("Batch element", () => {
  it("rejects an element without execution_id", () => {
    expectRejected("BatchElement", without(element(), "execution_id"), "/execution_id", /present/);
  });

  it("rejects a null execution_id on an element that ran", () => {
    expectRejected("BatchElement", { ...element(), execution_id: null }, "/execution_id", /string \(an element that ran/);
  });

  it("rejects an incomplete consent object, and consent on a call reported as run", () => {
    const refused = {
      ...element(),
      success: false,
      result: null,
      error: "confirm",
      execution_id: null,
      error_code: "confirmation_required",
    };
    expectRejected(
      "BatchElement",
      { ...refused, consent: without(consent(), "confirm_token") },
      "/consent/confirm_token",
      /present: string/,
    );
    expectRejected(
      "BatchElement",
      { ...element(), consent: consent() },
      "/success",
      /false \(an element with a consent object was not run/,
    );
  });

  it("rejects a projection report whose paths are not strings, and an unknown field", () => {
    expectRejected("BatchElement", { ...element(), projection: { kept: [1], unmatched: [] } }, "/projection/kept/0", /string/);
    expectRejected("BatchElement", { ...element(), status: "success" }, "/status", /no such field/);
  });

  it("rejects a failed element without an error message", () => {
    expectRejected(
      "BatchElement",
      { ...element(), success: false, result: null },
      "/error",
      /string \(a failed call carries an error message/,
    );
  });
});

describe("single-call result", () => {
  it("rejects a body without truncated or response_meta, or without its handle", () => {
    expectRejected("SingleCallResult", without(singleCall(), "truncated"), "/truncated", /present: boolean/);
    expectRejected("SingleCallResult", without(singleCall(), "response_meta"), "/response_meta", /present/);
    expectRejected("SingleCallResult", { ...singleCall(), execution_id: null }, "/execution_id", /^string$/);
  });

  it("rejects a consent object on a 200 (consent is the 409) and a truncated body without response_meta", () => {
    expectRejected("SingleCallResult", { ...singleCall(), consent: consent() }, "/consent", /no such field/);
    expectRejected("SingleCallResult", { ...singleCall(), truncated: true }, "/response_meta", /object/);
  });
});

describe("Workflow", () => {
  it("rejects a name over 128 characters, a success rate over 100 and a fractional count", () => {
    expectRejected("Workflow", { ...workflow(), name: "n".repeat(129) }, "/name", /128/);
    expectRejected("Workflow", { ...workflow(), success_rate: 101 }, "/success_rate", /100/);
    expectRejected("WorkflowSummary", { ...workflowSummary(), step_count: 1.5 }, "/step_count", /integer/);
  });

  it("rejects a step numbered from 0, a step without input_mapping, and no steps", () => {
    const steps = workflow().steps;
    expectRejected("Workflow", { ...workflow(), steps: [{ ...steps[0], step_number: 0 }] }, "/steps/0/step_number", /1/);
    expectRejected(
      "Workflow",
      { ...workflow(), steps: [without(steps[0]!, "input_mapping")] },
      "/steps/0/input_mapping",
      /object/,
    );
    expectRejected("Workflow", { ...workflow(), steps: [] }, "/steps", /1/);
  });

  it("rejects a summary with full-shape fields: it is closed", () => {
    expectRejected("WorkflowSummary", { ...workflowSummary(), steps: [] }, "/steps", /no such field/);
  });
});

describe("the route table", () => {
  it.each([
    ["GET", "/tools", "Tool[]"],
    ["GET", "/tools/search?query=echo&tags=a", "Tool[]"],
    ["GET", `/tools/${TOOL_ID}`, "Tool"],
    ["GET", "/tools/name/echo%20item", "Tool"],
    ["GET", `/tools/${TOOL_ID}/describe`, "{tool: Tool}"],
    ["PATCH", `/tools/${TOOL_ID}`, "Tool"],
    ["GET", "/tools/public/search?query=x", "trimmed Tool[]"],
    ["GET", "/services/public", "Service[]"],
    ["GET", `/services/public/${SERVICE_ID}`, "Service"],
    ["GET", `/services/public/${SERVICE_ID}/tools`, "Tool[]"],
    ["POST", "/services", "{service: Service, tools: Tool[]}"],
    ["GET", "/services", "Service[]"],
    ["GET", `/services/${SERVICE_ID}`, "{service: Service}"],
    ["PATCH", `/services/${SERVICE_ID}`, "{service: Service}"],
    ["GET", `/services/${SERVICE_ID}/tools`, "Tool[]"],
    ["POST", `/services/${SERVICE_ID}/reimport`, "{service: Service, tools: Tool[]}"],
    ["POST", `/tools/call/${TOOL_ID}`, "single-call result"],
    ["POST", "/tools/call/batch", "{results: Batch element[]}"],
    ["GET", `/tools/call/batch/${EXECUTION_ID}`, "async batch record"],
    ["POST", `/tools/call/batch/${EXECUTION_ID}/cancel`, "async batch record"],
    ["GET", `/tools/executions/${EXECUTION_ID}/result?path=a.b`, "Execution result"],
    ["GET", "/workflows/public?sort=name", "Workflow summary[] (public)"],
    ["GET", "/workflows/my", "Workflow summary[]"],
    ["POST", "/workflows", "Workflow"],
    ["GET", `/workflows/${WORKFLOW_ID}`, "Workflow"],
    ["PATCH", `/workflows/${WORKFLOW_ID}`, "Workflow"],
    ["DELETE", `/workflows/${WORKFLOW_ID}`, "{deleted: true}"],
  ])("%s %s -> %s", (method, path, label) => {
    expect(routeBody(method, path)?.label).toBe(label);
  });

  it.each([
    ["GET", "/tools/recommended"],
    ["POST", "/agents"],
    ["DELETE", `/tools/${TOOL_ID}`],
    ["GET", `/services/${SERVICE_ID}/credentials`],
    ["GET", `/workflows/runs/${EXECUTION_ID}`],
    ["POST", `/workflows/${WORKFLOW_ID}/run`],
  ])("%s %s carries none of the shapes", (method, path) => {
    expect(routeBody(method, path)).toBeUndefined();
  });

  it("checks 2xx only: a 409 consent answer and a 404 error body pass", () => {
    const error = { detail: "x", error: { code: "confirmation_required", message: "x", details: {} } };
    expect(() => checkReply({ method: "POST", path: `/tools/call/${TOOL_ID}`, status: 409, body: error })).not.toThrow();
    expect(() => checkReply({ method: "GET", path: `/tools/${TOOL_ID}`, status: 404, body: error })).not.toThrow();
  });

  it("checks a batch against its request: one element per call, projection when fields were sent", () => {
    const reply = (results: unknown[], calls: unknown[]) => () =>
      checkReply({ method: "POST", path: "/tools/call/batch", status: 200, body: { results }, requestBody: { calls } });
    expect(reply([element()], [{ tool_id: TOOL_ID }])).not.toThrow();
    expect(reply([element()], [{ tool_id: TOOL_ID }, { tool_id: TOOL_ID }])).toThrow(
      /\/results: got array \(1 items\); expected one element per call: 2 items/,
    );
    expect(reply([element()], [{ tool_id: TOOL_ID, fields: ["a"] }])).toThrow(
      /\/results\/0\/projection: got nothing \(missing\); expected present/,
    );
  });

  it("checks that an execution result echoes the path passed", () => {
    const path = `/tools/executions/${EXECUTION_ID}/result?path=${encodeURIComponent("items[0]")}`;
    const body = { ...executionResult(), path: "items[1]", path_matched: true };
    expect(() => checkReply({ method: "GET", path, status: 200, body })).toThrow(
      /\/path: got string "items\[1\]"; expected "items\[0\]"/,
    );
  });

  it("checks that a blank path reads as none passed", () => {
    const path = `/tools/executions/${EXECUTION_ID}/result?path=%20`;
    expect(() => checkReply({ method: "GET", path, status: 200, body: { ...executionResult(), path: null } })).not.toThrow();
    expect(() =>
      checkReply({ method: "GET", path, status: 200, body: { ...executionResult(), path: " ", path_matched: true } }),
    ).toThrow(/\/path: got string " "; expected null/);
  });
});

describe("gatewayClient checks every 2xx reply", () => {
  const replies = new Map<string, { status: number; body: unknown }>();
  let server: http.Server;
  let baseUrl: string;

  beforeAll(async () => {
    // A stand-in gateway: the real description (built from the gateway's routes, as GET /v1/openapi.json
    // serves it), and whatever reply a test sets for a request.
    const config = loadGatewayConfig({});
    const api = v1Routes({ config, clients: createServiceClients(config), log: createLogger("test", "silent") });
    replies.set("GET /v1/openapi.json", { status: 200, body: buildDocument(api.operations, { serverUrl: config.PUBLIC_URL }) });
    server = http.createServer((req, res) => {
      const reply = replies.get(`${req.method} ${req.url}`) ?? {
        status: 404,
        body: { detail: "no route", error: { code: "not_found", message: "no route", details: {} } },
      };
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify(reply.body));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it("fails the call naming the route, the shape, the field's pointer, its type and what was expected", async () => {
    replies.set("GET /v1/tools/search?query=echo", { status: 200, body: [tool(), { ...tool(), path: null }] });
    const call = gatewayClient(baseUrl);
    const failure = await call("GET", "/tools/search?query=echo", { key: "k" }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ShapeMismatchError);
    const message = (failure as Error).message;
    expect(message).toContain("GET /v1/tools/search?query=echo -> 200: body is not a Tool[]");
    expect(message).toContain('SERVICE-SPEC "Tool (full shape)"');
    expect(message).toContain("/1/path: got null; expected string");
  });

  it("passes a good body through, and leaves error statuses to the test", async () => {
    const call = gatewayClient(baseUrl);
    replies.set(`GET /v1/services/public/${SERVICE_ID}`, { status: 200, body: service() });
    expect((await call("GET", `/services/public/${SERVICE_ID}`)).body).toEqual(service());
    const consent = { tool_id: TOOL_ID, tool_name: "t", parameters: {}, confirm_token: "t", expires_at: "2026-01-01T00:00:00Z" };
    const confirm = {
      detail: "confirm",
      error: { code: "confirmation_required", message: "confirm", details: { tool_id: TOOL_ID, consent, confirm_token: "t" } },
      confirm_token: "t",
      consent,
    };
    replies.set(`POST /v1/tools/call/${TOOL_ID}`, { status: 409, body: confirm });
    expect((await call("POST", `/tools/call/${TOOL_ID}`, { body: {} })).status).toBe(409);
  });

  it("fails a reply the description does not allow: an undescribed status, a body off its schema, an unknown route", async () => {
    const call = gatewayClient(baseUrl);
    replies.set(`GET /v1/services/public/${SERVICE_ID}/tools`, { status: 418, body: { detail: "teapot" } });
    await expect(call("GET", `/services/public/${SERVICE_ID}/tools`)).rejects.toThrow(
      /-> 418: status 418 is not described for GET \/v1\/services\/public\/\{service_id\}\/tools/,
    );
    replies.set(`POST /v1/tools/call/${TOOL_ID}`, { status: 409, body: { detail: "confirm", confirm_token: "t" } });
    const failure = await call("POST", `/tools/call/${TOOL_ID}`, { body: {} }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(DescriptionMismatchError);
    expect((failure as Error).message).toContain("body does not match the described schema");
    replies.set("GET /v1/no/such/route", { status: 200, body: {} });
    await expect(call("GET", "/no/such/route")).rejects.toThrow(/no described route, so 404 was expected/);
  });

  it("fails a 2xx that carries no body where a shape is due", async () => {
    replies.set(`GET /v1/tools/${TOOL_ID}`, { status: 200, body: null });
    const call = gatewayClient(baseUrl);
    await expect(call("GET", `/tools/${TOOL_ID}`)).rejects.toThrow(/\(body\): got null; expected object/);
  });
});
