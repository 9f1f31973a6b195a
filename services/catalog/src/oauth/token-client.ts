/**
 * The OAuth 2.0 client side the catalog needs: the token endpoint's authorization-code (with the PKCE
 * verifier, RFC 7636), refresh-token and client-credentials grants (RFC 6749 §4.1.3, §6, §4.4) and token
 * revocation (RFC 7009). Every request goes through the guarded outbound client, because the URLs come
 * from a publisher's document or registration.
 *
 * Written here rather than with oauth4webapi: its callback validation needs the authorization server's
 * issuer, which an OpenAPI document does not give, and it insists on its own fetch; these four form
 * posts and one JSON answer are all we use of it.
 */
import type { Outbound } from "@toolport/kit/outbound";
import type { OAuthClientAuth } from "../domain/model.js";

export interface TokenClient {
  clientId: string;
  /** Null for a public client. */
  clientSecret: string | null;
  clientAuth: OAuthClientAuth;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  tokenType: string;
  /** Seconds, when the provider said. */
  expiresIn?: number;
  /** The granted scopes when the provider said (space-separated in the answer). */
  scope?: string[];
}

/**
 * The provider answered with an OAuth error (`error` from RFC 6749 §5.2, e.g. `invalid_grant`), or not with
 * a usable token. `status` is the HTTP status (0 when no answer came).
 */
export class OAuthProviderError extends Error {
  override name = "OAuthProviderError";
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const TIMEOUT_MS = 15_000;
const MAX_BYTES = 256 * 1024;

export async function exchangeCode(
  outbound: Outbound,
  tokenUrl: string,
  client: TokenClient,
  input: { code: string; redirectUri: string; codeVerifier: string; resource?: string },
): Promise<TokenSet> {
  return tokenRequest(outbound, tokenUrl, client, {
    grant_type: "authorization_code",
    code: input.code,
    redirect_uri: input.redirectUri,
    code_verifier: input.codeVerifier,
    ...(input.resource ? { resource: input.resource } : {}),
  });
}

export async function refreshTokens(
  outbound: Outbound,
  tokenUrl: string,
  client: TokenClient,
  refreshToken: string,
  /** The resource indicator (RFC 8707) an MCP server's tokens are bound to. */
  resource?: string,
): Promise<TokenSet> {
  return tokenRequest(outbound, tokenUrl, client, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    ...(resource ? { resource } : {}),
  });
}

export async function clientCredentials(
  outbound: Outbound,
  tokenUrl: string,
  client: TokenClient,
  scopes: string[],
): Promise<TokenSet> {
  return tokenRequest(outbound, tokenUrl, client, {
    grant_type: "client_credentials",
    ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}),
  });
}

/** RFC 7009: true when the provider confirmed (200); an unsupported or failed revocation is false. */
export async function revokeToken(
  outbound: Outbound,
  revocationUrl: string,
  client: TokenClient,
  token: string,
  hint: "refresh_token" | "access_token",
): Promise<boolean> {
  const { headers, form } = authenticated(client, { token, token_type_hint: hint });
  try {
    const res = await outbound.send(
      { method: "POST", url: new URL(revocationUrl), headers, body: form.toString() },
      { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES },
    );
    return res.status === 200;
  } catch {
    return false;
  }
}

function authenticated(client: TokenClient, params: Record<string, string>) {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (client.clientSecret !== null && client.clientAuth === "client_secret_basic") {
    // RFC 6749 §2.3.1: both parts form-encoded before joining.
    const user = `${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString("base64")}`;
  } else {
    form.set("client_id", client.clientId);
    if (client.clientSecret !== null) form.set("client_secret", client.clientSecret);
  }
  return { headers, form };
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}

async function tokenRequest(
  outbound: Outbound,
  tokenUrl: string,
  client: TokenClient,
  params: Record<string, string>,
): Promise<TokenSet> {
  const { headers, form } = authenticated(client, params);
  let res: Awaited<ReturnType<Outbound["send"]>>;
  try {
    res = await outbound.send(
      { method: "POST", url: new URL(tokenUrl), headers, body: form.toString() },
      { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES },
    );
  } catch (err) {
    throw new OAuthProviderError("unreachable", 0, "the token endpoint could not be reached", { cause: err });
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(res.body.toString("utf8")) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: judged by the status below.
  }
  if (res.status !== 200 || typeof body.error === "string") {
    const code = typeof body.error === "string" ? body.error : `http_${res.status}`;
    // error_description is the provider's text about the request, never a token; kept short.
    const described = typeof body.error_description === "string" ? `: ${body.error_description.slice(0, 200)}` : "";
    throw new OAuthProviderError(code, res.status, `the token endpoint refused the request (${code}${described})`);
  }
  if (typeof body.access_token !== "string" || body.access_token === "") {
    throw new OAuthProviderError("invalid_token_response", res.status, "the token endpoint answered without an access_token");
  }
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" && body.refresh_token !== "" ? body.refresh_token : undefined,
    tokenType: typeof body.token_type === "string" ? body.token_type : "Bearer",
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined,
    scope: typeof body.scope === "string" ? body.scope.split(" ").filter(Boolean) : undefined,
  };
}
