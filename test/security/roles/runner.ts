/**
 * Runs the intra-organization matrix: builds a case per (operation, variant, person, credential form),
 * sends it, and records its problems instead of throwing, so one run reports every case.
 *
 * Order, so that what a case checks is not disturbed by another:
 * 1. the refusals (every case whose expectation is a refusal), one batch per operation, deletions last:
 *    every table of every service database is fingerprinted before and after each batch (fuzz/state.ts)
 *    and must not change; no accepted request is in a batch. A change is confirmed by replaying the
 *    batch once the state holds still (work an earlier accepted request started may still be settling),
 *    and then put on the case whose replay alone repeats it;
 * 2. the accepted requests, each on a throwaway target where it changes or removes one (rows.ts);
 * 3. the refused deletions, after the state settles again.
 * A tool call's case names itself in the path it reads upstream (`/echo/files/<tag>`), so the echo
 * upstream's log says which credential reached it for that case, or that nothing did.
 */
import { randomBytes } from "node:crypto";
import type { Call, Reply, RequestOptions } from "../../harness/http.js";
import type { Upstream } from "../../harness/upstreams.js";
import { changedTables, type StateProbe } from "../fuzz/state.js";
import type { TenantIds } from "../tenants/accounts.js";
import type { Operation } from "../tenants/cases.js";
import { baseIds, type Fresh, type FreshIds, type Org, type Person, ROLES, type RoleName } from "./org.js";
import { type BodyContext, paramsOf, type RoleRow, type Variant } from "./rows.js";
import { acting, codeMatches, describeExpect, type Expect, FORMS, type FormName, refusedBy, statusMatches } from "./rules.js";

export interface Case {
  op: Operation;
  variant: Variant;
  person: Person;
  form: FormName;
  expect: Expect;
}

export interface Outcome {
  op: string;
  variant: string;
  role: RoleName | "-";
  form: FormName | "-";
  expected: string;
  got: string;
  problems: string[];
}

export interface MatrixContext {
  call: Call;
  org: Org;
  fresh: Fresh;
  probe: StateProbe;
  upstream: Upstream;
  receiverUrl: string;
  /** Changes seen during a batch of refusals that its replay did not repeat (work settling in the background). */
  background: Array<{ batch: string; tables: string[] }>;
  /** How long each phase took, for the summary. */
  timings: string[];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until no table changes for `quietMs`; false when it did not within `timeoutMs`. */
export async function settle(probe: StateProbe, { quietMs = 1500, timeoutMs = 30_000 } = {}): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe.fingerprint();
  let since = Date.now();
  while (Date.now() < deadline) {
    await sleep(250);
    const now = await probe.fingerprint();
    if (changedTables(last, now).length > 0) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return true;
    }
  }
  return false;
}

/** Runs `work` over `items` with at most `width` at once. */
export async function pool<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i]!);
    }),
  );
  return out;
}

/** The credentials a form sends. */
export function credentials(org: Org, p: Person, form: FormName, token?: string): RequestOptions {
  const inOrg = { "svc-org-id": org.id };
  switch (form) {
    case "JWT + svc-org-id":
      return { token: token ?? p.token, headers: inOrg };
    case "personal key":
      return { key: p.personalKey.key };
    case "personal key + svc-org-id":
      return { key: p.personalKey.key, headers: inOrg };
    case "org key + svc-org-id":
      return { key: p.orgKey!.key, headers: inOrg };
    case "org key + other svc-org-id":
      return { key: p.orgKey!.key, headers: { "svc-org-id": p.personalOrg } };
  }
}

/** Every case of the table for the document's operations (an operation without a row has none). */
export function buildCases(operations: Operation[], table: Record<string, RoleRow>, org: Org): Case[] {
  const cases: Case[] = [];
  for (const op of operations) {
    const row = table[op.key];
    if (!row) continue;
    for (const variant of row.variants) {
      for (const role of ROLES) {
        if (variant.roles && !variant.roles.includes(role)) continue;
        const person = org.people[role];
        for (const form of FORMS) {
          if (variant.forms && !variant.forms.includes(form)) continue;
          const where = acting(op, person, form);
          if (!where) continue;
          const expect = where.kind === "refused" ? refusedBy(where) : variant.rule(where);
          if (expect) cases.push({ op, variant, person, form, expect });
        }
      }
    }
  }
  return cases;
}

let counter = 0;
const newTag = () => `rc${++counter}x${randomBytes(3).toString("hex")}`;

/** Sends a case's request at `ids`. */
export async function send(
  ctx: MatrixContext,
  c: Case,
  ids: TenantIds,
  tag: string,
  extra: FreshIds = {},
  who: RequestOptions = credentials(ctx.org, c.person, c.form, extra.token),
): Promise<Reply> {
  const params = paramsOf(c.op.key);
  const path = c.op.path.replace(/^\/v1/, "").replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(ids[params[p]!]));
  const query = new URLSearchParams(c.variant.query?.(ids) ?? {});
  const bodyContext: BodyContext = {
    tag,
    org: ctx.org,
    person: c.person,
    upstream: ctx.upstream.url,
    receiver: ctx.receiverUrl,
    email: extra.email,
  };
  const body = c.variant.body?.(ids, bodyContext);
  return ctx.call(c.op.method, query.size > 0 ? `${path}?${query}` : path, {
    ...who,
    ...(body === undefined ? {} : { body }),
  });
}

/** The requests the upstream received for a case's tag. */
function upstreamHits(up: Upstream, tag: string) {
  return up.requests.filter((r) => r.url.split("?")[0] === `/echo/files/${tag}`);
}

/** The problems of an answer against its expectation (status, code, further checks, the upstream's log). */
export function judge(ctx: MatrixContext, expect: Expect, res: Reply, tag: string, orgSecret = ctx.org.orgSecret): string[] {
  const problems: string[] = [];
  const code = res.body?.error?.code;
  if (!statusMatches(expect.status, res.status) || !codeMatches(expect.code, code)) {
    problems.push(`expected ${describeExpect(expect)}, got ${res.status} ${JSON.stringify(res.body)?.slice(0, 240)}`);
  }
  if (res.status >= 500) problems.push(`5xx: ${res.status}`);
  if (expect.check && statusMatches(expect.status, res.status)) problems.push(...expect.check(res));
  if (expect.upstream) {
    const hits = upstreamHits(ctx.upstream, tag);
    if (expect.upstream === "none" && hits.length > 0) {
      problems.push(
        `reached the upstream ${hits.length} time(s), carrying ${hits.map((h) => secretName(ctx, h.headers)).join(", ")}`,
      );
    }
    if (expect.upstream === "org") {
      if (hits.length === 0) problems.push("never reached the upstream");
      const wrong = hits.filter((h) => h.headers["x-api-key"] !== orgSecret);
      if (wrong.length > 0) {
        problems.push(
          `reached the upstream with ${wrong.map((h) => secretName(ctx, h.headers)).join(", ")}, not the org's credential`,
        );
      }
    }
  }
  return problems;
}

/** What credential a request to the upstream carried, by name where the fixture stored it. */
function secretName(ctx: MatrixContext, headers: Record<string, unknown>): string {
  const value = headers["x-api-key"];
  if (value === undefined) return "no credential";
  const known = Object.entries(ctx.org.storedSecrets).find(([, v]) => v === value);
  return known ? known[0] : `an unknown value ${String(value).slice(0, 24)}`;
}

export interface Sent {
  outcome: Outcome;
  status: number;
}

/** Sends one case (fresh target first when it is to be accepted) and records its outcome. */
export async function runCase(ctx: MatrixContext, c: Case, record = true): Promise<Sent> {
  const tag = newTag();
  const outcome: Outcome = {
    op: c.op.key,
    variant: c.variant.name,
    role: c.person.role,
    form: c.form,
    expected: describeExpect(c.expect),
    got: "",
    problems: [],
  };
  let status = 0;
  try {
    let ids: TenantIds = { ...baseIds(ctx.org, c.person), ...c.variant.aim?.(ctx.org, c.person) };
    let extra: FreshIds = {};
    if (!c.expect.refusal && c.variant.fresh) {
      extra = await c.variant.fresh(ctx.fresh, c.person);
      const { email: _e, token: _t, ...freshIds } = extra;
      ids = { ...ids, ...freshIds };
    }
    const res = await send(ctx, c, ids, tag, extra);
    status = res.status;
    outcome.got = `${res.status}${res.body?.error?.code ? ` ${res.body.error.code}` : ""}`;
    if (record) outcome.problems.push(...judge(ctx, c.expect, res, tag));
  } catch (err) {
    outcome.got = "threw";
    outcome.problems.push(`threw: ${(err as Error).message.split("\n").slice(0, 4).join(" | ")}`);
  }
  return { outcome, status };
}

/**
 * A batch of refusals: fingerprints before and after must be equal. When they are not:
 * - cases answered 2xx against their expectation are the cause, and the change is put on them;
 * - otherwise the batch is replayed once the state holds still: a change the replay does not repeat was
 *   work settling in the background (counted, printed); one it repeats goes on each case whose replay
 *   alone, twice, after the state held still each time, repeats it (or on the batch, when none does).
 */
export async function refusalBatch(ctx: MatrixContext, name: string, cases: Case[], outcomes: Outcome[]): Promise<void> {
  const before = await ctx.probe.fingerprint();
  const sent = await pool(cases, 8, (c) => runCase(ctx, c));
  const after = await ctx.probe.fingerprint();
  outcomes.push(...sent.map((s) => s.outcome));
  const changed = changedTables(before, after);
  if (changed.length === 0) return;
  const accepted = sent.filter((s) => s.status >= 200 && s.status < 300 && s.outcome.problems.length > 0);
  if (accepted.length > 0) {
    for (const s of accepted) s.outcome.problems.push(`accepted in a batch of refusals that changed ${changed.join(", ")}`);
    return;
  }
  await settle(ctx.probe);
  const again0 = await ctx.probe.fingerprint();
  await pool(cases, 8, (c) => runCase(ctx, c, false));
  const again = changedTables(again0, await ctx.probe.fingerprint());
  if (again.length === 0) {
    ctx.background.push({ batch: name, tables: changed });
    return;
  }
  const alone = async (c: Case) => {
    await settle(ctx.probe, { quietMs: 1000 });
    const one0 = await ctx.probe.fingerprint();
    await runCase(ctx, c, false);
    return changedTables(one0, await ctx.probe.fingerprint());
  };
  let found = false;
  for (const [i, c] of cases.entries()) {
    const once = await alone(c);
    if (once.length === 0 || (await alone(c)).length === 0) continue;
    found = true;
    sent[i]!.outcome.problems.push(`a refusal that changed ${once.join(", ")} (replayed alone, twice)`);
  }
  if (!found) {
    outcomes.push({
      op: name,
      variant: "(the batch)",
      role: "-",
      form: "-",
      expected: "nothing changed",
      got: again.join(", "),
      problems: [`a batch of refusals changed ${again.join(", ")} twice; no case alone repeats it`],
    });
  }
}

/** Replaces a baseline expectation by the answer the person's own JWT gets to the same request. */
export async function resolveBaselines(ctx: MatrixContext, cases: Case[]): Promise<void> {
  const memo = new Map<string, Promise<Reply>>();
  for (const c of cases) {
    if (!c.expect.baseline) continue;
    const key = `${c.op.key}|${c.variant.name}|${c.person.role}`;
    let reply = memo.get(key);
    if (!reply) {
      const ids = { ...baseIds(ctx.org, c.person), ...c.variant.aim?.(ctx.org, c.person) };
      reply = send(ctx, c, ids, newTag(), {}, { token: c.person.token });
      memo.set(key, reply);
    }
    const res = await reply;
    const code = res.body?.error?.code as string | undefined;
    c.expect = {
      ...c.expect,
      status: [res.status],
      code,
      refusal: res.status >= 400,
      why: `${c.expect.why}: ${res.status}${code ? ` ${code}` : ""}`,
      baseline: false,
    };
  }
}

/** Runs every case in the order the header describes; returns their outcomes. */
export async function runMatrix(ctx: MatrixContext, cases: Case[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let mark = performance.now();
  const phase = (name: string, count: number) => {
    const now = performance.now();
    ctx.timings.push(`${name}: ${count} cases, ${((now - mark) / 1000).toFixed(1)} s`);
    mark = now;
  };
  await resolveBaselines(ctx, cases);
  const byOp = (list: Case[]) => {
    const groups = new Map<string, Case[]>();
    for (const c of list) groups.set(c.op.key, [...(groups.get(c.op.key) ?? []), c]);
    return [...groups.entries()];
  };
  const refusals = cases.filter((c) => c.expect.refusal);
  const acceptedCases = cases.filter((c) => !c.expect.refusal);
  const deletions = refusals.filter((c) => c.op.method === "DELETE");
  await settle(ctx.probe);
  phase("baselines, settling", 0);

  for (const [op, list] of byOp(refusals.filter((c) => c.op.method !== "DELETE"))) await refusalBatch(ctx, op, list, outcomes);
  phase("refusals", refusals.length - deletions.length);

  // One at a time within a group: a variant's requests on a shared scratch target, or one person's.
  const groups = new Map<string, Case[]>();
  for (const c of acceptedCases) {
    const key = `${c.op.key}|${c.variant.name}|${c.variant.serial ? "" : c.person.role}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  await pool([...groups.values()], 8, async (list) => {
    for (const c of list) outcomes.push((await runCase(ctx, c)).outcome);
  });
  phase("accepted", acceptedCases.length);

  await settle(ctx.probe);
  for (const [op, list] of byOp(deletions)) await refusalBatch(ctx, op, list, outcomes);
  phase("refused deletions", deletions.length);
  return outcomes;
}

export function failureLine(o: Outcome): string {
  return `${o.op} [${o.variant}] ${o.role} / ${o.form}: ${o.problems.join("; ")}`;
}
