/**
 * MCP authorization (issue 32): /mcp is a protected resource (RFC 9728) whose authorization server is
 * Toolport's identity service, at the gateway's public origin.
 *
 * - A request carries `svc-api-key` (as always), or `Authorization: Bearer` with an access token that
 *   server issued. Neither: 401 with `WWW-Authenticate: Bearer resource_metadata="…", scope="mcp"`, which
 *   sends an MCP client to discovery.
 * - A token is checked on every request (GET /v1/oauth/token-info: unknown, expired, revoked, or its
 *   grant revoked are all refused at once) and must have been issued for this server's resource
 *   (RFC 8707): a token for another resource is refused with `invalid_token`. The grant it acts as is
 *   passed to the tools in GRANT_HEADER, so state sealed for a caller survives the token's refresh.
 * - The token then travels to the gateway as the caller's credential, as a key does. The gateway is this
 *   server's own back end, authenticated by the same identity service and granting a token exactly its
 *   grant's permissions; it is not a third-party API the token would be passed through to.
 *
 * `/.well-known/oauth-protected-resource/mcp` (the path-suffixed form RFC 9728 3.1 names) and
 * `/.well-known/oauth-protected-resource` answer the metadata, with CORS open for browser clients.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GatewayClient } from "./gateway-client.js";

export const MCP_SCOPE = "mcp";
export const METADATA_PATHS = ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"];

export interface AuthorizationSettings {
  /** The authorization server's issuer: the gateway's public origin. */
  issuer: string;
  /** This server's resource (MCP_PUBLIC_URL); unset: http://<Host>/mcp of each request. */
  resource?: string;
}

/** This server's resource identifier, as clients name it in `resource` and tokens carry it. */
export function resourceOf(settings: AuthorizationSettings, req: IncomingMessage): string {
  return settings.resource ?? `http://${req.headers.host ?? "localhost"}/mcp`;
}

export function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname === "/" ? "" : url.pathname}`;
}

/** The protected resource metadata (RFC 9728 2). */
export function protectedResourceMetadata(resource: string, issuer: string): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "Toolport MCP server",
    resource_documentation: `${issuer}/docs`,
  };
}

export function sendMetadata(req: IncomingMessage, res: ServerResponse, settings: AuthorizationSettings): void {
  res.setHeader("access-control-allow-origin", "*");
  if (req.method === "OPTIONS") {
    res.writeHead(204, {
      "access-control-allow-methods": "GET, OPTIONS",
      "access-control-allow-headers": "mcp-protocol-version",
    });
    res.end();
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD, OPTIONS" });
    res.end();
    return;
  }
  const body = JSON.stringify(protectedResourceMetadata(resourceOf(settings, req), settings.issuer));
  res.writeHead(200, { "content-type": "application/json", "cache-control": "public, max-age=3600" });
  res.end(req.method === "HEAD" ? undefined : body);
}

export type Verdict =
  | { ok: true; grant?: string }
  | { ok: false; status: 401; error?: "invalid_token"; description: string }
  | { ok: false; status: 503; description: string };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Whether this request may reach the tools, and as which grant when it carries a token. */
export async function authorize(req: IncomingMessage, gateway: GatewayClient, settings: AuthorizationSettings): Promise<Verdict> {
  const key = req.headers["svc-api-key"];
  if (typeof key === "string" && key.trim() !== "") return { ok: true };
  const bearer = BEARER.exec(req.headers.authorization ?? "")?.[1];
  if (!bearer)
    return {
      ok: false,
      status: 401,
      description:
        "authorization required: sign in through OAuth (see WWW-Authenticate), or send a Toolport API key in svc-api-key",
    };
  let info: Awaited<ReturnType<GatewayClient["tokenInfo"]>>;
  try {
    info = await gateway.tokenInfo(bearer);
  } catch (err) {
    return { ok: false, status: 503, description: `the token could not be checked: ${(err as Error).message}` };
  }
  if (info === "inactive")
    return { ok: false, status: 401, error: "invalid_token", description: "the access token is unknown, expired or revoked" };
  const resource = resourceOf(settings, req);
  if (info.resource !== resource)
    return {
      ok: false,
      status: 401,
      error: "invalid_token",
      description: `the access token was issued for ${info.resource}, not this server (${resource})`,
    };
  return { ok: true, grant: info.keyId };
}

/** The refusal: a 401 challenge that points to discovery, or a 503 when the check itself failed. */
export function sendRefusal(
  req: IncomingMessage,
  res: ServerResponse,
  settings: AuthorizationSettings,
  verdict: Exclude<Verdict, { ok: true }>,
): void {
  const headers: Record<string, string> = { "content-type": "application/json", "cache-control": "no-store" };
  if (verdict.status === 401) {
    const params = [
      ...(verdict.error ? [`error="${verdict.error}"`, `error_description="${verdict.description.replaceAll('"', "'")}"`] : []),
      `resource_metadata="${metadataUrlOf(resourceOf(settings, req))}"`,
      `scope="${MCP_SCOPE}"`,
    ];
    headers["www-authenticate"] = `Bearer ${params.join(", ")}`;
  } else headers["retry-after"] = "1";
  res.writeHead(verdict.status, headers);
  res.end(
    JSON.stringify({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000, message: verdict.description },
    }),
  );
}
