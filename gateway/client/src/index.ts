/**
 * `@toolport/client`: a typed client of the gateway's `/v1`. The types (`schema.ts`) are generated from
 * the gateway's OpenAPI document (`openapi.json`, both committed; `pnpm --filter @toolport/client
 * generate`); the runtime is openapi-fetch, a thin layer over `fetch`:
 *
 *   const toolport = createToolportClient({ baseUrl: "http://localhost:8080", apiKey });
 *   const { data, error, response } = await toolport.GET("/v1/tools/public/search", { params: { query: { query: "weather" } } });
 *
 * Paths, parameters and bodies are checked against the document; `data` is the typed 2xx body, `error`
 * the parsed error body (`Error`) otherwise. A request that does not reach the gateway rejects.
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

export interface ToolportClientOptions extends Omit<ClientOptions, "baseUrl" | "headers"> {
  /** Where the gateway is, without `/v1` (the paths carry it), e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** An agent's API key, sent as `svc-api-key` on every request. */
  apiKey?: string;
  /** The organization to act in, sent as `svc-org-id` on every request. */
  orgId?: string;
  /** A person's session token (JWT), sent as `Authorization: Bearer <token>` on every request. */
  bearer?: string;
  /** Further headers for every request; a request's own `headers` add to them or override them. */
  headers?: Record<string, string>;
  /** Another fetch (e.g. undici's with a connection pool); it receives a `Request`. Default: the global one. */
  fetch?: (input: Request) => Promise<Response>;
}

export type ToolportClient = Client<paths, "application/json">;

export function createToolportClient(options: ToolportClientOptions): ToolportClient {
  const { apiKey, orgId, bearer, headers, ...rest } = options;
  return createClient<paths, "application/json">({
    ...rest,
    headers: {
      ...(apiKey ? { "svc-api-key": apiKey } : {}),
      ...(orgId ? { "svc-org-id": orgId } : {}),
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...headers,
    },
  });
}

type Schemas = components["schemas"];

/** Every error body: `{detail, error: {code, message, details}}`. */
export type Error = Schemas["Error"];
/** A tool as its owner reads it (`GET /v1/tools/{tool_id}`). */
export type Tool = Schemas["Tool"];
/** A tool in search results, with its readiness for the caller. */
export type PublicTool = Schemas["PublicTool"];
/** A service (OpenAPI import or MCP server) and its tools. */
export type Service = Schemas["Service"];
/** One call of `POST /v1/tools/call/batch`. */
export type BatchCall = Schemas["BatchCall"];
/** One element of a batch's `results`, in input order. */
export type BatchElement = Schemas["BatchElement"];
/** The answer of `POST /v1/tools/call/{tool_id}`. */
export type SingleCallResult = Schemas["SingleCallResult"];
/** A stored result read back by its execution id. */
export type ExecutionResult = Schemas["ExecutionResult"];
/** A saved workflow with its steps. */
export type Workflow = Schemas["Workflow"];
