/** The gateway's environment, parsed once at start. */
import { flag, loadConfig, logLevel, port, serviceUrls, url } from "@toolport/kit/config";
import { z } from "zod";

export const gatewayEnv = {
  PORT: port(8080).describe("port the HTTP API listens on"),
  HOST: z.string().default("127.0.0.1").describe("interface to listen on (0.0.0.0 in containers)"),
  PUBLIC_URL: url(["http", "https"], "http://localhost:8080").describe(
    "address clients use to reach this gateway (without /v1); used in absolute links",
  ),
  MCP_PUBLIC_URL: url(["http", "https"], "http://localhost:8090/mcp").describe("address clients use for the MCP server"),
  OAUTH_DYNAMIC_REGISTRATION: flag(false).describe(
    "serve OAuth dynamic client registration (RFC 7591) at /oauth/register and list it in the authorization server's metadata (set the same on identity)",
  ),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1_048_576).describe("largest request body accepted"),
  PUBLISH_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(26_214_400)
    .describe("largest body of POST /v1/services and POST /v1/services/{id}/reimport (an OpenAPI document inline)"),
  RPC_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(30_000)
    .describe(
      "how long a request waits on the services in all: every call to a service it makes ends by then (publishing and workflow runs have their own deadlines)",
    ),
  PUBLISH_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(180_000)
    .describe(
      "deadline of publishing (POST /v1/services, .../reimport, POST /v1/directory/import): a large document takes longer than a call",
    ),
  HEALTH_TIMEOUT_MS: z.coerce.number().int().min(100).default(2_000).describe("deadline of each service health check"),
  TRUST_PROXY: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe("take the client IP from X-Forwarded-For (only behind a trusted balancer)"),
  GATEWAY_AUTH_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(30_000)
    .describe(
      "how long the tool-call routes reuse an API key's principal without calling Authenticate (0 = off; revocation stays immediate, see middleware/auth.ts)",
    ),
  CONSOLE_DIR: z
    .string()
    .trim()
    .optional()
    .transform((v) => v || undefined)
    .describe(
      "serve the console at /console from this folder (a vite build of gateway/console) instead of the one built with the gateway",
    ),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000).describe("how long in-flight requests may run after SIGTERM"),
  LOG_LEVEL: logLevel,
  ...serviceUrls,
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(gatewayEnv, env);
}
