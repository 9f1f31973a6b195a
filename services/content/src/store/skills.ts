/** Skills and their submissions in content's database. */
import { randomUUID } from "node:crypto";
import { type Pool, withTransaction } from "@toolport/kit/pg";
import type { ReviewOutcome, SkillRow, SubmissionRow } from "../domain/model.js";
import type { SkillBundle } from "../skills/bundle.js";

const SKILL_COLUMNS = `id, owner_id, name, description, license, compatibility, metadata, skill_md, scripts, reference_files,
  assets, visibility, service_id, created_at, updated_at`;
const SUBMISSION_COLUMNS = `id, submitter_id, source_skill_id, skill_name, skill_description, license, compatibility, metadata,
  skill_md_content, scripts, reference_files, assets, service_id, status, submitted_at, reviewed_at, reviewer_notes, skill_id`;

const UNIQUE_VIOLATION = "23505";
const json = (v: unknown) => JSON.stringify(v);

/** A bundle's nine columns, in the order both tables list them (name ... assets). */
function bundleValues(b: SkillBundle): unknown[] {
  return [
    b.name,
    b.description,
    b.license,
    b.compatibility,
    b.metadata === null ? null : json(b.metadata),
    b.skillMd,
    json(b.scripts),
    json(b.references),
    json(b.assets),
  ];
}

export class SkillStore {
  constructor(private readonly pool: Pool) {}

  /** A private skill; null when the owner already has one of that name. */
  async create(ownerId: string, b: SkillBundle, serviceId: string | null): Promise<SkillRow | null> {
    try {
      const { rows } = await this.pool.query<SkillRow>(
        `INSERT INTO skills (id, owner_id, name, description, license, compatibility, metadata, skill_md, scripts,
                             reference_files, assets, visibility, service_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'private', $12) RETURNING ${SKILL_COLUMNS}`,
        [randomUUID(), ownerId, ...bundleValues(b), serviceId],
      );
      return rows[0]!;
    } catch (err) {
      if ((err as { code?: string }).code === UNIQUE_VIOLATION) return null;
      throw err;
    }
  }

  async get(id: string): Promise<SkillRow | null> {
    const { rows } = await this.pool.query<SkillRow>(`SELECT ${SKILL_COLUMNS} FROM skills WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async listMine(ownerId: string, visibility?: string): Promise<SkillRow[]> {
    const { rows } = await this.pool.query<SkillRow>(
      `SELECT ${SKILL_COLUMNS} FROM skills WHERE owner_id = $1 AND ($2::text IS NULL OR visibility = $2)
        ORDER BY created_at DESC, id DESC`,
      [ownerId, visibility ?? null],
    );
    return rows;
  }

  /** Public skills, newest first; `search` matches name or description (case-insensitive, literal). */
  async listPublic(search: string | undefined, limit: number, offset: number): Promise<SkillRow[]> {
    const pattern = search ? `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
    const { rows } = await this.pool.query<SkillRow>(
      `SELECT ${SKILL_COLUMNS} FROM skills
        WHERE visibility = 'public' AND ($1::text IS NULL OR name ILIKE $1 OR description ILIKE $1)
        ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [pattern, limit, offset],
    );
    return rows;
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM skills WHERE id = $1 AND owner_id = $2", [id, ownerId]);
    return rowCount === 1;
  }

  async createSubmission(
    submitterId: string,
    sourceSkillId: string | null,
    b: SkillBundle,
    serviceId: string | null,
  ): Promise<SubmissionRow> {
    const { rows } = await this.pool.query<SubmissionRow>(
      `INSERT INTO skill_submissions (id, submitter_id, source_skill_id, skill_name, skill_description, license, compatibility,
                                      metadata, skill_md_content, scripts, reference_files, assets, service_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING ${SUBMISSION_COLUMNS}`,
      [randomUUID(), submitterId, sourceSkillId, ...bundleValues(b), serviceId],
    );
    return rows[0]!;
  }

  async getSubmission(id: string): Promise<SubmissionRow | null> {
    const { rows } = await this.pool.query<SubmissionRow>(`SELECT ${SUBMISSION_COLUMNS} FROM skill_submissions WHERE id = $1`, [
      id,
    ]);
    return rows[0] ?? null;
  }

  async listMySubmissions(submitterId: string): Promise<SubmissionRow[]> {
    const { rows } = await this.pool.query<SubmissionRow>(
      `SELECT ${SUBMISSION_COLUMNS} FROM skill_submissions WHERE submitter_id = $1 ORDER BY submitted_at DESC, id DESC`,
      [submitterId],
    );
    return rows;
  }

  /** The review queue: oldest first. */
  async listSubmissions(status: string): Promise<SubmissionRow[]> {
    const { rows } = await this.pool.query<SubmissionRow>(
      `SELECT ${SUBMISSION_COLUMNS} FROM skill_submissions WHERE status = $1 ORDER BY submitted_at, id LIMIT 500`,
      [status],
    );
    return rows;
  }

  /**
   * Decides a pending submission once. Approval publishes it: the submitter's public skill of that name
   * is created, or replaced by this version when one exists. Null when there is no such submission.
   */
  async review(id: string, reviewerId: string, approve: boolean, notes: string | null): Promise<ReviewOutcome> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<SubmissionRow>(
        `SELECT ${SUBMISSION_COLUMNS} FROM skill_submissions WHERE id = $1 FOR UPDATE`,
        [id],
      );
      const sub = rows[0];
      if (!sub) return null;
      if (sub.status !== "pending") return { kind: "decided", submission: sub };
      let skillId: string | null = null;
      if (approve) {
        const published = await client.query<{ id: string }>(
          `INSERT INTO skills (id, owner_id, name, description, license, compatibility, metadata, skill_md, scripts,
                               reference_files, assets, visibility, service_id, submission_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'public', $12, $13)
           ON CONFLICT (owner_id, visibility, name) DO UPDATE SET
             description = EXCLUDED.description, license = EXCLUDED.license, compatibility = EXCLUDED.compatibility,
             metadata = EXCLUDED.metadata, skill_md = EXCLUDED.skill_md, scripts = EXCLUDED.scripts,
             reference_files = EXCLUDED.reference_files, assets = EXCLUDED.assets, service_id = EXCLUDED.service_id,
             submission_id = EXCLUDED.submission_id, updated_at = now()
           RETURNING id`,
          [
            randomUUID(),
            sub.submitter_id,
            sub.skill_name,
            sub.skill_description,
            sub.license,
            sub.compatibility,
            sub.metadata === null ? null : json(sub.metadata),
            sub.skill_md_content,
            json(sub.scripts),
            json(sub.reference_files),
            json(sub.assets),
            sub.service_id,
            sub.id,
          ],
        );
        skillId = published.rows[0]!.id;
      }
      const { rows: done } = await client.query<SubmissionRow>(
        `UPDATE skill_submissions SET status = $2, reviewed_at = now(), reviewer_id = $3, reviewer_notes = $4, skill_id = $5
          WHERE id = $1 RETURNING ${SUBMISSION_COLUMNS}`,
        [id, approve ? "approved" : "rejected", reviewerId, notes, skillId],
      );
      return { kind: "reviewed", submission: done[0]! };
    });
  }
}
