/**
 * /v1 routes served by the content service. Skills, submissions, workflows, workflow runs and site
 * records render their JSON here (spec "Skill", "Skill submission", "Workflow", "Site record":
 * snake_case, null where absent, statuses and visibilities as words).
 */
import { type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { enumName, isoTime } from "@toolport/kit/proto-json";
import { VisibilitySchema } from "@toolport/proto/toolport/common/v1/types_pb";
import type { Site } from "@toolport/proto/toolport/content/v1/sites_pb";
import {
  type Skill,
  type SkillFile,
  type SkillSubmission,
  type SkillSummary,
  SubmissionStatusSchema,
} from "@toolport/proto/toolport/content/v1/skills_pb";
import type { AppDeps } from "../deps.js";
import { badField, intQuery, objectBody, queryString, stringField } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { contentOps as ops } from "../openapi/operations/content.js";

const filesJson = (files: SkillFile[]) => files.map((f) => ({ name: f.name, content: f.content }));
const structJson = (s: Skill["metadata"]): JsonValue => s ?? null;
const visibility = (v: number) => enumName(VisibilitySchema, v);

export function skillJson(s: Skill | undefined): JsonObject {
  if (!s) return {};
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    license: s.license ?? null,
    compatibility: s.compatibility ?? null,
    metadata: structJson(s.metadata),
    skill_md: s.skillMd,
    scripts: filesJson(s.scripts),
    references: filesJson(s.references),
    assets: filesJson(s.assets),
    service_id: s.serviceId ?? null,
    visibility: visibility(s.visibility),
    created_at: isoTime(s.createdAt),
    updated_at: isoTime(s.updatedAt),
  };
}

export function skillSummaryJson(s: SkillSummary): JsonObject {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    license: s.license ?? null,
    compatibility: null,
    metadata: structJson(s.metadata),
    service_id: s.serviceId ?? null,
    visibility: visibility(s.visibility),
    created_at: isoTime(s.createdAt),
  };
}

export function submissionJson(s: SkillSubmission | undefined): JsonObject {
  if (!s) return {};
  return {
    id: s.id,
    skill_name: s.skillName,
    skill_description: s.skillDescription,
    skill_md_content: s.skillMdContent,
    scripts: filesJson(s.scripts),
    reference_files: filesJson(s.referenceFiles),
    assets: filesJson(s.assets),
    status: enumName(SubmissionStatusSchema, s.status),
    submitted_at: isoTime(s.submittedAt),
    reviewed_at: isoTime(s.reviewedAt),
    reviewer_notes: s.reviewerNotes ?? null,
    skill_id: s.skillId ?? null,
  };
}

/** The spec's Site record; `owner` adds what only the owner sees (the last crawl's error and time). */
export function siteJson(s: Site | undefined, owner: boolean): JsonObject {
  if (!s) return {};
  const record: JsonObject = {
    id: s.id,
    domain: s.domain,
    url: s.url,
    status: s.status,
    visibility: visibility(s.visibility),
    page_title: s.pageTitle,
    page_description: s.pageDescription,
    components: s.components ?? {},
    discovered_tools: s.discoveredTools ? toJson(ListValueSchema, s.discoveredTools) : [],
    category: s.category,
    tags: s.tags,
    created_at: isoTime(s.createdAt),
  };
  if (owner)
    Object.assign(record, { error: s.error ?? null, crawled_at: isoTime(s.crawledAt), updated_at: isoTime(s.updatedAt) });
  return record;
}

function fileList(body: Record<string, unknown>, field: string): SkillFile[] {
  const value = body[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badField(field, "must be an array of {name, content}");
  return value.map((f, i) => {
    if (typeof f !== "object" || f === null || Array.isArray(f)) throw badField(`${field}[${i}]`, "must be {name, content}");
    const { name, content } = f as Record<string, unknown>;
    if (typeof name !== "string") throw badField(`${field}[${i}].name`, "must be a string");
    if (typeof content !== "string") throw badField(`${field}[${i}].content`, "must be a string");
    return { name, content } as SkillFile;
  });
}

function bundleFields(body: Record<string, unknown>) {
  return {
    name: stringField(body, "name") ?? "",
    skillMdContent: stringField(body, "skill_md_content") ?? "",
    scripts: fileList(body, "scripts"),
    referenceFiles: fileList(body, "reference_files"),
    assets: fileList(body, "assets"),
  };
}

export function contentRoutes(api: DescribedRouter, deps: AppDeps): void {
  const content = deps.clients.content;
  const identity = deps.clients.identity;
  const none = auth(identity, "none");
  const optional = auth(identity, "optional");
  const jwt = auth(identity, "jwt");
  const either = auth(identity, "api_key_or_jwt");

  // ---- skills ----

  api.post("/skills", ops.createSkill, either, async (ctx) => {
    const body = objectBody(ctx);
    const name = stringField(body, "name");
    if (name === undefined) throw badField("name", "is required");
    if (stringField(body, "skill_md_content") === undefined) throw badField("skill_md_content", "is required");
    const res = await content.createSkill({
      ...bundleFields(body),
      visibility: stringField(body, "visibility"),
      serviceId: stringField(body, "service_id"),
    });
    ctx.body = skillJson(res.skill);
  });

  api.get("/skills/my", ops.listMySkills, jwt, async (ctx) => {
    ctx.body = (await content.listMySkills({ visibility: queryString(ctx, "visibility") })).skills.map(skillSummaryJson);
  });

  api.get("/skills/public", ops.listPublicSkills, none, async (ctx) => {
    const res = await content.listPublicSkills({
      search: queryString(ctx, "search"),
      limit: intQuery(ctx.query.limit, "limit"),
      offset: intQuery(ctx.query.offset, "offset"),
    });
    ctx.body = res.skills.map(skillSummaryJson);
  });

  api.get("/skills/:skill_id", ops.getSkill, optional, async (ctx) => {
    ctx.body = skillJson((await content.getSkill({ skillId: ctx.params.skill_id! })).skill);
  });

  api.get("/skills/:skill_id/archive", ops.getSkillArchive, optional, async (ctx) => {
    const res = await content.getSkillArchive({ skillId: ctx.params.skill_id! });
    ctx.set("content-type", "application/zip");
    ctx.set("content-disposition", `attachment; filename="${res.filename.replace(/[^a-z0-9.-]/g, "")}"`);
    ctx.body = Buffer.from(res.zip);
  });

  api.delete("/skills/:skill_id", ops.deleteSkill, either, async (ctx) => {
    ctx.body = { deleted: (await content.deleteSkill({ skillId: ctx.params.skill_id! })).deleted };
  });

  // ---- submissions ----

  api.post("/skill-submissions", ops.createSkillSubmission, jwt, async (ctx) => {
    const body = objectBody(ctx);
    const skillId = stringField(body, "skill_id");
    const res = await content.createSkillSubmission(skillId ? { skillId } : bundleFields(body));
    ctx.body = submissionJson(res.submission);
  });

  api.post("/skills/:skill_id/submissions", ops.submitSkill, jwt, async (ctx) => {
    ctx.body = submissionJson((await content.createSkillSubmission({ skillId: ctx.params.skill_id! })).submission);
  });

  api.get("/skill-submissions/my", ops.listMySkillSubmissions, jwt, async (ctx) => {
    ctx.body = (await content.listMySkillSubmissions({})).submissions.map(submissionJson);
  });

  api.get("/skill-submissions", ops.listSkillSubmissions, jwt, async (ctx) => {
    ctx.body = (await content.listSkillSubmissions({ status: queryString(ctx, "status") })).submissions.map(submissionJson);
  });

  api.get("/skill-submissions/:submission_id", ops.getSkillSubmission, jwt, async (ctx) => {
    ctx.body = submissionJson((await content.getSkillSubmission({ submissionId: ctx.params.submission_id! })).submission);
  });

  api.post("/skill-submissions/:submission_id/review", ops.reviewSkillSubmission, jwt, async (ctx) => {
    const body = objectBody(ctx);
    const res = await content.reviewSkillSubmission({
      submissionId: ctx.params.submission_id!,
      decision: stringField(body, "decision") ?? "",
      reviewerNotes: stringField(body, "notes") ?? stringField(body, "reviewer_notes"),
    });
    ctx.body = submissionJson(res.submission);
  });

  // ---- site records ----

  api.get("/agent-sites/domain/:domain", ops.getSiteByDomain, none, async (ctx) => {
    ctx.body = siteJson((await content.getSiteByDomain({ domain: ctx.params.domain! })).site, false);
  });

  api.post("/agent-sites", ops.createSite, either, async (ctx) => {
    const body = objectBody(ctx);
    const url = stringField(body, "url");
    if (url === undefined) throw badField("url", "is required");
    const res = await content.createSite({ url, visibility: stringField(body, "visibility") });
    ctx.body = siteJson(res.site, true);
  });

  api.get("/agent-sites/my", ops.listMySites, either, async (ctx) => {
    ctx.body = (await content.listMySites({})).sites.map((s) => siteJson(s, true));
  });

  api.get("/agent-sites/:site_id", ops.getSite, either, async (ctx) => {
    ctx.body = siteJson((await content.getSite({ siteId: ctx.params.site_id! })).site, true);
  });

  api.post("/agent-sites/:site_id/recrawl", ops.recrawlSite, either, async (ctx) => {
    ctx.body = siteJson((await content.recrawlSite({ siteId: ctx.params.site_id! })).site, true);
  });

  api.delete("/agent-sites/:site_id", ops.deleteSite, either, async (ctx) => {
    ctx.body = { deleted: (await content.deleteSite({ siteId: ctx.params.site_id! })).deleted };
  });
}
