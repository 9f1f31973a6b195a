/** The execution service's view of a tool, a caller and a credential (mapped from proto in handlers/). */
import type { Json } from "@toolport/kit/json-values";

export type ParameterLocation = "path" | "query" | "header" | "cookie" | "body";
export type ServiceType = "api" | "mcp_server" | "internal";

export interface ToolParameter {
  /** The key in tool_input. */
  key: string;
  /** The name upstream (differs from key when two locations share a name, e.g. key `query_id`, name `id`). */
  name: string;
  location: ParameterLocation;
  type: string;
  required: boolean;
  default?: Json;
  enum?: Json[];
  /** Path parameters: false keeps `/` unencoded; unset or true encodes it. */
  encodeSlashes?: boolean;
}

export interface SecurityScheme {
  name: string;
  /** apiKey, http, oauth2, openIdConnect. */
  type: string;
  /** For http: bearer or basic. */
  scheme?: string;
  /** For apiKey. */
  location?: "header" | "query" | "cookie";
  parameterName?: string;
}

export interface ToolForCall {
  id: string;
  slug?: string;
  name: string;
  serviceId: string;
  serviceName: string;
  serviceType: ServiceType;
  method: string;
  path: string;
  baseUrl: string;
  mcpServerUrl: string;
  mcpToolName: string;
  internalHandler: string;
  parameters: ToolParameter[];
  inputSchema?: Record<string, unknown>;
  requestBodySchema?: Record<string, unknown>;
  requestBodyContentType: string;
  securitySchemes: SecurityScheme[];
  sideEffecting: boolean;
  isPaid: boolean;
  priceCents: bigint;
  passthroughReason?: string;
  revision: bigint;
  /** False for a tool its publisher deactivated (catalog status `inactive`): calls are refused with 404. */
  active: boolean;
  /** When the tool stops being callable (catalog's sunset date), if set. */
  sunsetAt?: Date;
}

export type Credential =
  | { kind: "api_key"; value: string; parameterName?: string; location?: string }
  | { kind: "bearer"; token: string }
  | { kind: "basic"; username: string; password: string }
  /** An OAuth connection's access token (sent as a bearer token); refreshed through the catalog. */
  | { kind: "oauth"; token: string; expiresAt?: Date; connectionId: string };

export interface Caller {
  accountId: string;
  organizationId: string;
  keyId?: string;
  tier: string;
  allowedServices?: string[];
  allowedTools?: string[];
  maxCostPerCallCents?: bigint;
  dailySpendLimitCents?: bigint;
  requireConfirmation: boolean;
  /**
   * Why this caller may not call the organization's tools (identity's grants: a viewer), or null. Decided
   * where the principal is read (handlers/convert.ts); refused before anything else of a call.
   */
  callRefusal: Error | null;
}
