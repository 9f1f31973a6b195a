/**
 * Skills and submissions. Private skills are their owner's alone (anyone else gets NOT_FOUND); public
 * skills come only from approved submissions. Platform administrators (identity's principal flag, set
 * for TOOLPORT_ADMIN_EMAILS) review the queue; a decision is final.
 */
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { conflict, invalidArgument, notFound, permissionDenied } from "@toolport/kit/errors";
import { principalKey } from "@toolport/kit/rpc";
import { findSecrets } from "@toolport/kit/secrets";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";
import { Visibility } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import {
  type SkillFile as SkillFileMsg,
  type SkillSchema,
  type SkillSubmissionSchema,
  type SkillSummarySchema,
  SubmissionStatus,
} from "@toolport/proto/toolport/content/v1/skills_pb";
import { parseSkill, type SkillBundle, SkillInvalid, skillArchive } from "../skills/bundle.js";
import type { SkillRow, SkillStore, SubmissionRow } from "../store/skills.js";
import { caller, isId, jwtCaller, ts } from "./common.js";

export interface SkillDeps {
  skills: SkillStore;
  /** Whether the caller can see a catalog service (catalog's GetService with the caller's principal). */
  serviceVisible(serviceId: string): Promise<boolean>;
}

type Impl = Pick<
  ServiceImpl<typeof ContentService>,
  | "createSkill"
  | "getSkill"
  | "listMySkills"
  | "listPublicSkills"
  | "getSkillArchive"
  | "deleteSkill"
  | "createSkillSubmission"
  | "getSkillSubmission"
  | "listMySkillSubmissions"
  | "listSkillSubmissions"
  | "reviewSkillSubmission"
>;

const skillNotFound = (id: string) => notFound("skill_not_found", `skill ${id} not found`, { details: { skill_id: id } });
const submissionNotFound = (id: string) =>
  notFound("submission_not_found", `skill submission ${id} not found`, { details: { submission_id: id } });

function invalid(err: unknown): never {
  if (err instanceof SkillInvalid) throw invalidArgument(err.reason, err.message, { details: { field: err.field } });
  throw err;
}

const files = (list: { name: string; content: string }[]) => list.map((f) => ({ name: f.name, content: f.content }));
const metadata = (m: Record<string, unknown> | null) => (m ? (m as JsonObject) : undefined);
const visibilityOf = (v: string) => (v === "public" ? Visibility.PUBLIC : Visibility.PRIVATE);

export function skillMessage(s: SkillRow): MessageInitShape<typeof SkillSchema> {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    skillMd: s.skill_md,
    scripts: files(s.scripts),
    references: files(s.reference_files),
    assets: files(s.assets),
    visibility: visibilityOf(s.visibility),
    createdAt: ts(s.created_at),
    updatedAt: ts(s.updated_at),
    license: s.license ?? undefined,
    compatibility: s.compatibility ?? undefined,
    metadata: metadata(s.metadata),
    serviceId: s.service_id ?? undefined,
    ownerId: s.owner_id,
  };
}

/** The list summary: `compatibility` is always null there (a single get returns it). */
export function skillSummary(s: SkillRow): MessageInitShape<typeof SkillSummarySchema> {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    license: s.license ?? undefined,
    metadata: metadata(s.metadata),
    serviceId: s.service_id ?? undefined,
    visibility: visibilityOf(s.visibility),
    createdAt: ts(s.created_at),
  };
}

const submissionStatus = {
  pending: SubmissionStatus.PENDING,
  approved: SubmissionStatus.APPROVED,
  rejected: SubmissionStatus.REJECTED,
};

export function submissionMessage(s: SubmissionRow): MessageInitShape<typeof SkillSubmissionSchema> {
  return {
    id: s.id,
    skillName: s.skill_name,
    skillDescription: s.skill_description,
    skillMdContent: s.skill_md_content,
    scripts: files(s.scripts),
    referenceFiles: files(s.reference_files),
    assets: files(s.assets),
    status: submissionStatus[s.status],
    submittedAt: ts(s.submitted_at),
    reviewedAt: ts(s.reviewed_at),
    reviewerNotes: s.reviewer_notes ?? undefined,
    skillId: s.skill_id ?? undefined,
    sourceSkillId: s.source_skill_id ?? "",
    submitterId: s.submitter_id,
  };
}

/** A public submission must not carry a credential: the first one found names its file and line, not its value. */
async function refuseSecrets(b: SkillBundle): Promise<void> {
  const named: { file: string; text: string }[] = [
    { file: "SKILL.md", text: b.skillMd },
    ...b.scripts.map((f) => ({ file: `scripts/${f.name}`, text: f.content })),
    ...b.references.map((f) => ({ file: `references/${f.name}`, text: f.content })),
    ...b.assets.map((f) => ({ file: `assets/${f.name}`, text: f.content })),
  ];
  const found = await findSecrets(named.map((n) => n.text));
  for (let i = 0; i < named.length; i++) {
    const first = found[i]![0];
    if (!first) continue;
    const { file, text } = named[i]!;
    const line = text.slice(0, first.start).split("\n").length;
    throw invalidArgument(
      "submission_contains_secret",
      `${file} line ${line}: looks like a credential (${first.rule}); remove it before publishing the skill`,
      { details: { file, line, rule: first.rule } },
    );
  }
}

function bundleOf(input: {
  name: string;
  skillMdContent: string;
  scripts: SkillFileMsg[];
  referenceFiles: SkillFileMsg[];
  assets: SkillFileMsg[];
}): SkillBundle {
  try {
    return parseSkill({
      name: input.name,
      skillMd: input.skillMdContent,
      scripts: files(input.scripts),
      references: files(input.referenceFiles),
      assets: files(input.assets),
    });
  } catch (err) {
    invalid(err);
  }
}

function bundleOfRow(s: SkillRow): SkillBundle {
  return {
    name: s.name,
    description: s.description,
    license: s.license,
    compatibility: s.compatibility,
    metadata: s.metadata,
    skillMd: s.skill_md,
    scripts: s.scripts,
    references: s.reference_files,
    assets: s.assets,
  };
}

export function skillHandlers(deps: SkillDeps): Impl {
  const { skills } = deps;

  /** A skill the caller may read: public ones to anyone, private ones to their owner. */
  const readable = async (id: string, principal: Principal | undefined) => {
    if (!isId(id)) throw skillNotFound(id);
    const skill = await skills.get(id);
    if (!skill || (skill.visibility === "private" && skill.owner_id !== principal?.accountId)) throw skillNotFound(id);
    return skill;
  };

  return {
    async createSkill(req, context) {
      const me = caller(context);
      const visibility = req.visibility?.trim() || "private";
      if (visibility === "public")
        throw invalidArgument(
          "visibility_not_allowed",
          "visibility: public skills go through a submission (POST /skill-submissions) and its review",
          { details: { field: "visibility" } },
        );
      if (visibility !== "private")
        throw invalidArgument("invalid_request", "visibility: must be private", { details: { field: "visibility" } });
      const bundle = bundleOf(req);
      const serviceId = req.serviceId?.trim() || null;
      if (serviceId !== null && (!isId(serviceId) || !(await deps.serviceVisible(serviceId))))
        throw invalidArgument("invalid_service_id", `service_id: no catalog service ${serviceId} you can see`, {
          details: { field: "service_id" },
        });
      const skill = await skills.create(me.accountId, bundle, serviceId);
      if (!skill)
        throw conflict("skill_name_taken", `you already have a skill named ${bundle.name}`, { details: { name: bundle.name } });
      return { skill: skillMessage(skill) };
    },

    async getSkill(req, context) {
      return { skill: skillMessage(await readable(req.skillId, context.values.get(principalKey))) };
    },

    async listMySkills(req, context) {
      const me = jwtCaller(context);
      const visibility = req.visibility?.trim() || undefined;
      if (visibility !== undefined && visibility !== "public" && visibility !== "private")
        throw invalidArgument("invalid_request", "visibility: must be public or private", { details: { field: "visibility" } });
      return { skills: (await skills.listMine(me.accountId, visibility)).map(skillSummary) };
    },

    async listPublicSkills(req) {
      const limit = req.limit ?? 20;
      const offset = req.offset ?? 0;
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw invalidArgument("invalid_request", "limit: must be 1-100", { details: { field: "limit" } });
      if (!Number.isInteger(offset) || offset < 0 || offset > 100_000)
        throw invalidArgument("invalid_request", "offset: must be 0-100000", { details: { field: "offset" } });
      const search = req.search?.trim().slice(0, 200) || undefined;
      return { skills: (await skills.listPublic(search, limit, offset)).map(skillSummary) };
    },

    async getSkillArchive(req, context) {
      const skill = await readable(req.skillId, context.values.get(principalKey));
      const zip = skillArchive({
        name: skill.name,
        skillMd: skill.skill_md,
        scripts: skill.scripts,
        references: skill.reference_files,
        assets: skill.assets,
      });
      return { filename: `${skill.name}.zip`, zip };
    },

    async deleteSkill(req, context) {
      const me = caller(context);
      if (!isId(req.skillId) || !(await skills.delete(me.accountId, req.skillId))) throw skillNotFound(req.skillId);
      return { deleted: true };
    },

    async createSkillSubmission(req, context) {
      const me = jwtCaller(context);
      let bundle: SkillBundle;
      let sourceSkillId: string | null = null;
      let serviceId: string | null = null;
      if (req.skillId) {
        const skill = isId(req.skillId) ? await skills.get(req.skillId) : null;
        if (!skill || skill.owner_id !== me.accountId) throw skillNotFound(req.skillId);
        bundle = bundleOfRow(skill);
        sourceSkillId = skill.id;
        serviceId = skill.service_id;
      } else {
        if (!req.name && !req.skillMdContent)
          throw invalidArgument("invalid_request", "skill_id: name an owned skill, or give the skill inline", {
            details: { field: "skill_id" },
          });
        bundle = bundleOf(req);
      }
      await refuseSecrets(bundle);
      return { submission: submissionMessage(await skills.createSubmission(me.accountId, sourceSkillId, bundle, serviceId)) };
    },

    async getSkillSubmission(req, context) {
      const me = jwtCaller(context);
      const sub = isId(req.submissionId) ? await skills.getSubmission(req.submissionId) : null;
      if (!sub || (sub.submitter_id !== me.accountId && !me.isPlatformAdmin)) throw submissionNotFound(req.submissionId);
      return { submission: submissionMessage(sub) };
    },

    async listMySkillSubmissions(_req, context) {
      const me = jwtCaller(context);
      return { submissions: (await skills.listMySubmissions(me.accountId)).map(submissionMessage) };
    },

    async listSkillSubmissions(req, context) {
      const me = jwtCaller(context);
      if (!me.isPlatformAdmin) throw permissionDenied("platform_admin_only", "only platform administrators review submissions");
      const status = req.status?.trim() || "pending";
      if (!(status in submissionStatus))
        throw invalidArgument("invalid_request", "status: must be pending, approved or rejected", {
          details: { field: "status" },
        });
      return { submissions: (await skills.listSubmissions(status)).map(submissionMessage) };
    },

    async reviewSkillSubmission(req, context) {
      const me = jwtCaller(context);
      if (!me.isPlatformAdmin) throw permissionDenied("platform_admin_only", "only platform administrators review submissions");
      const decision = req.decision.trim();
      if (decision !== "approve" && decision !== "reject")
        throw invalidArgument("invalid_request", "decision: must be approve or reject", { details: { field: "decision" } });
      const notes = req.reviewerNotes?.trim() || null;
      if (notes && notes.length > 5000)
        throw invalidArgument("invalid_request", "notes: must be at most 5000 characters", { details: { field: "notes" } });
      if (!isId(req.submissionId)) throw submissionNotFound(req.submissionId);
      const outcome = await skills.review(req.submissionId, me.accountId, decision === "approve", notes);
      if (!outcome) throw submissionNotFound(req.submissionId);
      if (outcome.kind === "decided")
        throw conflict("submission_already_reviewed", `the submission was already ${outcome.submission.status}`, {
          details: { status: outcome.submission.status },
        });
      return { submission: submissionMessage(outcome.submission) };
    },
  };
}
