/**
 * Skills and submissions. Private skills are their owner's alone (anyone else gets NOT_FOUND); public
 * skills come only from approved submissions. Platform administrators (identity's principal flag, set
 * for TOOLPORT_ADMIN_EMAILS) review the queue; a decision is final.
 */
import { conflict, invalidArgument, notFound, permissionDenied } from "@toolport/kit/errors";
import { findSecrets } from "@toolport/kit/secrets";
import { parseSkill, type SkillBundle, SkillInvalid, skillArchive } from "../skills/bundle.js";
import { type Caller, isId, type ReviewOutcome, type SkillRow, type SubmissionRow } from "./model.js";
import type { CatalogPort, SkillStore } from "./ports.js";

/** The statuses a submission can have (a status of the review queue). */
const SUBMISSION_STATUSES = { pending: true, approved: true, rejected: true };

interface FileInput {
  name: string;
  content: string;
}

/** A skill given inline: its SKILL.md and its files. */
export interface SkillInput {
  name: string;
  skillMdContent: string;
  scripts: FileInput[];
  referenceFiles: FileInput[];
  assets: FileInput[];
}

const skillNotFound = (id: string) => notFound("skill_not_found", `skill ${id} not found`, { details: { skill_id: id } });
const submissionNotFound = (id: string) =>
  notFound("submission_not_found", `skill submission ${id} not found`, { details: { submission_id: id } });

const files = (list: FileInput[]) => list.map((f) => ({ name: f.name, content: f.content }));

function bundleOf(input: SkillInput): SkillBundle {
  try {
    return parseSkill({
      name: input.name,
      skillMd: input.skillMdContent,
      scripts: files(input.scripts),
      references: files(input.referenceFiles),
      assets: files(input.assets),
    });
  } catch (err) {
    if (err instanceof SkillInvalid) throw invalidArgument(err.reason, err.message, { details: { field: err.field } });
    throw err;
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

function requirePlatformAdmin(me: Caller): void {
  if (!me.isPlatformAdmin) throw permissionDenied("platform_admin_only", "only platform administrators review submissions");
}

export class Skills {
  constructor(private readonly o: { skills: SkillStore; catalog: Pick<CatalogPort, "serviceVisible"> }) {}

  /** A skill the caller may read: public ones to anyone, private ones to their owner. */
  async readable(id: string, viewer: Caller | undefined): Promise<SkillRow> {
    if (!isId(id)) throw skillNotFound(id);
    const skill = await this.o.skills.get(id);
    if (!skill || (skill.visibility === "private" && skill.owner_id !== viewer?.accountId)) throw skillNotFound(id);
    return skill;
  }

  /** A private skill of the caller's; public ones go through a submission. */
  async create(me: Caller, input: SkillInput & { visibility?: string; serviceId?: string }): Promise<SkillRow> {
    const visibility = input.visibility?.trim() || "private";
    if (visibility === "public")
      throw invalidArgument(
        "visibility_not_allowed",
        "visibility: public skills go through a submission (POST /skill-submissions) and its review",
        { details: { field: "visibility" } },
      );
    if (visibility !== "private")
      throw invalidArgument("invalid_request", "visibility: must be private", { details: { field: "visibility" } });
    const bundle = bundleOf(input);
    const serviceId = input.serviceId?.trim() || null;
    if (serviceId !== null && (!isId(serviceId) || !(await this.o.catalog.serviceVisible(serviceId))))
      throw invalidArgument("invalid_service_id", `service_id: no catalog service ${serviceId} you can see`, {
        details: { field: "service_id" },
      });
    const skill = await this.o.skills.create(me.accountId, bundle, serviceId);
    if (!skill)
      throw conflict("skill_name_taken", `you already have a skill named ${bundle.name}`, { details: { name: bundle.name } });
    return skill;
  }

  async listMine(me: Caller, visibilityParam: string | undefined): Promise<SkillRow[]> {
    const visibility = visibilityParam?.trim() || undefined;
    if (visibility !== undefined && visibility !== "public" && visibility !== "private")
      throw invalidArgument("invalid_request", "visibility: must be public or private", { details: { field: "visibility" } });
    return this.o.skills.listMine(me.accountId, visibility);
  }

  async listPublic(q: { limit?: number; offset?: number; search?: string }): Promise<SkillRow[]> {
    const limit = q.limit ?? 20;
    const offset = q.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw invalidArgument("invalid_request", "limit: must be 1-100", { details: { field: "limit" } });
    if (!Number.isInteger(offset) || offset < 0 || offset > 100_000)
      throw invalidArgument("invalid_request", "offset: must be 0-100000", { details: { field: "offset" } });
    const search = q.search?.trim().slice(0, 200) || undefined;
    return this.o.skills.listPublic(search, limit, offset);
  }

  /** The skill as a zip archive, named after it. */
  async archive(id: string, viewer: Caller | undefined): Promise<{ filename: string; zip: Uint8Array }> {
    const skill = await this.readable(id, viewer);
    const zip = skillArchive({
      name: skill.name,
      skillMd: skill.skill_md,
      scripts: skill.scripts,
      references: skill.reference_files,
      assets: skill.assets,
    });
    return { filename: `${skill.name}.zip`, zip };
  }

  async delete(me: Caller, id: string): Promise<void> {
    if (!isId(id) || !(await this.o.skills.delete(me.accountId, id))) throw skillNotFound(id);
  }

  /** A submission of an owned skill (by id) or of one given inline; refused when it carries a credential. */
  async submit(me: Caller, input: SkillInput & { skillId?: string }): Promise<SubmissionRow> {
    let bundle: SkillBundle;
    let sourceSkillId: string | null = null;
    let serviceId: string | null = null;
    if (input.skillId) {
      const skill = isId(input.skillId) ? await this.o.skills.get(input.skillId) : null;
      if (!skill || skill.owner_id !== me.accountId) throw skillNotFound(input.skillId);
      bundle = bundleOfRow(skill);
      sourceSkillId = skill.id;
      serviceId = skill.service_id;
    } else {
      if (!input.name && !input.skillMdContent)
        throw invalidArgument("invalid_request", "skill_id: name an owned skill, or give the skill inline", {
          details: { field: "skill_id" },
        });
      bundle = bundleOf(input);
    }
    await refuseSecrets(bundle);
    return this.o.skills.createSubmission(me.accountId, sourceSkillId, bundle, serviceId);
  }

  /** The submitter's own submission, or any to a platform administrator. */
  async submission(me: Caller, id: string): Promise<SubmissionRow> {
    const sub = isId(id) ? await this.o.skills.getSubmission(id) : null;
    if (!sub || (sub.submitter_id !== me.accountId && !me.isPlatformAdmin)) throw submissionNotFound(id);
    return sub;
  }

  mySubmissions(me: Caller): Promise<SubmissionRow[]> {
    return this.o.skills.listMySubmissions(me.accountId);
  }

  /** The review queue (pending by default), for platform administrators. */
  async submissions(me: Caller, statusParam: string | undefined): Promise<SubmissionRow[]> {
    requirePlatformAdmin(me);
    const status = statusParam?.trim() || "pending";
    if (!(status in SUBMISSION_STATUSES))
      throw invalidArgument("invalid_request", "status: must be pending, approved or rejected", {
        details: { field: "status" },
      });
    return this.o.skills.listSubmissions(status);
  }

  /** Approves (publishing the skill) or rejects a pending submission; a decision is final (409). */
  async review(me: Caller, req: { submissionId: string; decision: string; reviewerNotes?: string }): Promise<SubmissionRow> {
    requirePlatformAdmin(me);
    const decision = req.decision.trim();
    if (decision !== "approve" && decision !== "reject")
      throw invalidArgument("invalid_request", "decision: must be approve or reject", { details: { field: "decision" } });
    const notes = req.reviewerNotes?.trim() || null;
    if (notes && notes.length > 5000)
      throw invalidArgument("invalid_request", "notes: must be at most 5000 characters", { details: { field: "notes" } });
    if (!isId(req.submissionId)) throw submissionNotFound(req.submissionId);
    const outcome: ReviewOutcome = await this.o.skills.review(req.submissionId, me.accountId, decision === "approve", notes);
    if (!outcome) throw submissionNotFound(req.submissionId);
    if (outcome.kind === "decided")
      throw conflict("submission_already_reviewed", `the submission was already ${outcome.submission.status}`, {
        details: { status: outcome.submission.status },
      });
    return outcome.submission;
  }
}
