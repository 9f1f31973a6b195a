/**
 * The `api` adapter: builds the upstream request from the imported operation and the caller's input,
 * attaches the connected credential per the service's security scheme, sends it through the guarded
 * Outbound client and turns the answer into a result or a classified failure.
 *
 * Request building:
 * - each declared parameter takes the input value under its key, else its default; enum values are
 *   checked; path values are percent-encoded (`/` too unless encode_slashes is false), query values
 *   repeat the key for arrays, header values join arrays with commas, cookies go in one Cookie header;
 *   objects in query/header/cookie are sent as JSON text;
 * - body parameters form a JSON object ({name: value}), or are the whole body when the operation's body
 *   is not an object (the catalog imports it as one `body` parameter); the body is encoded per the
 *   operation's media type (JSON, form, text);
 * - input keys that match no parameter are ignored (the schema check already refused unknown ones when
 *   the schema forbids them).
 */

import type { Json, JsonObject } from "@toolport/kit/json-values";
import { isObject } from "@toolport/kit/json-values";
import { findRefusal, type Outbound, type OutboundRequest, outboundFailureKind } from "@toolport/kit/outbound";
import { classifyHttpStatus, ExecutionFailure } from "../domain/failure.js";
import type { Credential, SecurityScheme, ToolForCall, ToolParameter } from "../domain/model.js";
import type { InjectedCredential } from "../domain/redaction/redact.js";

export interface BuiltRequest {
  request: OutboundRequest;
  /** Every secret placed in the request, for exact-value masking of the answer. */
  injected: InjectedCredential[];
  /** Header names holding the credential (dropped on cross-origin redirects). */
  sensitiveHeaders: string[];
}

export function buildRequest(tool: ToolForCall, input: JsonObject, credential?: Credential): BuiltRequest {
  let path = tool.path || "/";
  const query: Array<[string, string]> = [];
  const headers: Record<string, string> = {
    accept: "application/json, text/plain;q=0.9, */*;q=0.5",
    "user-agent": "Toolport/0.1",
  };
  const cookies: string[] = [];
  const bodyFields: JsonObject = {};
  let wholeBody: Json | undefined;
  let hasBody = false;

  for (const p of tool.parameters) {
    const given = Object.hasOwn(input, p.key) ? input[p.key] : undefined;
    const value = given === undefined ? p.default : given;
    if (value === undefined || value === null) {
      if (p.location === "path") throw callerInput(`missing path parameter ${p.key}`, p.key);
      continue;
    }
    if (p.enum && p.enum.length > 0 && !p.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
      throw callerInput(`${p.key} must be one of ${p.enum.map((e) => JSON.stringify(e)).join(", ")}`, p.key);
    }
    switch (p.location) {
      case "path": {
        const encoded = encodeURIComponent(scalarText(value));
        const segment = p.encodeSlashes === false ? encoded.replace(/%2F/gi, "/") : encoded;
        path = path.split(`{${p.name}}`).join(segment);
        break;
      }
      case "query":
        if (Array.isArray(value)) for (const v of value) query.push([p.name, scalarText(v)]);
        else query.push([p.name, scalarText(value)]);
        break;
      case "header":
        headers[p.name.toLowerCase()] = Array.isArray(value) ? value.map(scalarText).join(",") : scalarText(value);
        break;
      case "cookie":
        cookies.push(`${p.name}=${encodeURIComponent(scalarText(value))}`);
        break;
      case "body":
        hasBody = true;
        if (isWholeBody(tool, p)) wholeBody = value;
        else bodyFields[p.name] = value;
        break;
    }
  }
  const leftover = path.match(/\{[^}]+\}/);
  if (leftover) throw callerInput(`missing path parameter ${leftover[0].slice(1, -1)}`, leftover[0].slice(1, -1));

  const url = joinUrl(tool.baseUrl, path);
  for (const [k, v] of query) url.searchParams.append(k, v);

  const injected: InjectedCredential[] = [];
  const sensitiveHeaders: string[] = [];
  if (credential) attachCredential(credential, tool.securitySchemes, { url, headers, cookies, injected, sensitiveHeaders });
  if (cookies.length > 0) headers.cookie = cookies.join("; ");

  let body: string | undefined;
  if (hasBody) {
    const payload = wholeBody !== undefined ? wholeBody : bodyFields;
    const type = tool.requestBodyContentType || "application/json";
    if (type === "application/x-www-form-urlencoded" && isObject(payload)) {
      body = new URLSearchParams(Object.entries(payload).map(([k, v]): [string, string] => [k, scalarText(v)])).toString();
      headers["content-type"] = type;
    } else if (type.startsWith("text/") && typeof payload === "string") {
      body = payload;
      headers["content-type"] = type;
    } else {
      body = JSON.stringify(payload);
      headers["content-type"] = /json/.test(type) ? type : "application/json";
    }
  }
  return { request: { method: (tool.method || "GET").toUpperCase(), url, headers, body }, injected, sensitiveHeaders };
}

function isWholeBody(tool: ToolForCall, p: ToolParameter): boolean {
  const schema = tool.requestBodySchema;
  const objectBody =
    schema &&
    (schema.type === "object" || (schema.type === undefined && isObject(schema.properties))) &&
    isObject(schema.properties);
  return !objectBody && p.name === "body";
}

function attachCredential(
  credential: Credential,
  schemes: SecurityScheme[],
  into: {
    url: URL;
    headers: Record<string, string>;
    cookies: string[];
    injected: InjectedCredential[];
    sensitiveHeaders: string[];
  },
): void {
  switch (credential.kind) {
    case "api_key": {
      const scheme = schemes.find((s) => s.type === "apiKey");
      const location = credential.location || scheme?.location || "header";
      const name = credential.parameterName || scheme?.parameterName || "X-API-Key";
      if (location === "query") into.url.searchParams.set(name, credential.value);
      else if (location === "cookie") into.cookies.push(`${name}=${encodeURIComponent(credential.value)}`);
      else {
        into.headers[name.toLowerCase()] = credential.value;
        into.sensitiveHeaders.push(name.toLowerCase());
      }
      into.injected.push({ value: credential.value, field: "API_KEY" });
      return;
    }
    case "bearer":
      into.headers.authorization = `Bearer ${credential.token}`;
      into.injected.push({ value: credential.token, field: "BEARER_TOKEN" });
      return;
    case "basic":
      into.headers.authorization = `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString("base64")}`;
      into.injected.push({ value: credential.password, field: "PASSWORD" });
      into.injected.push({ value: `${credential.username}:${credential.password}`, field: "BASIC_AUTH" });
      return;
    case "oauth":
      // RFC 6750 §2.1, whatever case the provider wrote its token_type in.
      into.headers.authorization = `Bearer ${credential.token}`;
      into.injected.push({ value: credential.token, field: "OAUTH_ACCESS_TOKEN" });
      return;
  }
}

function joinUrl(baseUrl: string, path: string): URL {
  if (!baseUrl) throw new ExecutionFailure("platform", "no_base_url", "the service has no upstream base URL configured");
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new ExecutionFailure("platform", "bad_base_url", "the service's upstream base URL is not a valid URL");
  }
  const prefix = base.pathname.replace(/\/+$/, "");
  const url = new URL(base.origin);
  url.pathname = `${prefix}/${path.replace(/^\/+/, "")}`;
  for (const [k, v] of base.searchParams) url.searchParams.append(k, v);
  return url;
}

function scalarText(value: Json): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function callerInput(message: string, field: string): ExecutionFailure {
  const failure = new ExecutionFailure("caller", "invalid_parameters", message);
  (failure as ExecutionFailure & { field?: string }).field = field;
  return failure;
}

export interface RestLimits {
  timeoutMs: number;
  maxBytes: number;
}

const BINARY = /^(image|audio|video)\/|^application\/(octet-stream|pdf|zip|gzip|x-tar|protobuf|x-protobuf)/;

/** Runs an `api` tool; returns the upstream's answer as JSON (or text), or throws ExecutionFailure. */
export async function callRest(outbound: Outbound, built: BuiltRequest, limits: RestLimits): Promise<Json> {
  let res: Awaited<ReturnType<Outbound["send"]>>;
  try {
    res = await outbound.send(built.request, { ...limits, sensitiveHeaders: built.sensitiveHeaders });
  } catch (err) {
    throw transportFailure(err, limits);
  }
  const type = (res.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  const text = BINARY.test(type) ? undefined : res.body.toString("utf8");
  if (res.status < 200 || res.status >= 300) {
    const snippet = text === undefined ? `${res.body.length} bytes of ${type}` : text.slice(0, 500);
    throw new ExecutionFailure(
      classifyHttpStatus(res.status),
      `http_${res.status}`,
      `upstream answered HTTP ${res.status}: ${snippet}`,
    );
  }
  if (text === undefined) return { content_type: type, encoding: "base64", data: res.body.toString("base64") };
  if (text.length === 0) return null;
  if (type === "application/json" || type.endsWith("+json") || type === "") {
    try {
      return JSON.parse(text) as Json;
    } catch {
      if (type !== "") throw new ExecutionFailure("upstream", "invalid_json", "upstream answered with malformed JSON");
      return text;
    }
  }
  return text;
}

/** Maps a failure to reach or read the upstream onto a classified failure (one branch per cause). */
export function transportFailure(err: unknown, limits: { timeoutMs: number; maxBytes: number }): ExecutionFailure {
  if (err instanceof ExecutionFailure) return err;
  const { kind, code } = outboundFailureKind(err);
  const fail = (type: string, message: string) => new ExecutionFailure("upstream", type, message, { cause: err });
  switch (kind) {
    // The address policy refused the host: the upstream is unreachable by policy.
    case "address_not_allowed":
      return fail("address_not_allowed", (findRefusal(err) as Error).message);
    case "response_too_large":
    case "too_many_redirects":
      return fail(kind, (err as Error).message);
    case "timeout":
      return fail("timeout", `the upstream did not answer within ${limits.timeoutMs} ms`);
    case "dns_failure":
      return fail("dns_failure", "the upstream host name does not resolve");
    default:
      // Refused or reset connections, TLS errors.
      return fail("connection_failed", code ? `could not connect to the upstream (${code})` : "the upstream request failed");
  }
}
