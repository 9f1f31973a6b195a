/** Runs a tool on its upstream by service type: REST (`api`), MCP (`mcp_server`) or built-in (`internal`). */
import { findJsonViolation } from "@toolport/kit/json-guard";
import type { JsonObject } from "@toolport/kit/json-values";
import type { Logger } from "@toolport/kit/logger";
import { upstreamCallSeconds } from "@toolport/kit/metrics";
import type { Outbound } from "@toolport/kit/outbound";
import { inSpan, SpanKind } from "@toolport/kit/tracing";
import type { Resumption } from "../domain/continuation.js";
import { ExecutionFailure } from "../domain/failure.js";
import type { Credential, SecurityScheme, ToolForCall } from "../domain/model.js";
import type { Runner, RunOutput } from "../domain/ports.js";
import type { InjectedCredential } from "../domain/redaction/redact.js";
import { callInternal } from "./internal.js";
import { McpSessions } from "./mcp.js";
import { buildRequest, callRest } from "./rest.js";
import type { SecretRefs } from "./secret-refs.js";

export interface RunnerOptions {
  outbound: Outbound;
  secrets: SecretRefs;
  log: Logger;
  timeoutMs: number;
  maxResponseBytes: number;
}

export class UpstreamRunner implements Runner {
  readonly mcp: McpSessions;

  constructor(private readonly options: RunnerOptions) {
    this.mcp = new McpSessions(options.outbound, options.log);
  }

  async resolveSecrets(credential: Credential): Promise<Credential> {
    const s = this.options.secrets;
    switch (credential.kind) {
      case "api_key":
        return { ...credential, value: await s.resolve(credential.value) };
      case "bearer":
        return { ...credential, token: await s.resolve(credential.token) };
      case "basic":
        return { ...credential, password: await s.resolve(credential.password) };
      case "oauth":
        // Tokens from an OAuth flow are never references.
        return credential;
    }
  }

  injected(credential: Credential | undefined): InjectedCredential[] {
    if (!credential) return [];
    switch (credential.kind) {
      case "api_key":
        return [{ value: credential.value, field: "API_KEY" }];
      case "bearer":
        return [{ value: credential.token, field: "BEARER_TOKEN" }];
      case "basic":
        return [
          { value: credential.password, field: "PASSWORD" },
          { value: `${credential.username}:${credential.password}`, field: "BASIC_AUTH" },
        ];
      case "oauth":
        return [{ value: credential.token, field: "OAUTH_ACCESS_TOKEN" }];
    }
  }

  /** The upstream call, timed (kit/metrics) and traced as a client span (kit/tracing). */
  run(tool: ToolForCall, input: JsonObject, credential: Credential | undefined, resumption?: Resumption): Promise<RunOutput> {
    const attributes = {
      "toolport.tool_id": tool.id,
      "toolport.tool_name": tool.name,
      "toolport.service_type": tool.serviceType,
    };
    return inSpan(`upstream ${tool.name}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const started = performance.now();
      let outcome = "platform";
      try {
        const output = await this.runOnUpstream(tool, input, credential, resumption);
        if (tool.serviceType !== "internal") checkDepth(output.value);
        outcome = "success";
        return output;
      } catch (err) {
        if (err instanceof ExecutionFailure) outcome = err.errorClass;
        throw err;
      } finally {
        span.setAttribute("toolport.outcome", outcome);
        upstreamCallSeconds.observe(
          { tool: tool.id, service_type: tool.serviceType, outcome },
          (performance.now() - started) / 1000,
        );
      }
    });
  }

  private async runOnUpstream(
    tool: ToolForCall,
    input: JsonObject,
    credential: Credential | undefined,
    resumption?: Resumption,
  ): Promise<RunOutput> {
    const { timeoutMs, maxResponseBytes } = this.options;
    switch (tool.serviceType) {
      case "api":
        return {
          value: await callRest(this.options.outbound, buildRequest(tool, input, credential), {
            timeoutMs,
            maxBytes: maxResponseBytes,
          }),
        };
      case "mcp_server":
        if (!tool.mcpServerUrl)
          throw new ExecutionFailure("platform", "no_mcp_url", "the service has no MCP server URL configured");
        return {
          value: await this.mcp.call({
            url: tool.mcpServerUrl,
            toolName: tool.mcpToolName,
            input,
            headers: mcpHeaders(credential, tool.securitySchemes),
            timeoutMs,
            resumption,
          }),
        };
      case "internal":
        return { value: await callInternal(tool.internalHandler, input) };
    }
  }

  close(): Promise<void> {
    return this.mcp.close();
  }
}

/**
 * Deepest upstream answer carried (objects and arrays). JSON.parse reads any depth, but every step after
 * it (redaction, projection, caps, JSON.stringify for storage and the wire) must not run out of stack;
 * real APIs answer a few dozen levels deep at most. Deeper is a failed execution the caller can read.
 */
export const MAX_RESULT_DEPTH = 1000;

function checkDepth(value: unknown): void {
  if (findJsonViolation(value, MAX_RESULT_DEPTH)?.kind === "depth") {
    throw new ExecutionFailure(
      "upstream",
      "result_too_deep",
      `the upstream answer is nested deeper than ${MAX_RESULT_DEPTH} levels; it was not kept`,
    );
  }
}

/**
 * An MCP server takes the caller's credential in request headers, per the scheme its publisher declared
 * (catalog README, "MCP servers that need a credential"): bearer, OAuth and basic in Authorization, an API key
 * in the scheme's header unless the credential names its own.
 */
function mcpHeaders(credential: Credential | undefined, schemes: SecurityScheme[]): Record<string, string> {
  if (!credential) return {};
  switch (credential.kind) {
    case "api_key": {
      const header = credential.parameterName || schemes.find((s) => s.type === "apiKey")?.parameterName || "x-api-key";
      return { [header.toLowerCase()]: credential.value };
    }
    case "bearer":
    case "oauth":
      return { authorization: `Bearer ${credential.token}` };
    case "basic":
      return { authorization: `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString("base64")}` };
  }
}
