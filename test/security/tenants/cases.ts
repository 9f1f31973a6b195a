/**
 * The cases of the tenant matrix for one operation, aimed at a victim tenant's objects by an attacker
 * tenant (the test file says what passes and why). Each case records its problems instead of throwing,
 * so one run reports every operation; `checks` takes the victim and the attacker as arguments so a
 * test can aim them at the attacker's own objects and see them fail.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Call, RequestOptions } from "../../harness/http.js";
import type { IdName, Tenant, TenantIds } from "./accounts.js";
import type { AimContext, Row } from "./matrix.js";

/** A credentialed operation of the OpenAPI document. */
export interface Operation {
  key: string;
  method: string;
  path: string;
  acceptsKey: boolean;
  acceptsJwt: boolean;
  optional: boolean;
  orgHeader: boolean;
}

type Security = Array<Record<string, unknown>>;
type Described = { paths: Record<string, Record<string, { security: Security; parameters?: Array<{ $ref?: string }> }>> };

/** Every operation of the document that takes a credential (its `security` is not empty). */
export function credentialedOperations(doc: Described): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.security.length > 0)
      .map(([method, op]) => ({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        acceptsKey: op.security.some((r) => "ApiKey" in r),
        acceptsJwt: op.security.some((r) => "BearerJwt" in r),
        optional: op.security.some((r) => Object.keys(r).length === 0),
        orgHeader: (op.parameters ?? []).some((p) => p.$ref === "#/components/parameters/OrgId"),
      })),
  );
}

export interface Outcome {
  op: string;
  name: string;
  problems: string[];
}

/** A refused credential: `unauthenticated`, or `invalid_token` for a bearer token identity could not verify. */
export const REFUSAL_CODES = ["unauthenticated", "invalid_token"];

/** Fresh ids that name nothing: random UUIDs, and a random name for the tool name. */
export function missingIds(like: TenantIds): TenantIds {
  const ids = Object.fromEntries(Object.keys(like).map((n) => [n, randomUUID()])) as unknown as TenantIds;
  ids.toolName = `no_such_tool_${randomBytes(5).toString("hex")}`;
  return ids;
}

/** The reply as text with every id the request carried replaced by `<id>`. */
function normalized(body: unknown, sent: string[]): string {
  let text = JSON.stringify(body) ?? "";
  for (const v of [...sent].sort((x, y) => y.length - x.length)) text = text.split(v).join("<id>");
  return text;
}

export interface Checks {
  outcomes: Outcome[];
  /** A credential that must be refused, aimed at the victim's objects: 401 and nothing of the victim's. */
  refused(op: Operation, name: string, options: RequestOptions): Promise<void>;
  /**
   * `who` aimed at the victim's objects (the ids in `names` taken from the victim, the rest from the
   * attacker's own), against the same request aimed at missing ones; `org` names which of the victim's
   * organizations goes in svc-org-id (a missing one in the other request).
   */
  compared(op: Operation, name: string, who: RequestOptions, names: IdName[], org?: IdName, row?: Row): Promise<void>;
  /** A read of the attacker's own (its lists, its objects): no 5xx, and nothing of the victim's in it. */
  ownView(op: Operation, name: string, who: RequestOptions): Promise<void>;
  /** Every case of the operation. */
  all(op: Operation): Promise<void>;
}

export function checks(call: Call, rows: Record<string, Row>, ctx: AimContext, victim: Tenant, attacker: Tenant): Checks {
  const outcomes: Outcome[] = [];

  const send = (op: Operation, ids: TenantIds, options: RequestOptions, row = rows[op.key]!) => {
    const path = op.path.replace(/^\/v1/, "").replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(ids[row.params![p]!]));
    const query = new URLSearchParams(Object.entries(row.query ?? {}).map(([q, n]): [string, string] => [q, ids[n]]));
    const body = row.body?.(ids, ctx);
    return call(op.method, query.size > 0 ? `${path}?${query}` : path, { ...options, ...(body === undefined ? {} : { body }) });
  };

  const leaks = (text: string) => victim.secrets.filter((secret) => text.toLowerCase().includes(secret.toLowerCase()));

  async function record(op: Operation, name: string, check: (problems: string[]) => Promise<void>) {
    const problems: string[] = [];
    try {
      await check(problems);
    } catch (err) {
      problems.push(`threw: ${(err as Error).message.split("\n").slice(0, 4).join(" | ")}`);
    }
    outcomes.push({ op: op.key, name, problems });
  }

  const refused: Checks["refused"] = (op, name, options) =>
    record(op, name, async (problems) => {
      const res = await send(op, victim.ids, options);
      if (res.status !== 401 || !REFUSAL_CODES.includes(res.body?.error?.code)) {
        problems.push(`expected 401 ${REFUSAL_CODES.join(" or ")}, got ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
      const found = leaks(normalized(res.body, Object.values(victim.ids)));
      if (found.length > 0) problems.push(`the victim's data in the answer: ${found.join(", ")}`);
    });

  const compared: Checks["compared"] = (op, name, who, names, org, row = rows[op.key]!) =>
    record(op, name, async (problems) => {
      const missing = missingIds(victim.ids);
      const pick = (from: TenantIds) => ({ ...attacker.ids, ...Object.fromEntries(names.map((n) => [n, from[n]])) }) as TenantIds;
      const header = (from: TenantIds) => (org ? { headers: { "svc-org-id": from[org] } } : {});
      const foreign = await send(op, pick(victim.ids), { ...who, ...header(victim.ids) }, row);
      const absent = await send(op, pick(missing), { ...who, ...header(missing) }, row);
      const sent = (from: TenantIds) => [...names, ...(org ? [org] : [])].map((n) => from[n]);
      const textForeign = normalized(foreign.body, sent(victim.ids));
      const textMissing = normalized(absent.body, sent(missing));
      const found = leaks(textForeign);
      if (found.length > 0) problems.push(`the victim's data in the answer: ${found.join(", ")}`);
      if (foreign.status >= 500 || absent.status >= 500) problems.push(`5xx: ${foreign.status} / ${absent.status}`);
      const expected = org ? undefined : row.cross;
      if (expected && (foreign.status !== expected.status || absent.status !== expected.missing)) {
        problems.push(
          `expected ${expected.status} (the victim's) and ${expected.missing} (missing), got ${foreign.status} and ${absent.status}`,
        );
      }
      if (expected && expected.status !== expected.missing) return;
      const aimsAtObject = org !== undefined || names.some((n) => Object.values(row.params ?? {}).includes(n));
      if (foreign.status !== absent.status || textForeign !== textMissing) {
        problems.push(
          `the victim's answered ${foreign.status} ${textForeign.slice(0, 300)}, a missing one ${absent.status} ${textMissing.slice(0, 300)}`,
        );
      } else if (!expected && aimsAtObject && foreign.status !== 404) {
        problems.push(`expected 404, got ${foreign.status} ${textForeign.slice(0, 200)}`);
      } else if (!expected && !aimsAtObject && foreign.status !== 404 && foreign.status >= 300) {
        problems.push(`expected 404 or an equal 2xx, got ${foreign.status} ${textForeign.slice(0, 200)}`);
      }
    });

  const ownView: Checks["ownView"] = (op, name, who) =>
    record(op, name, async (problems) => {
      const res = await send(op, attacker.ids, who);
      if (res.status >= 500) problems.push(`5xx: ${res.status}`);
      const found = leaks(JSON.stringify(res.body) ?? "");
      if (found.length > 0) problems.push(`the victim's data in the answer: ${found.join(", ")}`);
    });

  async function all(op: Operation) {
    const row = rows[op.key]!;
    const inBody = row.body ? JSON.stringify(row.body(victim.ids, ctx)) : "";
    const idNames = Object.keys(victim.ids) as IdName[];
    const aimed = [
      ...new Set([
        ...Object.values(row.params ?? {}),
        ...Object.values(row.query ?? {}),
        ...idNames.filter((n) => inBody.includes(victim.ids[n])),
      ]),
    ];
    const attackers: Array<[string, RequestOptions]> = [];
    if (op.acceptsKey) attackers.push(["B's key", { key: attacker.key }], ["B's agent key", { key: attacker.agentKey }]);
    if (op.acceptsJwt) attackers.push(["B's JWT", { token: attacker.token }]);

    if (!op.optional) await refused(op, "no credential", {});
    else if (aimed.length > 0) await compared(op, "no credential -> A's", {}, aimed);
    if (op.acceptsKey) {
      await refused(op, "malformed key", { headers: { "svc-api-key": "tp_not-a-key" } });
      await refused(op, "A's revoked key", { key: victim.revokedKey });
    }
    if (op.acceptsJwt) {
      await refused(op, "malformed JWT", { headers: { authorization: "Bearer not.a.jwt" } });
      await refused(op, "A's expired JWT", { token: victim.expiredToken });
    }
    if (!op.optional && !op.acceptsJwt) await refused(op, "A's JWT, key only", { token: victim.token });
    if (!op.optional && !op.acceptsKey) await refused(op, "A's key, JWT only", { key: victim.key });
    const params = Object.values(row.params ?? {});
    for (const [label, who] of attackers) {
      if (op.method === "GET") await ownView(op, `${label}, its own view`, who);
      if (aimed.length > 0) await compared(op, `${label} -> A's`, who, aimed);
      if (row.slugs) {
        const bySlug = { ...row, params: { ...row.params, ...row.slugs } };
        await compared(op, `${label} -> A's by slug`, who, Object.values(row.slugs), undefined, bySlug);
      }
      if (params.length > 1) for (const p of params) await compared(op, `${label} -> A's one id`, who, [p]);
      if (op.orgHeader) {
        await compared(op, `${label} + A's svc-org-id`, who, [], "organization");
        await compared(op, `${label} + A's personal svc-org-id`, who, [], "personalOrganization");
      }
    }
  }

  return { outcomes, refused, compared, ownView, all };
}

/** Cases run and passed, grouped by `group` (for the matrices' printed tables). */
export function tally<T extends { problems: string[] }>(
  outcomes: T[],
  group: (o: T) => string,
): Array<[string, { run: number; passed: number }]> {
  const out = new Map<string, { run: number; passed: number }>();
  for (const o of outcomes) {
    const entry = out.get(group(o)) ?? { run: 0, passed: 0 };
    entry.run++;
    if (o.problems.length === 0) entry.passed++;
    out.set(group(o), entry);
  }
  return [...out.entries()];
}

/** One line of a printed table: the name, cases run, cases passed. */
export function tableRow(name: string, e: { run: number; passed: number }, width: number): string {
  return `  ${name.padEnd(width)} ${String(e.run).padStart(5)} ${String(e.passed).padStart(5)}`;
}

/**
 * A matrix covers the document: a row for every credentialed operation, none for an operation that is
 * gone, and each row's path parameters those of its operation.
 */
export function expectRowsCover(
  operations: Operation[],
  rowKeys: string[],
  paramsOf: (key: string) => string[],
  where: string,
): void {
  const described = operations.map((o) => o.key).sort();
  const keys = [...rowKeys].sort();
  expect(
    described.filter((k) => !keys.includes(k)),
    `credentialed operations without a row in ${where}`,
  ).toEqual([]);
  expect(
    keys.filter((k) => !described.includes(k)),
    "rows for operations the document does not have",
  ).toEqual([]);
  for (const op of operations) {
    const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();
    expect([...paramsOf(op.key)].sort(), `${op.key}: path parameters`).toEqual(params);
  }
}
