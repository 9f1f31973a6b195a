/**
 * Input rules. Every refusal is INVALID_ARGUMENT with reason `invalid_request` and `details.field`
 * naming the field as the caller spelled it (`permissions.allowed_tools[1]`), so a 400 always says
 * what to fix.
 */
import { invalidArgument } from "@toolport/kit/errors";
import { type AgentType, agentTypes, type Permissions, type Role, roles } from "./model.js";

export function invalidField(field: string, message: string) {
  return invalidArgument("invalid_request", `${field}: ${message}`, { details: { field } });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

// Practical address check (RFC 5321 lengths, one @, a dotted domain, no spaces or control characters).
const EMAIL =
  /^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function requireEmail(field: string, value: string): string {
  const email = value.trim();
  if (email === "") throw invalidField(field, "is required");
  if (email.length > 254 || !EMAIL.test(email)) throw invalidField(field, "must be an email address such as ops@example.com");
  return email;
}

/** A required single-line text of 1..max characters, trimmed. */
export function requireText(field: string, value: string, max: number): string {
  const text = value.trim();
  if (text === "") throw invalidField(field, "is required");
  return checkLine(field, text, max);
}

/** An optional single-line text; empty means absent. */
export function optionalText(field: string, value: string | undefined, max: number): string | null {
  const text = value?.trim() ?? "";
  return text === "" ? null : checkLine(field, text, max);
}

function checkLine(field: string, text: string, max: number): string {
  if ([...text].length > max) throw invalidField(field, `must be at most ${max} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(text)) throw invalidField(field, "must be a single line without control characters");
  return text;
}

export function requirePassword(value: string): string {
  if (value.length < 10) throw invalidField("password", "must be at least 10 characters");
  if (value.length > 1024) throw invalidField("password", "must be at most 1024 characters");
  return value;
}

export function parseAgentType(value: string | undefined): AgentType | null {
  const text = value?.trim() ?? "";
  if (text === "") return null;
  if (!(agentTypes as readonly string[]).includes(text)) {
    throw invalidField("agent_type", `must be one of ${agentTypes.join(", ")}`);
  }
  return text as AgentType;
}

export function parseRole(value: string): Role {
  if (!(roles as readonly string[]).includes(value)) throw invalidField("role", `must be one of ${roles.join(", ")}`);
  return value as Role;
}

const MAX_ALLOW_LIST = 1000;

/** Checks what can be checked without the catalog: id shapes, list sizes, caps. Dedupes the lists. */
export function validatePermissions(p: Permissions): Permissions {
  const list = (field: string, ids: string[] | null): string[] | null => {
    if (ids === null) return null;
    if (ids.length > MAX_ALLOW_LIST) throw invalidField(field, `must hold at most ${MAX_ALLOW_LIST} ids`);
    ids.forEach((id, i) => {
      if (!isUuid(id)) throw invalidField(`${field}[${i}]`, `must be a UUID, got ${JSON.stringify(id.slice(0, 80))}`);
    });
    return [...new Set(ids.map((id) => id.toLowerCase()))];
  };
  const cap = (field: string, value: bigint | null): bigint | null => {
    if (value !== null && value < 0n) throw invalidField(field, "must be zero or a positive number of cents");
    return value;
  };
  return {
    allowedServices: list("permissions.allowed_services", p.allowedServices),
    allowedTools: list("permissions.allowed_tools", p.allowedTools),
    maxCostPerCallCents: cap("permissions.max_cost_per_call_cents", p.maxCostPerCallCents),
    dailySpendLimitCents: cap("permissions.daily_spend_limit_cents", p.dailySpendLimitCents),
    requireConfirmation: p.requireConfirmation,
  };
}

/** The days of a usage window: default 30, clamped to 1..90. */
export function clampUsageDays(days: number | undefined): number {
  if (days === undefined) return 30;
  return Math.min(90, Math.max(1, Math.trunc(days)));
}
