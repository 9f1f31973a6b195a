/**
 * README "Permissions" as expectations: for a person of the organization (its role now), a credential
 * form and an operation of the document, the answer the contract calls for.
 *
 * First the credential decides where the request acts (`acting`):
 * - a credential of a kind the operation does not take is 401 `unauthenticated` (the document's
 *   `security` says which kinds it takes);
 * - a JWT acts in the organization `svc-org-id` names: membership required, else 404;
 * - a personal key (bound to the person's personal organization) acts there without `svc-org-id`, and
 *   with it in the organization it names (it is unrestricted: it may select), membership required;
 * - an organization key acts in the organization; `svc-org-id` naming another is 403
 *   `key_organization_mismatch`; once its owner was removed it is dead everywhere, whatever
 *   `svc-org-id` says: 401 `key_organization_left`;
 * - an operation whose document does not take `svc-org-id` (the client helper) never sees the header.
 * Then the operation's rule says what a request acting there gets: reads for every role; calling the
 * organization's tools for members and above, 403 `insufficient_role` for a viewer; connecting
 * credentials of one's own for members and above, the organization's for owners and admins; managing
 * services, members and others' keys for owners and admins (only an owner makes or unmakes an owner);
 * a person's own things (results, skills, workflows, sites, webhooks, wallet, keys) whatever the role.
 * Acting in its personal organization, a person does not see the organization's private services and
 * tools (404, as for missing ones); routes that name the organization in their path or query answer by
 * the person's role there.
 */
import type { Reply } from "../../harness/http.js";
import type { Operation } from "../tenants/cases.js";
import type { OrgRole, Person } from "./org.js";

export const FORMS = [
  "JWT + svc-org-id",
  "personal key",
  "personal key + svc-org-id",
  "org key + svc-org-id",
  "org key + other svc-org-id",
] as const;
export type FormName = (typeof FORMS)[number];

export type Acting =
  | { kind: "refused"; status: number | number[]; code: string | string[]; why: string }
  | { kind: "org"; role: OrgRole }
  | { kind: "personal"; role: OrgRole | null };

/** Where a request of `p` with `form` acts; null when the person has no credential of that form. */
export function acting(op: Operation, p: Person, form: FormName): Acting | null {
  const isKey = form !== "JWT + svc-org-id";
  if (isKey && form.startsWith("org key") && !p.orgKey) return null;
  if (isKey && !op.acceptsKey) return { kind: "refused", status: 401, code: "unauthenticated", why: "a key on a JWT-only route" };
  if (!isKey && !op.acceptsJwt)
    return { kind: "refused", status: 401, code: "unauthenticated", why: "a JWT on a key-only route" };
  // The two tool-call routes may answer from the gateway's principal cache (gateway/src/middleware/auth.ts):
  // a former member's personal key with svc-org-id, cached before the removal, is refused by the quota
  // lease's re-check, 401 `unauthenticated` (identity README), until the cache forgets it; identity itself
  // answers 404. (An organization key stays 401 `key_organization_left` on every path: "dead everywhere".)
  const cached = isKey && (op.key === "POST /v1/tools/call/{tool_id}" || op.key === "POST /v1/tools/call/batch");
  const notMember: Acting = cached
    ? {
        kind: "refused",
        status: [404, 401],
        code: ["organization_not_found", "unauthenticated"],
        why: "svc-org-id of a former organization (401 from a cached principal's lease)",
      }
    : { kind: "refused", status: 404, code: "organization_not_found", why: "svc-org-id of a former organization" };
  const inOrg = (): Acting => (p.now === null ? notMember : { kind: "org", role: p.now });
  switch (form) {
    case "JWT + svc-org-id":
      return op.orgHeader ? inOrg() : { kind: "personal", role: p.now };
    case "personal key":
      return { kind: "personal", role: p.now };
    case "personal key + svc-org-id":
      return op.orgHeader ? inOrg() : { kind: "personal", role: p.now };
    case "org key + svc-org-id":
    case "org key + other svc-org-id": {
      if (p.now === null) {
        return { kind: "refused", status: 401, code: "key_organization_left", why: "a removed member's organization key" };
      }
      if (form === "org key + other svc-org-id" && op.orgHeader) {
        return { kind: "refused", status: 403, code: "key_organization_mismatch", why: "an organization key selecting another" };
      }
      return { kind: "org", role: p.now };
    }
  }
}

/** What the contract calls for. */
export interface Expect {
  /** Acceptable statuses, or any 2xx. */
  status: number[] | "2xx";
  /** The error code (one of them), where the contract names it. */
  code?: string | string[];
  /** A refusal: nothing may change in any database, and no call may reach an upstream. */
  refusal: boolean;
  /** Why, in a few words (the summary prints it beside a failure). */
  why: string;
  /** A tool call: "org" = it must reach the upstream carrying the organization's credential; "none" = never. */
  upstream?: "org" | "none";
  /** Further checks of the answer; each returned string is a problem. */
  check?: (res: Reply) => string[];
  /** The answer does not depend on the organization at all: it must equal the person's own JWT's answer. */
  baseline?: boolean;
}

type Here = Exclude<Acting, { kind: "refused" }>;
/** An operation variant's rule: the expectation for a request acting `a` (never a refused one); null = not tried. */
export type Rule = (a: Here) => Expect | null;

export const accepted = (why: string, status: Expect["status"] = "2xx", more: Partial<Expect> = {}): Expect => ({
  status,
  refusal: false,
  why,
  ...more,
});
export const refused = (
  status: number | number[],
  why: string,
  code?: string | string[],
  more: Partial<Expect> = {},
): Expect => ({
  status: Array.isArray(status) ? status : [status],
  code,
  refusal: true,
  why,
  ...more,
});

/** The expectation for a refused credential. */
export function refusedBy(a: Extract<Acting, { kind: "refused" }>): Expect {
  return refused(a.status, a.why, a.code);
}

const MANAGERS: ReadonlySet<OrgRole> = new Set(["owner", "admin"]);
const CALLERS: ReadonlySet<OrgRole> = new Set(["owner", "admin", "member"]);

/** Not visible from the personal organization: 404, as for a missing one. */
export const invisible = refused(404, "the organization's private object, from the personal organization");
/** A list or search from the personal organization: answered, without the organization's objects. */
export const listedElsewhere = accepted("a list, from the personal organization");

/** Reading the organization's objects: every role. */
export const read =
  (outside: Expect = invisible): Rule =>
  (a) =>
    a.kind === "org" ? accepted(`a ${a.role} reads`) : outside;

/** Managing the organization's services (or, with `ownerOnly`, its owners): owners and admins. */
export const manage =
  (opts: { outside?: Expect; ownerOnly?: boolean; status?: Expect["status"] } = {}): Rule =>
  (a) => {
    if (a.kind === "personal") return opts.outside ?? invisible;
    const may = opts.ownerOnly ? a.role === "owner" : MANAGERS.has(a.role);
    if (may) return accepted(`a ${a.role} manages`, opts.status);
    return refused(
      403,
      opts.ownerOnly ? `only an owner makes or unmakes an owner, not a ${a.role}` : `a ${a.role} does not manage`,
    );
  };

/** Connecting or deleting a credential of one's own: members and above. */
export const connectOwn =
  (outside: Expect = invisible): Rule =>
  (a) => {
    if (a.kind === "personal") return outside;
    return CALLERS.has(a.role) ? accepted(`a ${a.role} connects its own`) : refused(403, "a viewer connects nothing");
  };

/** The person's own things: whatever the role, wherever it acts. */
export const own =
  (status: Expect["status"] = "2xx"): Rule =>
  () =>
    accepted("the person's own", status);

/**
 * The call log (GET /v1/activity): every credential reads, but only an owner or admin acting in the
 * organization sees other people's calls; anyone else's page holds the calls of one account at most
 * (theirs), and a key's page those of one key at most (its own).
 */
export const activityLog: Rule = (a) =>
  accepted("the calls the credential may see", "2xx", {
    check: (res) => {
      const calls = (res.body as { calls?: Array<{ account_id: string; key: { id: string } | null }> })?.calls;
      if (!Array.isArray(calls)) return ["no calls array"];
      if (a.kind === "org" && MANAGERS.has(a.role)) return [];
      const accounts = new Set(calls.map((c) => c.account_id));
      return accounts.size > 1
        ? [`a ${a.kind === "org" ? a.role : "person in its personal organization"} sees ${accounts.size} accounts' calls`]
        : [];
    },
  });

/** Not about the organization at all: the same answer as the person's own JWT gets. */
export const baseline: Rule = () => ({
  status: "2xx",
  refusal: false,
  why: "the same answer as the person's own JWT",
  baseline: true,
});

/**
 * A route naming the organization in its path or query: the person's role there decides, wherever the
 * request acts (null: not a member any more).
 */
export const asRole =
  (f: (role: OrgRole | null) => Expect): Rule =>
  (a) =>
    f(a.role);

/** Reading through a route that names the organization: every member; 404 to a former one. */
export const readIn = asRole((role) =>
  role ? accepted(`a ${role} reads`) : refused(404, "not a member any more", "organization_not_found"),
);

/** Managing members through a route that names the organization: owners and admins (or only owners). */
export const membersIn = (ownerOnly = false) =>
  asRole((role) => {
    if (role === null) return refused(404, "not a member any more", "organization_not_found");
    if (ownerOnly ? role === "owner" : MANAGERS.has(role)) return accepted(`a ${role} manages members`);
    return refused(
      403,
      ownerOnly ? `only an owner makes or unmakes an owner, not a ${role}` : `a ${role} does not manage members`,
    );
  });

/** Making a key bound to the organization: members and above (identity README: viewers 403, non-members 403). */
export const keysIn = asRole((role) => {
  if (role === null) return refused(403, "not a member any more", "not_a_member");
  if (role === "viewer") return refused(403, "a viewer makes no key for the organization", "insufficient_role");
  return accepted(`a ${role} makes a key`);
});

/** Revoking a key bound to the organization that is not one's own: owners and admins; 404 to anyone else. */
export const othersKeyIn = asRole((role) =>
  role && MANAGERS.has(role)
    ? accepted(`a ${role} revokes the organization's keys`)
    : refused(404, `a ${role ?? "former member"} does not see others' keys`, "api_key_not_found"),
);

/** The single call's result body: a success, with its execution. */
function callSucceeded(res: Reply): string[] {
  return res.body?.success === false ? [`the call failed: ${JSON.stringify(res.body).slice(0, 200)}`] : [];
}

/** Batch elements. */
function elements(res: Reply): Array<Record<string, unknown>> {
  return Array.isArray(res.body?.results) ? res.body.results : [];
}

/**
 * Calling the organization's tool with its credentials: members and above, the organization's credential
 * reaching the upstream; a viewer 403 `insufficient_role` and nothing reaches it; from the personal
 * organization the tool is not visible.
 * - "single": POST /tools/call/{id};
 * - "batch": one element; a refusal may be the whole batch's (403) or its element's (200, each element
 *   refused with that code: the spec runs each call of a batch on its own);
 * - "workflow": a run of the person's own workflow whose step calls the tool: the run is recorded either
 *   way (200); the step completes, or fails with the refusal's code without reaching the upstream.
 */
export const call =
  (surface: "single" | "batch" | "workflow"): Rule =>
  (a) => {
    const may = a.kind === "org" && CALLERS.has(a.role);
    const who = a.kind === "org" ? `a ${a.role}` : "from the personal organization";
    if (surface === "single") {
      if (may) return accepted(`${who} calls`, [200], { upstream: "org", check: callSucceeded });
      if (a.kind === "personal") return { ...invisible, upstream: "none" };
      return refused(403, "a viewer may not call", "insufficient_role", { upstream: "none" });
    }
    if (surface === "batch") {
      if (may) {
        return accepted(`${who} calls`, [200], {
          upstream: "org",
          check: (res) =>
            elements(res).length === 1 && elements(res)[0]!.success === true
              ? []
              : [`the element did not run: ${JSON.stringify(res.body).slice(0, 300)}`],
        });
      }
      const code = a.kind === "personal" ? undefined : "insufficient_role";
      return refused(403, a.kind === "personal" ? "the tool is not visible" : "a viewer may not call", code, {
        status: a.kind === "personal" ? [200, 404] : [403, 200],
        code: undefined,
        upstream: "none",
        check: (res) => {
          if (res.status !== 200) {
            return code && res.body?.error?.code !== code ? [`expected error code ${code}, got ${res.body?.error?.code}`] : [];
          }
          const els = elements(res);
          const bad = els.filter((e) => e.success !== false || (code !== undefined && e.error_code !== code));
          return els.length === 1 && bad.length === 0
            ? []
            : [`expected the element refused${code ? ` with ${code}` : ""}, got ${JSON.stringify(res.body).slice(0, 300)}`];
        },
      });
    }
    const steps = (res: Reply) => (Array.isArray(res.body?.steps) ? (res.body.steps as Array<Record<string, unknown>>) : []);
    if (may) {
      return accepted(`${who} runs`, [200], {
        upstream: "org",
        check: (res) =>
          res.body?.status === "completed" ? [] : [`the run did not complete: ${JSON.stringify(res.body).slice(0, 300)}`],
      });
    }
    const code = a.kind === "personal" ? undefined : "insufficient_role";
    return accepted(a.kind === "personal" ? "the step's tool is not visible" : "a viewer's step may not call", [200], {
      upstream: "none",
      check: (res) => {
        const step = steps(res)[0];
        const problems: string[] = [];
        if (res.body?.status !== "failed") problems.push(`expected the run failed, got ${res.body?.status}`);
        if (step?.status !== "failed" || (code !== undefined && step?.error_code !== code)) {
          problems.push(`expected the step refused${code ? ` with ${code}` : ""}, got ${JSON.stringify(step).slice(0, 300)}`);
        }
        return problems;
      },
    });
  };

/** Publishing into the organization: owners and admins; from the personal organization it publishes there. */
export const publish: Rule = (a) => {
  if (a.kind === "personal") return accepted("publishes into the personal organization", [201]);
  return MANAGERS.has(a.role) ? accepted(`a ${a.role} publishes`, [201]) : refused(403, `a ${a.role} does not publish`);
};

/** A publish's preview: whoever may publish may preview (200, nothing stored); the others are refused as a publish is. */
export const previewPublish: Rule = (a) => {
  if (a.kind === "personal") return accepted("previews a publish into the personal organization", [200]);
  return MANAGERS.has(a.role) ? accepted(`a ${a.role} previews a publish`, [200]) : refused(403, `a ${a.role} does not publish`);
};

/** Whether a status is one of the expected. */
export function statusMatches(expected: Expect["status"], status: number): boolean {
  return expected === "2xx" ? status >= 200 && status < 300 : expected.includes(status);
}

/** Whether an error code is the expected one (any code when none is named). */
export function codeMatches(expected: Expect["code"], code: unknown): boolean {
  if (expected === undefined) return true;
  return Array.isArray(expected) ? expected.includes(code as string) : code === expected;
}

export function describeExpect(e: Expect): string {
  const status = e.status === "2xx" ? "2xx" : e.status.join("/");
  const code = e.code === undefined ? "" : ` ${Array.isArray(e.code) ? e.code.join("/") : e.code}`;
  return `${status}${code} (${e.why})`;
}
