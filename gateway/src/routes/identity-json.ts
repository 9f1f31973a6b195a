/**
 * The JSON of the identity endpoints, exactly as the spec spells it (snake_case, null where a value
 * is absent), and the checks of request bodies that must name the offending field in a 400.
 */

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { fromJsonBytes } from "@toolport/kit/json-bytes";
import { enumName, isoTime } from "@toolport/kit/proto-json";
import { AccountKind, type KeyPermissions, OrgRoleSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import {
  type Account,
  AgentTypeSchema,
  type ApiKey,
  type ApiKeyUsage,
  ConsoleKeySchema,
  type GettingStarted,
  type Membership,
  type Organization,
  type OrganizationContext,
} from "@toolport/proto/toolport/identity/v1/identity_resources_pb";
import type { CreateApiKeyResponse } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { badField } from "../http/input.js";

// ---- request bodies ----

/** An allow-list of ids; absent or null = all. `prefix` names where it sits in the body for errors. */
export function idList(p: Record<string, unknown>, field: string, prefix = "permissions."): { values: string[] } | undefined {
  const value = p[field];
  if (value === undefined || value === null) return undefined;
  const name = `${prefix}${field}`;
  if (!Array.isArray(value)) throw badField(name, "must be an array of ids or null");
  value.forEach((v, i) => {
    if (typeof v !== "string") throw badField(`${name}[${i}]`, "must be a string id");
  });
  return { values: value as string[] };
}

function centsField(p: Record<string, unknown>, field: string): bigint | undefined {
  const value = p[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw badField(`permissions.${field}`, "must be an integer number of cents or null");
  }
  return BigInt(value);
}

const permissionFields = [
  "allowed_services",
  "allowed_tools",
  "max_cost_per_call_cents",
  "daily_spend_limit_cents",
  "require_confirmation",
];

/**
 * The permissions object of a key body; null/absent = unrestricted. Unknown fields are refused: a
 * misspelt restriction silently ignored would leave a key wider than its owner meant.
 */
export function permissionsField(body: Record<string, unknown>) {
  const p = body.permissions;
  if (p === undefined || p === null) return undefined;
  if (typeof p !== "object" || Array.isArray(p)) throw badField("permissions", "must be an object or null");
  const obj = p as Record<string, unknown>;
  for (const name of Object.keys(obj)) {
    if (!permissionFields.includes(name)) {
      throw badField(`permissions.${name}`, `is not a permission; use ${permissionFields.join(", ")}`);
    }
  }
  const confirm = obj.require_confirmation;
  if (confirm !== undefined && confirm !== null && typeof confirm !== "boolean") {
    throw badField("permissions.require_confirmation", "must be true or false");
  }
  return {
    allowedServices: idList(obj, "allowed_services"),
    allowedTools: idList(obj, "allowed_tools"),
    maxCostPerCallCents: centsField(obj, "max_cost_per_call_cents"),
    dailySpendLimitCents: centsField(obj, "daily_spend_limit_cents"),
    requireConfirmation: confirm === true,
  };
}

// ---- responses ----

export const iso = isoTime;

export function permissionsJson(p: KeyPermissions | undefined): JsonValue {
  if (!p) return null;
  return {
    allowed_services: p.allowedServices ? p.allowedServices.values : null,
    allowed_tools: p.allowedTools ? p.allowedTools.values : null,
    max_cost_per_call_cents: p.maxCostPerCallCents === undefined ? null : Number(p.maxCostPerCallCents),
    daily_spend_limit_cents: p.dailySpendLimitCents === undefined ? null : Number(p.dailySpendLimitCents),
    require_confirmation: p.requireConfirmation,
  };
}

/** The spec's API key create response: the plaintext key appears here and nowhere else. */
export function createdKeyJson(k: CreateApiKeyResponse): JsonObject {
  return {
    id: k.id,
    key: k.key,
    key_prefix: k.keyPrefix,
    name: k.name,
    created_at: iso(k.createdAt),
    last_used: iso(k.lastUsed),
    permissions: permissionsJson(k.permissions),
    organization_id: k.organizationId,
    agent_name: k.agentName ?? null,
    agent_type: enumName(AgentTypeSchema, k.agentType),
    purpose: k.purpose ?? null,
    ...keyOriginJson(k),
  };
}

/** When a key ends by itself, what made it, and whether it is a console key. */
function keyOriginJson(k: CreateApiKeyResponse | ApiKey): JsonObject {
  return {
    expires_at: iso(k.expiresAt),
    created_by_key_id: k.createdByKeyId ?? null,
    console_key: enumName(ConsoleKeySchema, k.consoleKey),
  };
}

/** A key as listed: never the secret. */
export function keyJson(k: ApiKey): JsonObject {
  return {
    id: k.id,
    key_prefix: k.keyPrefix,
    name: k.name,
    created_at: iso(k.createdAt),
    last_used: iso(k.lastUsed),
    permissions: permissionsJson(k.permissions),
    organization_id: k.organizationId,
    account_id: k.accountId,
    agent_name: k.agentName ?? null,
    agent_type: enumName(AgentTypeSchema, k.agentType),
    purpose: k.purpose ?? null,
    revoked_at: iso(k.revokedAt),
    ...keyOriginJson(k),
    oauth_client_id: k.oauthClientId ?? null,
  };
}

export function usageJson(u: ApiKeyUsage): JsonObject {
  const k = u.key;
  return {
    key: {
      id: k?.id ?? "",
      name: k?.name ?? "",
      agent_name: k?.agentName ?? null,
      agent_type: k ? enumName(AgentTypeSchema, k.agentType) : null,
      purpose: k?.purpose ?? null,
      created_at: iso(k?.createdAt),
    },
    window_days: u.windowDays,
    calls: Number(u.calls),
    successes: Number(u.successes),
    success_rate: u.successRate ?? null,
    p50_seconds: u.p50Seconds ?? null,
    paid_calls: Number(u.paidCalls),
    spent_cents: Number(u.spentCents),
    first_call_at: iso(u.firstCallAt),
    last_call_at: iso(u.lastCallAt),
    top_tools: u.topTools.map((t) => ({
      tool_id: t.toolId,
      tool_name: t.toolName,
      service_name: t.serviceName,
      calls: Number(t.calls),
      successes: Number(t.successes),
    })),
    daily: u.daily.map((d) => ({
      date: d.date,
      calls: Number(d.calls),
      successes: Number(d.successes),
      p50_seconds: d.p50Seconds ?? null,
    })),
  };
}

/** Where the API is described, for the guide's read_next: the reference page and the OpenAPI document. */
export interface DescribedAt {
  reference: string;
  openapi: string;
}

export function guideJson(g: GettingStarted | undefined, describedAt: DescribedAt): JsonObject {
  return {
    free_tier: { calls_per_month: g?.freeTier?.callsPerMonth ?? 0, note: g?.freeTier?.note ?? "" },
    endpoints: {
      mcp: g?.endpoints?.mcp ?? "",
      search: g?.endpoints?.search ?? "",
      describe: g?.endpoints?.describe ?? "",
      execute: g?.endpoints?.execute ?? "",
      auth_header: g?.endpoints?.authHeader ?? "",
    },
    try_first: (g?.tryFirst ?? []).map((t) => ({
      tool_id: t.toolId,
      name: t.name,
      service: t.service,
      description: t.description,
      parameters: fromJsonBytes(t.parametersJson) ?? {},
      execute: fromJsonBytes(t.executeJson) ?? {},
    })),
    steps: g?.steps ?? [],
    read_next: {
      skill: g?.readNext?.skill ?? "",
      quickstart: g?.readNext?.quickstart ?? "",
      reference: describedAt.reference,
      openapi: describedAt.openapi,
    },
  };
}

export function accountJson(a: Account | undefined): JsonObject {
  return {
    id: a?.id ?? "",
    kind: a?.kind === AccountKind.AGENT ? "agent" : a?.kind === AccountKind.HUMAN ? "human" : null,
    name: a?.name ?? "",
    email: a?.email ?? "",
    tier: a?.tier ?? "",
    personal_organization_id: a?.personalOrganizationId ?? "",
    is_platform_admin: a?.isPlatformAdmin ?? false,
    created_at: iso(a?.createdAt),
  };
}

export function orgContextJson(o: OrganizationContext | undefined): JsonValue {
  if (!o) return null;
  return { org_id: o.orgId, org_name: o.orgName, org_slug: o.orgSlug, role: enumName(OrgRoleSchema, o.role) };
}

export function organizationJson(o: Organization | undefined): JsonObject {
  return {
    id: o?.id ?? "",
    name: o?.name ?? "",
    slug: o?.slug ?? "",
    is_personal: o?.isPersonal ?? false,
    role: o ? enumName(OrgRoleSchema, o.role) : null,
    created_at: iso(o?.createdAt),
  };
}

export function memberJson(m: Membership | undefined): JsonObject {
  return {
    organization_id: m?.organizationId ?? "",
    account_id: m?.accountId ?? "",
    name: m?.name ?? "",
    email: m?.email ?? "",
    role: m ? enumName(OrgRoleSchema, m.role) : null,
    created_at: iso(m?.createdAt),
  };
}

/**
 * Markdown versions of the guide: the skill file and the quickstart the guide's read_next points to. The
 * skill file ends with every route of the API, from the description, so it never disagrees with it.
 */
export function guideMarkdown(
  kind: "skill" | "quickstart",
  g: JsonObject,
  urls: { register: string; guide: string },
  /** The skill file's API section, written from the description (openapi/llms.ts apiMarkdown). */
  api: string[] = [],
): string {
  const guide = g as {
    free_tier: { calls_per_month: number; note: string };
    endpoints: Record<string, string>;
    try_first: { tool_id: string; name: string; description: string; execute: JsonObject }[];
    steps: string[];
  };
  const lines: string[] = [];
  if (kind === "skill") {
    lines.push(
      "---",
      "name: toolport",
      "description: Find and run callable tools through Toolport's catalog and execution gateway.",
      "---",
      "",
      "# Toolport",
      "",
    );
  } else {
    lines.push("# Toolport quickstart", "");
  }
  lines.push(
    `Register without a human: \`POST ${urls.register}\``,
    'with `{"name": "<agent name>", "operator_email": "<operator email>"}`; the answer holds your API key (shown once).',
    `Guide as JSON: ${urls.guide}`,
    "",
    "## Steps",
    ...guide.steps.map((s, i) => `${i + 1}. ${s}`),
    "",
    "## Endpoints",
    ...Object.entries(guide.endpoints).map(([name, value]) => `- ${name}: \`${value}\``),
    "",
    "## Free tier",
    `${guide.free_tier.calls_per_month} calls per month. ${guide.free_tier.note}`,
  );
  if (api.length > 0) lines.push("", ...api);
  if (guide.try_first.length > 0) {
    lines.push("", "## Try first");
    for (const t of guide.try_first) {
      lines.push("", `### ${t.name} (\`${t.tool_id}\`)`, t.description, "", "```json", JSON.stringify(t.execute, null, 2), "```");
    }
  }
  return `${lines.join("\n")}\n`;
}
