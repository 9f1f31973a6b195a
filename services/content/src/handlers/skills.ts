/** Skills and submissions over RPC: proto in, the use case (domain/skills.ts), proto out. */
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { principalKey } from "@toolport/kit/rpc";
import { Visibility } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import {
  type SkillSchema,
  type SkillSubmissionSchema,
  type SkillSummarySchema,
  SubmissionStatus,
} from "@toolport/proto/toolport/content/v1/skills_pb";
import type { SkillRow, SubmissionRow } from "../domain/model.js";
import type { CatalogPort, SkillStore } from "../domain/ports.js";
import { Skills } from "../domain/skills.js";
import { caller, jwtCaller, ts } from "./common.js";

export interface SkillDeps {
  skills: SkillStore;
  /** A skill's service is one the caller can see (catalog's GetService with the caller's principal). */
  catalog: Pick<CatalogPort, "serviceVisible">;
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

export function skillHandlers(deps: SkillDeps): Impl {
  const skills = new Skills({ skills: deps.skills, catalog: deps.catalog });
  return {
    async createSkill(req, context) {
      return { skill: skillMessage(await skills.create(caller(context), req)) };
    },

    async getSkill(req, context) {
      return { skill: skillMessage(await skills.readable(req.skillId, context.values.get(principalKey))) };
    },

    async listMySkills(req, context) {
      return { skills: (await skills.listMine(jwtCaller(context), req.visibility)).map(skillSummary) };
    },

    async listPublicSkills(req) {
      return { skills: (await skills.listPublic(req)).map(skillSummary) };
    },

    async getSkillArchive(req, context) {
      return skills.archive(req.skillId, context.values.get(principalKey));
    },

    async deleteSkill(req, context) {
      await skills.delete(caller(context), req.skillId);
      return { deleted: true };
    },

    async createSkillSubmission(req, context) {
      return { submission: submissionMessage(await skills.submit(jwtCaller(context), req)) };
    },

    async getSkillSubmission(req, context) {
      return { submission: submissionMessage(await skills.submission(jwtCaller(context), req.submissionId)) };
    },

    async listMySkillSubmissions(_req, context) {
      return { submissions: (await skills.mySubmissions(jwtCaller(context))).map(submissionMessage) };
    },

    async listSkillSubmissions(req, context) {
      return { submissions: (await skills.submissions(jwtCaller(context), req.status)).map(submissionMessage) };
    },

    async reviewSkillSubmission(req, context) {
      return { submission: submissionMessage(await skills.review(jwtCaller(context), req)) };
    },
  };
}
