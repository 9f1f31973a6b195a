/**
 * Skills and their review flow through the gateway on the real stack: every skill route and its bad
 * inputs, owners only for private skills, the submission flow (a non-admin reviewer 403, a double
 * decision 409, a credential refused with its file and line), and the archive's exact layout.
 */
import { randomUUID } from "node:crypto";
import { unzipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Call } from "../harness/http.js";
import { signupHuman } from "../harness/identity-http.js";
import {
  type ExecStack,
  echoApiDocument,
  expectError,
  publishOpenApi,
  registerAgent,
  startExecStack,
} from "./execution-support.js";

const ADMIN_EMAIL = `admin-${randomUUID().slice(0, 8)}@example.com`;

interface User {
  token: string;
  accountId: string;
  key: string;
}

const skillMd = (name: string, extra = "") => `---
name: ${name}
description: Turns CSV files into charts.
license: MIT
compatibility: Requires Python 3.11
metadata:
  author: Ada
  version: "1.2"
${extra}---

# ${name}

Use scripts/plot.py to draw a chart from a CSV file.
`;

describe("skills", () => {
  let s: ExecStack;
  let call: Call;
  let alice: User;
  let bob: User;
  let admin: User;
  let privateServiceOfBob: string;

  async function user(name: string, email?: string): Promise<User> {
    let token: string;
    let accountId: string;
    if (email) {
      const res = await call("POST", "/auth/signup", { body: { email, password: "correct horse battery staple", name } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      token = res.body.access_token;
      accountId = res.body.account_id;
    } else {
      ({ token, accountId } = await signupHuman(call, name));
    }
    const key = await call("POST", "/api-keys", { token, body: { name: "k" } });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    return { token, accountId, key: key.body.key };
  }

  const create = (u: User, body: Record<string, unknown>, how: "key" | "token" = "key") =>
    call("POST", "/skills", { ...(how === "key" ? { key: u.key } : { token: u.token }), body });

  const validBody = (name: string) => ({
    name,
    skill_md_content: skillMd(name),
    scripts: [{ name: "plot.py", content: "import csv\nprint('chart')\n" }],
    reference_files: [{ name: "guide/charts.md", content: "# Charts\n" }],
    assets: [{ name: "template.json", content: '{"type": "bar"}' }],
  });

  beforeAll(async () => {
    s = await startExecStack([], { TOOLPORT_ADMIN_EMAILS: ` ${ADMIN_EMAIL.toUpperCase()} ` }, [
      "catalog",
      "billing",
      "identity",
      "content",
      "gateway",
    ]);
    call = s.call;
    [alice, bob, admin] = await Promise.all([user("alice"), user("bob"), user("admin", ADMIN_EMAIL)]);
    // A private catalog service of an agent's: alice cannot see it.
    const agent = await registerAgent(s);
    privateServiceOfBob = (await publishOpenApi(s, agent, echoApiDocument(), "https://api.example.com")).serviceId;
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("creates a private skill from its frontmatter and returns the whole skill", async () => {
    const res = await create(alice, validBody("csv-charts"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      name: "csv-charts",
      description: "Turns CSV files into charts.",
      license: "MIT",
      compatibility: "Requires Python 3.11",
      metadata: { author: "Ada", version: "1.2" },
      skill_md: skillMd("csv-charts"),
      scripts: [{ name: "plot.py", content: "import csv\nprint('chart')\n" }],
      references: [{ name: "guide/charts.md", content: "# Charts\n" }],
      assets: [{ name: "template.json", content: '{"type": "bar"}' }],
      service_id: null,
      visibility: "private",
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(res.body.created_at)).toBeGreaterThan(0);
    // The same name again is a conflict; another user may use it.
    expectError(await create(alice, validBody("csv-charts")), 409, "skill_name_taken");
    expect((await create(bob, validBody("csv-charts"))).status).toBe(200);
  });

  it("refuses bad input with a 400 naming the field, and a bundle over 1 MiB with a 413", async () => {
    const bad = async (body: Record<string, unknown>, status: number, code: string, field: RegExp) => {
      const res = await create(alice, body);
      expectError(res, status, code);
      expect(res.body.error.message).toMatch(field);
    };
    const base = validBody("ok-name");
    await bad({ ...base, skill_md_content: "# no frontmatter\n" }, 400, "invalid_skill", /^skill_md_content/);
    await bad(
      { ...base, skill_md_content: "---\nname: ok-name\ndescription: [unclosed\n---\n" },
      400,
      "invalid_skill",
      /^skill_md_content/,
    );
    await bad({ ...base, skill_md_content: "---\nname: ok-name\n---\nbody\n" }, 400, "invalid_skill", /description/);
    await bad({ ...base, name: "Bad_Name" }, 400, "invalid_skill", /^name/);
    await bad({ ...base, name: "x".repeat(65) }, 400, "invalid_skill", /^name/);
    await bad({ ...base, name: "other-name" }, 400, "invalid_skill", /name/);
    await bad(
      { ...base, visibility: "public" },
      400,
      "visibility_not_allowed",
      /^visibility: public skills go through a submission/,
    );
    await bad({ ...base, visibility: "secret" }, 400, "invalid_request", /^visibility/);
    await bad({ ...base, scripts: [{ name: "../escape.sh", content: "x" }] }, 400, "invalid_skill", /^scripts\[0\]\.name/);
    await bad({ ...base, assets: [{ name: "/etc/passwd", content: "x" }] }, 400, "invalid_skill", /^assets\[0\]\.name/);
    await bad({ ...base, scripts: [{ name: "a\u0001b", content: "x" }] }, 400, "invalid_skill", /^scripts\[0\]\.name/);
    await bad({ ...base, reference_files: [{ name: 3, content: "x" }] }, 400, "invalid_request", /^reference_files\[0\]\.name/);
    await bad({ ...base, service_id: randomUUID() }, 400, "invalid_service_id", /^service_id/);
    await bad({ ...base, service_id: privateServiceOfBob }, 400, "invalid_service_id", /^service_id/);
    await bad({ ...base, scripts: [{ name: "big.txt", content: "x".repeat(1024 * 1024) }] }, 413, "skill_too_large", /./);
    const res = await call("POST", "/skills", { key: alice.key, body: { skill_md_content: skillMd("x") } });
    expectError(res, 400, "invalid_request");
    // Nothing was stored by any refusal.
    const mine = await call("GET", "/skills/my", { token: alice.token });
    expect(mine.body.map((x: { name: string }) => x.name)).not.toContain("ok-name");
  });

  it("lists the caller's skills newest first (JWT only), with compatibility null and a visibility filter", async () => {
    const u = await user("lister");
    for (const n of ["first-skill", "second-skill"]) expect((await create(u, validBody(n))).status).toBe(200);
    const res = await call("GET", "/skills/my", { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body.map((x: { name: string }) => x.name)).toEqual(["second-skill", "first-skill"]);
    expect(Object.keys(res.body[0]).sort()).toEqual(
      ["compatibility", "created_at", "description", "id", "license", "metadata", "name", "service_id", "visibility"].sort(),
    );
    expect(res.body[0]).toMatchObject({ compatibility: null, license: "MIT", visibility: "private" });
    expect((await call("GET", "/skills/my?visibility=public", { token: u.token })).body).toEqual([]);
    expect((await call("GET", "/skills/my?visibility=private", { token: u.token })).body).toHaveLength(2);
    expectError(await call("GET", "/skills/my?visibility=everyone", { token: u.token }), 400, "invalid_request");
    expect((await call("GET", "/skills/my", { key: u.key })).status).toBe(401);
  });

  it("shows a private skill only to its owner, and lets only the owner delete it", async () => {
    const made = await create(alice, validBody("owned-only"));
    const id = made.body.id;
    expect((await call("GET", `/skills/${id}`, { key: alice.key })).body).toMatchObject({
      compatibility: "Requires Python 3.11",
    });
    expectError(await call("GET", `/skills/${id}`, { key: bob.key }), 404, "skill_not_found");
    expectError(await call("GET", `/skills/${id}`), 404, "skill_not_found");
    expectError(await call("GET", `/skills/${id}/archive`, { key: bob.key }), 404, "skill_not_found");
    expectError(await call("GET", "/skills/not-a-uuid", { key: alice.key }), 404, "skill_not_found");
    expectError(await call("DELETE", `/skills/${id}`, { key: bob.key }), 404, "skill_not_found");
    expect((await call("DELETE", `/skills/${id}`, { key: alice.key })).body).toEqual({ deleted: true });
    expectError(await call("GET", `/skills/${id}`, { key: alice.key }), 404, "skill_not_found");
  });

  it("serves the bundle as a zip in the layout an assistant installs", async () => {
    const made = await create(alice, validBody("zip-layout"));
    const res = await fetch(`${s.stack.gatewayUrl}/v1/skills/${made.body.id}/archive`, { headers: { "svc-api-key": alice.key } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="zip-layout.zip"');
    const entries = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(Object.keys(entries).sort()).toEqual([
      "zip-layout/SKILL.md",
      "zip-layout/assets/template.json",
      "zip-layout/references/guide/charts.md",
      "zip-layout/scripts/plot.py",
    ]);
    const text = (name: string) => new TextDecoder().decode(entries[name]);
    expect(text("zip-layout/SKILL.md")).toBe(skillMd("zip-layout"));
    expect(text("zip-layout/scripts/plot.py")).toBe("import csv\nprint('chart')\n");
  });

  it("reads an administrator named by TOOLPORT_ADMIN_EMAILS as one in GET /accounts/me", async () => {
    const me = await call("GET", "/accounts/me", { token: admin.token });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toMatchObject({ email: ADMIN_EMAIL, is_platform_admin: true });
    expect((await call("GET", "/accounts/me", { token: alice.token })).body.is_platform_admin).toBe(false);
  });

  it("reviews submissions: pending, owner-only reads, admins decide once, approval publishes", async () => {
    const made = await create(alice, validBody("publish-me"));
    const submitted = await call("POST", "/skill-submissions", { token: alice.token, body: { skill_id: made.body.id } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const sub = submitted.body;
    expect(sub).toMatchObject({
      skill_name: "publish-me",
      skill_description: "Turns CSV files into charts.",
      skill_md_content: skillMd("publish-me"),
      status: "pending",
      reviewed_at: null,
      reviewer_notes: null,
      skill_id: null,
    });
    expect(Object.keys(sub).sort()).toEqual(
      [
        "assets",
        "id",
        "reference_files",
        "reviewed_at",
        "reviewer_notes",
        "scripts",
        "skill_description",
        "skill_id",
        "skill_md_content",
        "skill_name",
        "status",
        "submitted_at",
      ].sort(),
    );
    // Submissions need a JWT; another user's is a 404; the owner lists its own.
    expect((await call("POST", "/skill-submissions", { key: alice.key, body: { skill_id: made.body.id } })).status).toBe(401);
    expectError(
      await call("POST", "/skill-submissions", { token: bob.token, body: { skill_id: made.body.id } }),
      404,
      "skill_not_found",
    );
    expect((await call("GET", `/skill-submissions/${sub.id}`, { token: alice.token })).body).toMatchObject({ id: sub.id });
    expectError(await call("GET", `/skill-submissions/${sub.id}`, { token: bob.token }), 404, "submission_not_found");
    expect((await call("GET", `/skill-submissions/${sub.id}`, { key: alice.key })).status).toBe(401);
    expect((await call("GET", "/skill-submissions/my", { token: alice.token })).body.map((x: { id: string }) => x.id)).toContain(
      sub.id,
    );
    // Only administrators see the queue and decide.
    expectError(await call("GET", "/skill-submissions", { token: alice.token }), 403, "platform_admin_only");
    const denied = await call("POST", `/skill-submissions/${sub.id}/review`, { token: bob.token, body: { decision: "approve" } });
    expectError(denied, 403, "platform_admin_only");
    const queue = await call("GET", "/skill-submissions?status=pending", { token: admin.token });
    expect(queue.status, JSON.stringify(queue.body)).toBe(200);
    expect(queue.body.map((x: { id: string }) => x.id)).toContain(sub.id);
    expectError(
      await call("POST", `/skill-submissions/${sub.id}/review`, { token: admin.token, body: { decision: "maybe" } }),
      400,
      "invalid_request",
    );
    const approved = await call("POST", `/skill-submissions/${sub.id}/review`, {
      token: admin.token,
      body: { decision: "approve", notes: "Looks good." },
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: "approved", reviewer_notes: "Looks good." });
    expect(Date.parse(approved.body.reviewed_at)).toBeGreaterThan(0);
    const publicId = approved.body.skill_id;
    expect(publicId).toMatch(/^[0-9a-f-]{36}$/);
    expect(publicId).not.toBe(made.body.id);
    // Decided once.
    const again = await call("POST", `/skill-submissions/${sub.id}/review`, { token: admin.token, body: { decision: "reject" } });
    expectError(again, 409, "submission_already_reviewed");
    // The public skill: anyone reads it, it is listed publicly and in the owner's list.
    const anon = await call("GET", `/skills/${publicId}`);
    expect(anon.status).toBe(200);
    expect(anon.body).toMatchObject({ name: "publish-me", visibility: "public" });
    const listed = await call("GET", "/skills/public?search=publish-me");
    expect(listed.body.map((x: { id: string }) => x.id)).toEqual([publicId]);
    expect(
      (await call("GET", "/skills/my?visibility=public", { token: alice.token })).body.map((x: { id: string }) => x.id),
    ).toEqual([publicId]);
    expect((await call("GET", `/skills/${publicId}/archive`)).status).toBe(200);
  });

  it("rejects a submission, and takes one inline", async () => {
    const inline = await call("POST", "/skill-submissions", { token: bob.token, body: validBody("inline-skill") });
    expect(inline.status, JSON.stringify(inline.body)).toBe(200);
    const rejected = await call("POST", `/skill-submissions/${inline.body.id}/review`, {
      token: admin.token,
      body: { decision: "reject", notes: "Needs examples." },
    });
    expect(rejected.body).toMatchObject({ status: "rejected", reviewer_notes: "Needs examples.", skill_id: null });
    expect((await call("GET", "/skills/public?search=inline-skill")).body).toEqual([]);
    expect(
      (await call("GET", "/skill-submissions?status=rejected", { token: admin.token })).body.map((x: { id: string }) => x.id),
    ).toContain(inline.body.id);
    expectError(await call("POST", "/skill-submissions", { token: bob.token, body: {} }), 400, "invalid_request");
  });

  it("refuses a submission whose files contain a credential, naming the file and line but not the value", async () => {
    const secret = "AKIAIOSFODNN7EXAMPLE";
    const body = {
      ...validBody("leaky-skill"),
      scripts: [{ name: "deploy.sh", content: `#!/bin/sh\n# deploy\nexport AWS_ACCESS_KEY_ID=${secret}\n` }],
    };
    const res = await call("POST", "/skill-submissions", { token: bob.token, body });
    expectError(res, 400, "submission_contains_secret");
    expect(res.body.error.message).toMatch(/^scripts\/deploy\.sh line 3: /);
    expect(res.body.error.details).toMatchObject({ file: "scripts/deploy.sh", line: 3 });
    expect(JSON.stringify(res.body)).not.toContain(secret);
    expect(
      (await call("GET", "/skill-submissions/my", { token: bob.token })).body.map((x: { skill_name: string }) => x.skill_name),
    ).not.toContain("leaky-skill");
  });
});
