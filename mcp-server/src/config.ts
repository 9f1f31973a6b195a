/** The MCP server's environment, parsed once at start. */
import { loadConfig, logLevel, port, url } from "@toolport/kit/config";
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
