/** The gateway's own routes: health (routes/health.ts) and this description (routes/openapi.ts). */
import type { OperationDoc } from "../describe.js";
import { closed, oneOf, type Schema, string } from "../schemas.js";

const serviceStatus = oneOf("serving", "not_serving", "unreachable");
const services: Schema = {
  type: "object",
  description: "Each service behind the gateway and its status.",
  additionalProperties: serviceStatus,
};
const nats: Schema = {
  ...oneOf("connected", "disconnected", "unknown"),
  description:
    "NATS as the services see it (each asked to reach it now): `connected`, `disconnected` (one could not; 503), or `unknown` (no service answered).",
};
const roles: Schema = {
  type: "object",
  description: "The gateway and each role it depends on: its status and where it runs (`in_process`, or its address).",
  additionalProperties: closed(
    { status: { ...string, description: "`serving` or the service's status." }, runs: string },
    { pid: { type: "integer" } },
  ),
};

export const systemOps = {
  health: {
    operationId: "getHealth",
    summary: "Health of every service",
    description:
      "Checks each service's gRPC health, and NATS as the services see it, now. 200 when all serve and NATS is reached; 503 naming " +
      "each one that does not, and `nats` when a service cannot reach it (with `Retry-After: 1`). For people and alerts: " +
      "Kubernetes probes `GET /livez` (liveness) and `GET /readyz` (readiness), which check only the gateway.",
    tags: ["System"],
    responses: {
      200: {
        description: "Every service serves.",
        schema: closed({ status: { const: "ok" }, services, nats, roles }),
        example: {
          status: "ok",
          services: {
            catalog: "serving",
            execution: "serving",
            billing: "serving",
            identity: "serving",
            content: "serving",
            webhooks: "serving",
          },
          nats: "connected",
          roles: {
            gateway: { status: "serving", runs: "in_process", pid: 4242 },
            catalog: { status: "serving", runs: "toolport-catalog:50051" },
            execution: { status: "serving", runs: "toolport-execution:50052" },
            billing: { status: "serving", runs: "toolport-billing:50053" },
            identity: { status: "serving", runs: "toolport-identity:50054" },
            content: { status: "serving", runs: "toolport-content:50055" },
            webhooks: { status: "serving", runs: "toolport-webhooks:50056" },
          },
        },
      },
      503: {
        description: "At least one service does not serve; `error.details.down` names them.",
        headers: { "Retry-After": { description: "Seconds to wait before checking again.", schema: { type: "integer" } } },
        schema: closed({
          status: { const: "unavailable" },
          services,
          nats,
          roles,
          detail: string,
          error: closed({
            code: string,
            message: string,
            details: closed({ down: { type: "array", items: string } }),
          }),
        }),
      },
    },
  },
  openApiJson: {
    operationId: "getOpenApiJson",
    summary: "This description, as JSON",
    description: "The OpenAPI 3.1 description of /v1 (version 1.0.0), built from the routes themselves.",
    tags: ["System"],
    responses: {
      200: {
        description: "The OpenAPI document.",
        schema: { type: "object", required: ["openapi", "info", "paths"] },
        example: { openapi: "3.1.0", info: { title: "Toolport API", version: "1.0.0" }, paths: { "/v1/health": {} } },
      },
    },
  },
  openApiYaml: {
    operationId: "getOpenApiYaml",
    summary: "This description, as YAML",
    description: "The same document as `GET /v1/openapi.json`, in YAML.",
    tags: ["System"],
    responses: { 200: { description: "The OpenAPI document.", contentType: "application/yaml", schema: string } },
  },
} satisfies Record<string, OperationDoc>;
