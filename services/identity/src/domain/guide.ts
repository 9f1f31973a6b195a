/**
 * The registration guide (`getting_started`): what a freshly registered agent needs to reach its
 * first successful call without reading anything else. Every URL is absolute, built from this
 * deployment's public addresses.
 */
import type { StarterTool } from "./ports.js";

export interface PublicAddresses {
  /** API root, ending in /v1. */
  baseUrl: string;
  mcpUrl: string;
}

export interface TryFirst {
  toolId: string;
  name: string;
  service: string;
  description: string;
  parameters: Record<string, unknown>;
  execute: { method: "POST"; url: string; headers: Record<string, string>; body: { tool_input: Record<string, unknown> } };
}

export interface Guide {
  freeTier: { callsPerMonth: number; note: string };
  endpoints: { mcp: string; search: string; describe: string; execute: string; authHeader: string };
  tryFirst: TryFirst[];
  steps: string[];
  readNext: { skill: string; quickstart: string };
}

export const API_KEY_PLACEHOLDER = "<API_KEY>";

/** Normalises a public API root: no trailing slash, ends in /v1. */
export function apiRoot(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}

export function registrationUrl(addresses: PublicAddresses): string {
  return `${addresses.baseUrl}/agents/getting-started`;
}

/**
 * @param apiKey the new key for a registration response (examples are then ready to send as they
 *   are); the placeholder for the public guide.
 */
export function buildGuide(
  addresses: PublicAddresses,
  freeCallsPerMonth: number,
  starters: StarterTool[],
  apiKey: string = API_KEY_PLACEHOLDER,
): Guide {
  const base = addresses.baseUrl;
  const calls = freeCallsPerMonth.toLocaleString("en-US");
  return {
    freeTier: {
      callsPerMonth: freeCallsPerMonth,
      note:
        `Credential-free tools are free for ${calls} calls a month. Priced tools draw on your USDC wallet ` +
        `(fund it with POST ${base}/agents/wallets/fund), and tools whose readiness is needs_credential need a ` +
        "credential connected to their service first.",
    },
    endpoints: {
      mcp: addresses.mcpUrl,
      search: `${base}/tools/search?query={query}`,
      describe: `${base}/tools/{tool_id}/describe`,
      execute: `${base}/tools/call/{tool_id}`,
      authHeader: `svc-api-key: ${apiKey}`,
    },
    tryFirst: starters.slice(0, 3).map((tool) => ({
      toolId: tool.toolId,
      name: tool.name,
      service: tool.service,
      description: tool.description,
      parameters: tool.parameters,
      execute: {
        method: "POST",
        url: `${base}/tools/call/${encodeURIComponent(tool.toolId)}`,
        headers: { "svc-api-key": apiKey, "content-type": "application/json" },
        body: { tool_input: tool.exampleInput },
      },
    })),
    steps: [
      `Send your API key in the svc-api-key header on every call; it was shown once, so store it now.`,
      `Find a tool with GET ${base}/tools/search?query=<what you need>, preferring tools whose readiness is ready.`,
      `Read its inputs with GET ${base}/tools/{tool_id}/describe before calling it.`,
      `Run it with POST ${base}/tools/call/{tool_id} and a JSON body {"tool_input": {...}}, or start with one of the try_first examples.`,
    ],
    readNext: {
      skill: `${base}/agents/skill.md`,
      quickstart: `${base}/agents/quickstart.md`,
    },
  };
}
