/**
 * The call log (issue 33): who may read which calls, the page's filters and cursor, and which refusals are
 * recorded. Rules only; the SQL is store/activity-store.ts.
 */
import { invalidArgument } from "@toolport/kit/errors";
import type { ServiceType } from "./model.js";

/**
 * The refusals recorded in the log (and counted in a key's usage): the call reached a tool the caller may
 * see and was stopped by the key, the consent handshake, a limit or money. An unknown tool (404) or invalid
 * parameters (400) are answered but not logged: they name no call that could have run.
 */
export const RECORDED_REFUSALS = new Set([
  "tool_not_permitted",
  "confirmation_required",
  "rate_limited",
  "usage_limit_reached",
  "insufficient_balance",
  "spend_limit_exceeded",
]);

/**
 * Refusals by a limit: a caller past it may keep sending, thousands a second, and the limit exists to
 * refuse those cheaply; so they are recorded once per caller (key, else account) and reason per minute,
 * not each time (LimitRefusals). The log shows that and when the limit was hit; the others are recorded
 * every time.
 */
export const LIMIT_REFUSALS = new Set(["rate_limited", "usage_limit_reached"]);
const LIMIT_RECORD_EVERY_MS = 60_000;
/** Past this many remembered callers, the ones older than a minute are forgotten. */
const LIMIT_MEMORY = 10_000;

/** Which limit refusals to record (see LIMIT_REFUSALS), remembered per process. */
export class LimitRefusals {
  private readonly recorded = new Map<string, number>();

  /** Whether this refusal is recorded: any refusal but a limit's, or a limit's first in a minute for its caller. */
  shouldRecord(reason: string, caller: string, now = Date.now()): boolean {
    if (!LIMIT_REFUSALS.has(reason)) return true;
    const key = `${reason}\0${caller}`;
    const last = this.recorded.get(key);
    if (last !== undefined && now - last < LIMIT_RECORD_EVERY_MS) return false;
    this.recorded.set(key, now);
    if (this.recorded.size > LIMIT_MEMORY) {
      for (const [k, at] of this.recorded) if (now - at >= LIMIT_RECORD_EVERY_MS) this.recorded.delete(k);
    }
    return true;
  }
}

export const ACTIVITY_STATUSES = ["success", "error", "refused"] as const;
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];

export const ACTIVITY_DEFAULT_LIMIT = 50;
export const ACTIVITY_MAX_LIMIT = 200;

/** Whose calls a reader sees. */
export type ActivityScope =
  | { kind: "organization"; organizationId: string }
  | { kind: "account"; accountId: string; organizationId: string }
  | { kind: "key"; keyId: string };

export interface ActivityReader {
  accountId: string;
  organizationId: string;
  keyId?: string;
  /** Owner or admin of organizationId. */
  managesOrganization: boolean;
}

/**
 * Never more than the credential grants: an API key (or an OAuth grant acting as one) reads its own calls
 * only, whoever owns it; a signed-in owner or admin reads the organization's; anyone else their own.
 */
export function activityScope(reader: ActivityReader): ActivityScope {
  if (reader.keyId) return { kind: "key", keyId: reader.keyId };
  if (reader.managesOrganization) return { kind: "organization", organizationId: reader.organizationId };
  return { kind: "account", accountId: reader.accountId, organizationId: reader.organizationId };
}

export interface PageCursor {
  /** executed_at with microseconds, as Postgres stores it. */
  at: string;
  id: string;
}

export interface ActivityQuery {
  toolId?: string;
  keyId?: string;
  status?: ActivityStatus;
  since?: Date;
  until?: Date;
  limit: number;
  after?: PageCursor;
}

export interface ActivityEntry {
  id: string;
  at: Date;
  accountId: string;
  keyId?: string;
  toolId: string;
  toolName: string;
  serviceId: string;
  serviceName: string;
  status: ActivityStatus;
  reason?: string;
  errorClass?: string;
  message?: string;
  durationMs: number;
  costCents: bigint;
}

export interface ActivityPage {
  entries: ActivityEntry[];
  next?: PageCursor;
}

export interface RefusalRecord {
  id: string;
  at: Date;
  accountId: string;
  organizationId: string;
  keyId?: string;
  toolId: string;
  toolName: string;
  serviceId: string;
  serviceName: string;
  serviceType: ServiceType;
  reason: string;
  message: string;
}

export interface ActivityStore {
  recordRefusal(r: RefusalRecord): Promise<void>;
  list(scope: ActivityScope, q: ActivityQuery): Promise<ActivityPage>;
  countRefusals(scope: ActivityScope, keyId: string, since: Date): Promise<Array<{ reason: string; calls: bigint }>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The cursor is opaque to callers: base64url of `<executed_at>|<id>`. */
export function encodeCursor(c: PageCursor): string {
  return Buffer.from(`${c.at}|${c.id}`).toString("base64url");
}

export function decodeCursor(raw: string): PageCursor {
  const [at, id, ...rest] = Buffer.from(raw, "base64url").toString("utf8").split("|");
  if (rest.length > 0 || !at || !id || !AT.test(at) || !UUID.test(id) || Number.isNaN(Date.parse(at))) {
    throw invalidArgument("invalid_cursor", "cursor must be the next_cursor of a previous page", {
      details: { field: "cursor" },
    });
  }
  return { at, id };
}

export function activityLimit(limit: number | undefined): number {
  if (limit === undefined) return ACTIVITY_DEFAULT_LIMIT;
  return Math.min(Math.max(Math.trunc(limit), 1), ACTIVITY_MAX_LIMIT);
}

export function activityStatus(status: string | undefined): ActivityStatus | undefined {
  if (status === undefined || status === "") return undefined;
  if ((ACTIVITY_STATUSES as readonly string[]).includes(status)) return status as ActivityStatus;
  throw invalidArgument("invalid_status", `status must be one of ${ACTIVITY_STATUSES.join(", ")}`, {
    details: { field: "status" },
  });
}

export function checkTimeRange(since: Date | undefined, until: Date | undefined): void {
  if (since && until && since.getTime() >= until.getTime()) {
    throw invalidArgument("invalid_time_range", "since must be earlier than until", { details: { field: "since" } });
  }
}

/** The key usage window: default 30 days, clamped 1..90 (spec "usage window"). */
export function usageWindowStart(days: number | undefined, now = new Date()): Date {
  const d = days === undefined ? 30 : Math.min(Math.max(Math.trunc(days), 1), 90);
  return new Date(now.getTime() - d * 86_400_000);
}
