/**
 * A skill bundle in the Agent Skills format (what coding assistants load): a folder `<name>/` holding a
 * SKILL.md whose YAML frontmatter carries `description` (and optionally `name`, `license`, `compatibility`,
 * `metadata`, `allowed-tools`), plus `scripts/`, `references/` and `assets/` folders. `parseSkill` checks a
 * submitted bundle and reads its frontmatter; `skillArchive` builds the zip `GET /skills/{id}/archive` serves.
 *
 * Errors name the field as the HTTP body spells it (`name`, `skill_md_content.description`,
 * `reference_files[0].name`), so a 400 always says what to fix.
 *
 * Our limits (the spec leaves skill size open): 1 MiB in all (SKILL.md plus every file's name and content,
 * UTF-8), else 413; at most 100 files over scripts, references and assets together, else 400.
 */
import { strToU8, type Zippable, zipSync } from "fflate";
import { FrontmatterInvalid, type JsonValue, readFrontmatter, toJson, withoutBom } from "./frontmatter.js";

/** One file of a bundle; `name` is a path relative to its folder (`lib/helpers.py`). */
export interface SkillFile {
  name: string;
  content: string;
}

/** A bundle as submitted (`POST /skills`: name, skill_md_content, scripts, reference_files, assets). */
export interface SkillInput {
  name: string;
  skillMd: string;
  scripts: SkillFile[];
  references: SkillFile[];
  assets: SkillFile[];
}

/** A checked bundle with what its frontmatter says. */
export interface SkillBundle {
  name: string;
  /** The frontmatter's description, trimmed. */
  description: string;
  license: string | null;
  compatibility: string | null;
  /** The frontmatter's `metadata` map as JSON (explicit dates as ISO strings); null when absent. */
  metadata: Record<string, unknown> | null;
  /** SKILL.md as submitted, less a leading byte-order mark. */
  skillMd: string;
  scripts: SkillFile[];
  references: SkillFile[];
  assets: SkillFile[];
}

export const SKILL_LIMITS = { maxBytes: 1024 * 1024, maxFiles: 100, maxNameLength: 64 } as const;

// Agent Skills limits on the frontmatter, and ours on a file's path.
const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;
const MAX_FILE_NAME = 255;

/** A refused bundle: `field` as the HTTP body names it; `message` starts with `<field>: `. */
export class SkillInvalid extends Error {
  override name = "SkillInvalid";
  constructor(
    readonly field: string,
    readonly reason: "invalid_skill" | "skill_too_large",
    message: string,
    readonly status: 400 | 413,
  ) {
    super(message);
  }
}

const invalid = (field: string, problem: string) => new SkillInvalid(field, "invalid_skill", `${field}: ${problem}`, 400);

// Each group: its field in the HTTP body, its key in SkillInput, its folder in the installed skill.
const GROUPS = [
  { field: "scripts", key: "scripts", folder: "scripts" },
  { field: "reference_files", key: "references", folder: "references" },
  { field: "assets", key: "assets", folder: "assets" },
] as const;

// Lowercase letters and digits in runs joined by single hyphens (the Agent Skills rule; the spec's
// "lowercase, hyphens" with the digits the format allows, e.g. `pdf2text`).
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Checks a submitted bundle and reads its frontmatter. Order: the name, the shape and count of the files,
 * the total size (413), the frontmatter, then each file's path.
 * @throws SkillInvalid naming the first problem found.
 */
export function parseSkill(input: SkillInput): SkillBundle {
  const name = checkName(input.name);
  if (typeof input.skillMd !== "string") throw invalid("skill_md_content", "must be a string");
  const groups = GROUPS.map((g) => ({ field: g.field, files: checkShapes(g.field, input[g.key]) }));
  checkCount(groups);
  checkSize(input.skillMd, groups);

  const skillMd = withoutBom(input.skillMd);
  const front = readSkillMd(skillMd, name);
  for (const g of groups) checkPaths(g.field, g.files);

  const [scripts, references, assets] = groups.map((g) => g.files) as [SkillFile[], SkillFile[], SkillFile[]];
  return { name, ...front, skillMd, scripts, references, assets };
}

function checkName(name: unknown): string {
  if (typeof name !== "string") throw invalid("name", "must be a string");
  if (name === "") throw invalid("name", "is required");
  if (name.length > SKILL_LIMITS.maxNameLength) throw invalid("name", `must be at most ${SKILL_LIMITS.maxNameLength} characters`);
  if (!NAME.test(name)) {
    throw invalid(
      "name",
      "must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen (e.g. pdf-tools)",
    );
  }
  return name;
}

/** The group as plain `{name, content}` pairs (extra properties dropped), or the first malformed item. */
function checkShapes(field: string, files: unknown): SkillFile[] {
  if (!Array.isArray(files)) throw invalid(field, "must be an array of {name, content} objects");
  return files.map((file: unknown, i) => {
    if (typeof file !== "object" || file === null) throw invalid(`${field}[${i}]`, "must be an object {name, content}");
    const { name, content } = file as Record<string, unknown>;
    if (typeof name !== "string") throw invalid(`${field}[${i}].name`, "must be a string");
    if (typeof content !== "string") throw invalid(`${field}[${i}].content`, "must be a string");
    return { name, content };
  });
}

/** At most 100 files in all; the field named is the group where the count passes the limit. */
function checkCount(groups: { field: string; files: SkillFile[] }[]): void {
  const total = groups.reduce((n, g) => n + g.files.length, 0);
  if (total <= SKILL_LIMITS.maxFiles) return;
  let seen = 0;
  let over = "";
  for (const g of groups) {
    seen += g.files.length;
    if (seen > SKILL_LIMITS.maxFiles) {
      over = g.field;
      break;
    }
  }
  const counts = groups.map((g) => `${g.field} ${g.files.length}`).join(", ");
  throw invalid(over, `the bundle has ${total} files (${counts}); at most ${SKILL_LIMITS.maxFiles} in all`);
}

/** 1 MiB of UTF-8 in all; the field named is the one where the running total passes the limit. */
function checkSize(skillMd: string, groups: { field: string; files: SkillFile[] }[]): void {
  const parts: [string, string][] = [["skill_md_content", skillMd]];
  for (const g of groups) {
    g.files.forEach((f, i) => {
      parts.push([`${g.field}[${i}].name`, f.name], [`${g.field}[${i}].content`, f.content]);
    });
  }
  let total = 0;
  let over: string | null = null;
  for (const [field, text] of parts) {
    total += Buffer.byteLength(text, "utf8");
    if (over === null && total > SKILL_LIMITS.maxBytes) over = field;
  }
  if (over !== null) {
    throw new SkillInvalid(
      over,
      "skill_too_large",
      `${over}: the bundle is ${total} bytes; at most ${SKILL_LIMITS.maxBytes} bytes (1 MiB) in all, ` +
        "counting SKILL.md and every file's name and content as UTF-8",
      413,
    );
  }
}

type Front = Pick<SkillBundle, "description" | "license" | "compatibility" | "metadata">;

/** The frontmatter's fields; problems are named under `skill_md_content`. */
function readSkillMd(skillMd: string, name: string): Front {
  try {
    const { fields } = readFrontmatter(skillMd);
    const text = (key: string): string | null => {
      const value = fields.get(key);
      if (value === null || value === undefined) return null;
      if (typeof value !== "string")
        throw new FrontmatterInvalid(key, "must be text (put it in quotes if YAML reads it as something else)");
      return value.trim();
    };

    const description = text("description");
    if (description === null || description === "")
      throw new FrontmatterInvalid("description", "is required: say what the skill does and when to use it");
    if ([...description].length > MAX_DESCRIPTION)
      throw new FrontmatterInvalid("description", `must be at most ${MAX_DESCRIPTION} characters`);

    const ownName = text("name");
    if (ownName !== null && ownName !== name) {
      throw new FrontmatterInvalid(
        "name",
        `is "${ownName}" but the skill's name (field name) is "${name}"; they must be the same`,
      );
    }

    const compatibility = text("compatibility") || null;
    if (compatibility !== null && [...compatibility].length > MAX_COMPATIBILITY) {
      throw new FrontmatterInvalid("compatibility", `must be at most ${MAX_COMPATIBILITY} characters`);
    }

    const tools = fields.get("allowed-tools");
    if (tools != null && typeof tools !== "string" && !(Array.isArray(tools) && tools.every((t) => typeof t === "string"))) {
      throw new FrontmatterInvalid("allowed-tools", "must be a space-separated string or a list of strings");
    }

    const rawMetadata = fields.get("metadata");
    if (rawMetadata != null && !(rawMetadata instanceof Map))
      throw new FrontmatterInvalid("metadata", "must be a mapping of `key: value` lines");
    const metadata = rawMetadata == null ? null : (toJson(rawMetadata, "metadata") as { [key: string]: JsonValue });

    return { description, license: text("license") || null, compatibility, metadata };
  } catch (err) {
    if (!(err instanceof FrontmatterInvalid)) throw err;
    const field = err.path === "" ? "skill_md_content" : `skill_md_content.${err.path}`;
    throw invalid(field, err.message);
  }
}

/** Each path well formed and unique within its group (also when letter case is ignored, or as a folder). */
function checkPaths(field: string, files: SkillFile[]): void {
  const seen = new Map<string, number>();
  const folders = new Map<string, number>();
  files.forEach((file, i) => {
    const at = `${field}[${i}].name`;
    const problem = pathProblem(file.name);
    if (problem !== null) throw invalid(at, problem);
    // Case-insensitive filesystems (macOS, Windows) would merge names that differ only in case.
    const key = file.name.toLowerCase();
    const twin = seen.get(key);
    if (twin !== undefined) throw invalid(at, `"${file.name}" is already the name of ${field}[${twin}]`);
    const folderOf = folders.get(key);
    if (folderOf !== undefined) throw invalid(at, `"${file.name}" is already a folder, holding ${field}[${folderOf}]`);
    const segments = key.split("/");
    for (let n = 1; n < segments.length; n++) {
      const folder = segments.slice(0, n).join("/");
      const fileAt = seen.get(folder);
      if (fileAt !== undefined) throw invalid(at, `puts a file inside "${folder}", which is the file ${field}[${fileAt}]`);
      if (!folders.has(folder)) folders.set(folder, i);
    }
    seen.set(key, i);
  });
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why a file name is unsafe or unusable as a relative path inside its folder, or null. A `SKILL.md` is
 * allowed: it lands in `scripts/` etc., never beside the skill's own SKILL.md.
 */
export function pathProblem(name: string): string | null {
  if (name === "") return "is required";
  if ([...name].length > MAX_FILE_NAME) return `must be at most ${MAX_FILE_NAME} characters`;
  if (CONTROL.test(name)) return "must not contain control characters (NUL, newline, tab, ...)";
  if (name.includes("\\")) return "must use / between folders, not \\";
  if (name.startsWith("/")) return "must be a relative path such as lib/helpers.py, not start with /";
  if (name.endsWith("/")) return "must name a file, not end with /";
  for (const segment of name.split("/")) {
    if (segment === "") return "must not contain an empty folder name (//)";
    if (segment === "..") return "must not contain a .. segment";
    if (segment === ".") return "must not contain a . segment";
  }
  return null;
}

// Unix permissions (host system 3): scripts executable once unzipped, other files read-write for the owner.
const UNIX = 3;
const EXECUTABLE = 0o100755 << 16;
const REGULAR = 0o100644 << 16;

/**
 * The installable zip of a bundle: `<name>/SKILL.md`, `<name>/scripts/<file>`, `<name>/references/<file>`,
 * `<name>/assets/<file>` (nested names keep their sub-paths; folders appear only through their files),
 * sorted by path, UTF-8, fixed timestamps: the same bundle always gives byte-identical zips.
 * @throws Error for a name parseSkill would have refused (stored data is never trusted to build paths).
 */
export function skillArchive(bundle: Pick<SkillBundle, "name" | "skillMd" | "scripts" | "references" | "assets">): Uint8Array {
  if (!NAME.test(bundle.name) || bundle.name.length > SKILL_LIMITS.maxNameLength) {
    throw new Error(`refusing to archive skill name ${JSON.stringify(bundle.name)}`);
  }
  const entries: [string, string, number][] = [[`${bundle.name}/SKILL.md`, bundle.skillMd, REGULAR]];
  for (const g of GROUPS) {
    for (const file of bundle[g.key]) {
      const problem = pathProblem(file.name);
      if (problem !== null) throw new Error(`refusing to archive ${g.field} file ${JSON.stringify(file.name)}: it ${problem}`);
      entries.push([`${bundle.name}/${g.folder}/${file.name}`, file.content, g.key === "scripts" ? EXECUTABLE : REGULAR]);
    }
  }
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

  // Every entry carries one fixed time, so the same bundle always gives the same bytes. DOS time is local
  // time from 1980 on and fflate reads the local fields, so the date is built here, in the current zone.
  const mtime = new Date(1980, 0, 1, 0, 0, 0);
  // Flat keys with `/` inside: fflate writes them as given, without separate folder entries.
  const zippable: Zippable = {};
  for (const [path, content, attrs] of entries) {
    zippable[path] = [strToU8(content), { mtime, os: UNIX, attrs }];
  }
  return zipSync(zippable, { level: 6 });
}
