/** The MCP server's environment, parsed once at start. */
import { commaList, loadConfig, logLevel, port, url } from "@toolport/kit/config";
import { z } from "zod";

export function loadMcpConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: port(8090).describe("port the MCP server listens on"),
      HOST: z.string().default("127.0.0.1").describe("interface to listen on (0.0.0.0 in containers)"),
      GATEWAY_URL: url(["http", "https"], "http://127.0.0.1:8080").describe("the gateway this server calls (without /v1)"),
      MCP_TRUST_PROXY: z
        .enum(["true", "false"])
        .default("false")
        .transform((v) => v === "true")
        .describe("keep the X-Forwarded-For a client sent and append its address (only behind a trusted balancer)"),
      MCP_PUBLIC_URL: url(["http", "https"])
        .optional()
        .describe(
          "the address clients are given for this server; its host is a name `Host` may carry, and it is the OAuth resource tokens must be issued for (unset: http://<Host>/mcp of each request)",
        ),
      PUBLIC_URL: url(["http", "https"], "http://localhost:8080").describe(
        "the gateway's public address (without /v1): its origin is the OAuth authorization server clients are sent to",
      ),
      MCP_ALLOWED_HOSTS: commaList().describe(
        "more host names (comma-separated, no port) a request's Host may carry, beyond the loopback names (when HOST is a loopback interface) and MCP_PUBLIC_URL's host",
      ),
      MCP_ALLOWED_ORIGINS: commaList()
        .refine((origins) => origins.every((o) => /^https?:\/\/[^/]+\/?$/.test(o) && URL.canParse(o)), {
          message: "each entry must be an origin: http(s)://host[:port]",
        })
        .describe(
          "origins (comma-separated, scheme://host[:port]) whose browser pages may call /mcp, beyond those on an allowed host",
        ),
      MCP_REQUEST_STATE_KEY: z
        .string()
        .min(32, "must be at least 32 characters")
        .optional()
        .describe(
          "secret (32+ characters) sealing the requestState of consent questions (2026-07-28 input_required); the same on every replica. Unset: a random key per process, so a question asked by one replica is answered only there",
        ),
      SHUTDOWN_GRACE_MS: z.coerce
        .number()
        .int()
        .min(0)
        .default(10_000)
        .describe("how long in-flight requests may run after SIGTERM"),
      LOG_LEVEL: logLevel,
    },
    env,
  );
}

export type McpConfig = ReturnType<typeof loadMcpConfig>;
