/**
 * MCP import: connect to the server with the official v2 SDK client (`@modelcontextprotocol/client`) over
 * Streamable HTTP (falling back to the older SSE transport when the server does not speak it), page
 * through `tools/list`, and make one tool per MCP tool. On Streamable HTTP the client probes with
 * `server/discover` and speaks protocol revision 2026-07-28 when the server does, else the 2025-11-25
 * `initialize` handshake; the tools are the same either way. The tool's path is `<service_id>/` (spec),
 * filled in once the service has an id. Both transports fetch through the guarded outbound client
 * (@toolport/kit/outbound), so the server's address, and every redirect hop the SDK follows (same-origin
 * only), is checked against the outbound address policy before it is dialled.
 */
import { Client, type Tool as McpTool, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { DomainError, invalidArgument } from "@toolport/kit/errors";
import type { Outbound } from "@toolport/kit/outbound";
import type { CredentialMaterial, JsonSchema, SecuritySchemeInfo, ToolDraft, ToolParameterInfo } from "../domain/model.js";
import { isObject, resolveRef, saysMore, schemaType } from "./json-schema.js";
import { addressNotAllowed } from "./refusal.js";
import { SchemaWriter } from "./schema-defs.js";

export interface ImportedMcpServer {
  name: string;
  title: string;
  version: string;
  description: string;
  transport: "streamable_http" | "sse";
  tools: ToolDraft[];
  warnings: string[];
}

const TIMEOUT_MS = 15_000;
const FIELD = "mcp_server.url";

/**
 * The request headers that carry a credential to an MCP server under its declared scheme: bearer and
 * basic in Authorization, an API key in the scheme's header (or the credential's own parameter_name).
 */
export function mcpAuthHeaders(scheme: SecuritySchemeInfo, material: CredentialMaterial): Record<string, string> {
  switch (material.type) {
    case "bearer":
      return { authorization: `Bearer ${material.token}` };
    case "basic":
      return { authorization: `Basic ${Buffer.from(`${material.username}:${material.password}`).toString("base64")}` };
    case "api_key":
      return { [(material.parameterName || scheme.parameterName || "x-api-key").toLowerCase()]: material.value };
    case "oauth2":
      return { authorization: `Bearer ${material.accessToken}` };
  }
}

/**
 * Lists the server's tools, sending `headers` (a credential) on every request. An unreachable or non-MCP
 * URL is a 400 naming the field, as is an address the outbound policy refuses (address_not_allowed); a
 * server refusing the connection (401/403) a 400 saying what to send.
 */
export async function importMcpServer(
  url: string,
  outbound: Outbound,
  headers: Record<string, string> = {},
): Promise<ImportedMcpServer> {
  let endpoint: URL;
  try {
    endpoint = new URL(url);
  } catch {
    throw invalidArgument("invalid_mcp_server_url", "mcp_server.url must be an absolute http(s) URL", {
      details: { field: "mcp_server.url" },
    });
  }
  if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:") {
    throw invalidArgument("invalid_mcp_server_url", "mcp_server.url must be an http(s) URL", {
      details: { field: "mcp_server.url" },
    });
  }
  // fetch refuses such a URL before dialling; say why rather than calling the server unreachable.
  if (endpoint.username || endpoint.password) {
    throw invalidArgument(
      "invalid_mcp_server_url",
      "mcp_server.url must not carry a user name or password (give mcp_server.credential instead)",
      { details: { field: "mcp_server.url" } },
    );
  }
  const { client, transport } = await connect(endpoint, headers, outbound);
  try {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    // Page by page here rather than the SDK's listTools(), which without a cursor walks up to 64 pages
    // itself and throws past them: this keeps the stop at 5000 tools.
    do {
      const page = await client.request(
        { method: "tools/list", params: cursor ? { cursor } : undefined },
        { timeout: TIMEOUT_MS },
      );
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && tools.length < 5000);
    const server = client.getServerVersion();
    const warnings: string[] = [];
    if (tools.length === 0) warnings.push("the MCP server lists no tools");
    return {
      name: server?.name ?? endpoint.host,
      title: (server as { title?: string } | undefined)?.title ?? server?.name ?? endpoint.host,
      version: server?.version ?? "",
      description: client.getInstructions() ?? "",
      transport,
      tools: tools.map((t) => toolFromMcp(t, server?.version ?? "", warnings)),
      warnings,
    };
  } catch (err) {
    const refused = addressNotAllowed(err, FIELD, endpoint);
    if (refused) throw refused;
    if (err instanceof DomainError) throw err;
    // Connected, then the server failed (closed the connection, timed out, answered tools/list with an
    // error or something that is not a tool list): the caller's to retry or fix, and nothing is stored.
    throw invalidArgument(
      "mcp_server_unreachable",
      `the MCP server at ${endpoint} failed while listing its tools (${(err as Error).message}); nothing was stored, try again`,
      { details: { field: FIELD } },
    );
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * A client that declares no capabilities: listing tools needs none. `negotiation` is `auto` on Streamable
 * HTTP; the HTTP+SSE transport predates 2026-07-28, so a server on it is spoken to in the 2025 handshake
 * without a probe.
 */
function newClient(negotiation: "auto" | "legacy"): Client {
  return new Client(
    { name: "toolport-catalog", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode: negotiation } },
  );
}

/** The HTTP status an SDK error carries (SdkHttpError's `status`, also on a refused `server/discover`). */
function httpStatus(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | undefined)?.status;
  return typeof status === "number" ? status : undefined;
}

async function connect(
  endpoint: URL,
  headers: Record<string, string>,
  outbound: Outbound,
): Promise<{ client: Client; transport: "streamable_http" | "sse" }> {
  const requestInit = { headers };
  const fetch = outbound.fetch;
  const streamable = newClient("auto");
  try {
    await streamable.connect(new StreamableHTTPClientTransport(endpoint, { requestInit, fetch }), { timeout: TIMEOUT_MS });
    return { client: streamable, transport: "streamable_http" };
  } catch (first) {
    await streamable.close().catch(() => {});
    // A refused address: SSE would be refused the same way, so nothing more is dialled.
    const refused = addressNotAllowed(first, FIELD, endpoint);
    if (refused) throw refused;
    const status = httpStatus(first);
    if (status === 401 || status === 403) {
      const sent = Object.keys(headers).length > 0;
      throw invalidArgument(
        "mcp_server_unauthorized",
        sent
          ? `the MCP server at ${endpoint} refused mcp_server.credential (HTTP ${status})`
          : `the MCP server at ${endpoint} needs a credential (HTTP ${status}): declare mcp_server.security_scheme and give mcp_server.credential to list its tools`,
        { details: { field: sent ? "mcp_server.credential" : "mcp_server.security_scheme" } },
      );
    }
    const sse = newClient("legacy");
    try {
      await sse.connect(new SSEClientTransport(endpoint, { requestInit, fetch }), { timeout: TIMEOUT_MS });
      return { client: sse, transport: "sse" };
    } catch (second) {
      await sse.close().catch(() => {});
      const refused = addressNotAllowed(second, FIELD, endpoint);
      if (refused) throw refused;
      throw invalidArgument(
        "mcp_server_unreachable",
        `could not connect to the MCP server at ${endpoint} (Streamable HTTP: ${(first as Error).message}; SSE: ${(second as Error).message})`,
        { details: { field: "mcp_server.url" } },
      );
    }
  }
}

/**
 * One tool per MCP tool. Its input and output schemas go through the same `$defs` rule as OpenAPI
 * schemas (schema-defs.ts), with the tool's own schema as the document its `$ref`s point into
 * (`#/$defs/...`, `#/definitions/...`, `#/properties/...`): each parameter's JSON Schema then stands
 * on its own, and recursion stays a `$ref`.
 */
export function toolFromMcp(tool: McpTool, version: string, warnings: string[]): ToolDraft {
  const rawInput: Record<string, unknown> = isObject(tool.inputSchema) ? tool.inputSchema : { type: "object" };
  const schemas = new SchemaWriter(rawInput, { dialect: "json-schema" });
  const written = schemas.write(rawInput);
  const inputSchema = schemas.standalone({ ...written, type: "object" });
  // A root that is itself recursive stays a `$ref`: its parameters are the definition's properties.
  const top = resolveRef(written, inputSchema);
  const properties = isObject(top.properties) ? (top.properties as Record<string, JsonSchema>) : {};
  const required = new Set(Array.isArray(top.required) ? (top.required as string[]) : []);
  const parameters: Record<string, ToolParameterInfo> = {};
  for (const [name, property] of Object.entries(properties)) {
    const schema = schemas.standalone(property);
    const target = resolveRef(schema);
    const description = typeof schema.description === "string" ? schema.description : target.description;
    const info: ToolParameterInfo = {
      name,
      location: "body",
      description: typeof description === "string" ? description : "",
      type: schemaType(schema),
      required: required.has(name),
    };
    if (target.default !== undefined) info.default = target.default;
    if (Array.isArray(target.enum)) info.enum = target.enum;
    if (typeof target.minimum === "number") info.minimum = target.minimum;
    if (typeof target.maximum === "number") info.maximum = target.maximum;
    if (saysMore(schema)) info.jsonSchema = schema;
    parameters[name] = info;
  }
  let output: JsonSchema | null = null;
  const unresolved = [...schemas.unresolved];
  if (isObject(tool.outputSchema)) {
    const outputs = new SchemaWriter(tool.outputSchema, { dialect: "json-schema" });
    output = outputs.standalone(outputs.write(tool.outputSchema));
    unresolved.push(...outputs.unresolved);
  }
  for (const ref of new Set(unresolved)) {
    warnings.push(`tool ${tool.name}: $ref ${ref} does not resolve inside the tool's schema; that part accepts any value`);
  }
  const annotations = tool.annotations ?? {};
  // Writes unless the server says it only reads; destructive or explicitly non-read-only tools need consent.
  const sideEffecting =
    annotations.readOnlyHint !== true && (annotations.destructiveHint === true || annotations.readOnlyHint === false);
  const title = tool.title ?? annotations.title;
  return {
    sourceKey: `mcp:${tool.name}`,
    name: tool.name,
    description: [tool.description ?? "", title && !tool.description ? title : ""].filter(Boolean).join("") || tool.name,
    tags: [],
    method: "",
    path: "",
    parameters,
    inputSchema,
    requestBodySchema: null,
    requestBodyContentType: "",
    output,
    tips: null,
    version,
    sideEffecting,
    security: [],
    mcpToolName: tool.name,
    internalHandler: "",
  };
}
