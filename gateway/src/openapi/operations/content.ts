/** The content routes' operations (gateway/src/routes/content.ts) and the schemas only they use. */
import type { OperationDoc, ResponseDoc } from "../describe.js";
import {
  arrayOf,
  closed,
  oneOf,
  ref,
  type Schema,
  string,
  stringArray,
  stringOrNull,
  timestamp,
  timestampOrNull,
} from "../schemas.js";

const skillName = {
  type: "string",
  minLength: 1,
  maxLength: 64,
  pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$",
  description: "Lowercase letters, digits and single hyphens (e.g. `pdf-tools`).",
};
const skillVisibility = oneOf("private", "public");
const files = arrayOf(ref("SkillFile"));
const metadata = { type: ["object", "null"], description: "The frontmatter's `metadata` map; null when absent." };

/** The fields every site record carries (spec "Site record"). */
const siteFields = {
  id: string,
  domain: { ...string, description: "The registrable domain (example.com for www.example.com)." },
  url: { ...string, description: "The URL crawled (after redirects once crawled)." },
  status: {
    ...oneOf("pending", "crawling", "live", "failed"),
    description: "Only `live` records are public; a failed recrawl of a live record keeps it live.",
  },
  visibility: oneOf("public", "private"),
  page_title: { ...string, description: "Empty until crawled." },
  page_description: { ...string, description: "Empty until crawled." },
  components: ref("SiteComponents"),
  discovered_tools: arrayOf(ref("DiscoveredTool")),
  category: {
    ...string,
    description:
      "Empty until crawled, then one of developer-tools, ecommerce, finance, travel, health, education, media, food, " +
      "real-estate, government, nonprofit, other.",
  },
  tags: { ...stringArray, maxItems: 10 },
  created_at: timestamp,
};
const page = { ...stringOrNull, description: "The page's URL; null when the crawl found none." };

export const contentSchemas: Record<string, Schema> = {
  SkillFile: {
    description: "One file of a skill: `name` is a path relative to its folder (`lib/helpers.py`).",
    ...closed({ name: string, content: string }),
  },
  Skill: {
    description:
      "A skill: the spec's create response (name, description from the SKILL.md frontmatter, skill_md, files, " +
      "visibility, created_at) with the frontmatter's license, compatibility and metadata, the linked catalog " +
      "service and updated_at.",
    ...closed({
      id: string,
      name: skillName,
      description: string,
      license: stringOrNull,
      compatibility: stringOrNull,
      metadata,
      skill_md: string,
      scripts: files,
      references: files,
      assets: files,
      service_id: stringOrNull,
      visibility: skillVisibility,
      created_at: timestamp,
      updated_at: timestamp,
    }),
  },
  SkillSummary: {
    description: "A skill in a list: no files, and `compatibility` always null (a single get returns it).",
    ...closed({
      id: string,
      name: skillName,
      description: string,
      license: stringOrNull,
      compatibility: { type: "null" },
      metadata,
      service_id: stringOrNull,
      visibility: skillVisibility,
      created_at: timestamp,
    }),
  },
  SkillSubmission: {
    description: "A request to publish a skill publicly; `skill_id` is the public skill once approved.",
    ...closed({
      id: string,
      skill_name: skillName,
      skill_description: string,
      skill_md_content: string,
      scripts: files,
      reference_files: files,
      assets: files,
      status: oneOf("pending", "approved", "rejected"),
      submitted_at: timestamp,
      reviewed_at: { ...timestampOrNull, description: "Null until reviewed." },
      reviewer_notes: stringOrNull,
      skill_id: { ...stringOrNull, description: "The public skill, set when approved." },
    }),
  },
  SiteComponents: {
    description: "What the crawl found, by kind of page: empty (`{}`) until the first crawl succeeds.",
    ...closed(
      {},
      {
        contact: closed({ emails: stringArray, phones: stringArray, address: stringOrNull, page }),
        about: closed({ page, summary: stringOrNull }),
        services: closed({ page, items: stringArray }),
        docs: closed({ page }),
        pricing: closed({ page, plans: stringArray }),
        faq: closed({ page, questions: stringArray }),
        legal: closed({ terms: page, privacy: page }),
        navigation: arrayOf(closed({ label: string, url: string })),
      },
    ),
  },
  DiscoveredTool: {
    description:
      "A tool surface the crawl found: an OpenAPI document, an llms.txt, an MCP server, or a catalog service of the domain.",
    oneOf: [
      closed({ type: { const: "openapi" }, url: string, title: stringOrNull }),
      closed({ type: { const: "llms_txt" }, url: string }),
      closed({ type: { const: "mcp" }, url: string, name: stringOrNull }),
      closed({ type: { const: "catalog_service" }, service_id: string, name: string }),
    ],
  },
  Site: {
    description: "The spec's site record, as anyone sees a live public one.",
    ...closed(siteFields),
  },
  OwnedSite: {
    description: "A site record as its owner sees it, in any status: also the last crawl's error and time.",
    ...closed({
      ...siteFields,
      error: {
        ...stringOrNull,
        description: "The last crawl's error (a failed record's reason, or a live record's failed recrawl).",
      },
      crawled_at: { ...timestampOrNull, description: "When the last crawl finished; null before." },
      updated_at: timestamp,
    }),
  },
};

const skillId = { skill_id: { description: "The skill's id.", schema: { type: "string", format: "uuid" } } };
const submissionId = {
  submission_id: { description: "The submission's id.", schema: { type: "string", format: "uuid" } },
};
const siteId = { site_id: { description: "The site record's id.", schema: { type: "string", format: "uuid" } } };

const fileList = { ...files, description: "Files of `{name, content}` (default none)." };
const bundleProperties = {
  name: skillName,
  skill_md_content: {
    ...string,
    description:
      "SKILL.md: markdown with YAML frontmatter carrying `description` (and optionally license, compatibility, metadata).",
  },
  scripts: fileList,
  reference_files: fileList,
  assets: fileList,
};
const skillMd = "---\ndescription: Draw charts from CSV files.\n---\n# CSV charts\n";

// ---- examples ----
const plotScript = { name: "plot.py", content: "print('plot')\n" };
const skillExample = {
  id: "3f6c2a9e-1b7d-4c8e-9a2f-5d1e7b3c9a41",
  name: "csv-charts",
  description: "Draw charts from CSV files.",
  license: null,
  compatibility: null,
  metadata: null,
  skill_md: skillMd,
  scripts: [plotScript],
  references: [],
  assets: [],
  service_id: null,
  visibility: "private",
  created_at: "2026-03-01T12:00:00.000Z",
  updated_at: "2026-03-01T12:00:00.000Z",
};
const skillSummaryExample = {
  id: skillExample.id,
  name: skillExample.name,
  description: skillExample.description,
  license: null,
  compatibility: null,
  metadata: null,
  service_id: null,
  visibility: "private",
  created_at: skillExample.created_at,
};
const publicSkillSummaryExample = {
  ...skillSummaryExample,
  id: "8d2e4b61-7c3a-4f9e-b1d5-0a6c8e2f4b73",
  license: "MIT",
  visibility: "public",
  created_at: "2026-03-02T09:30:00.000Z",
};
const submissionExample = {
  id: "c4a7e2d9-5f1b-4e3c-8d6a-2b9f0e7c1a58",
  skill_name: skillExample.name,
  skill_description: skillExample.description,
  skill_md_content: skillMd,
  scripts: [plotScript],
  reference_files: [],
  assets: [],
  status: "pending",
  submitted_at: "2026-03-01T12:05:00.000Z",
  reviewed_at: null,
  reviewer_notes: null,
  skill_id: null,
};
const approvedSubmissionExample = {
  ...submissionExample,
  status: "approved",
  reviewed_at: "2026-03-02T09:30:00.000Z",
  reviewer_notes: "Looks good.",
  skill_id: publicSkillSummaryExample.id,
};
const siteExample = {
  id: "e1b9c3f7-2a4d-4c6e-9f8a-7d5b3c1e0a26",
  domain: "example.com",
  url: "https://example.com/",
  status: "live",
  visibility: "public",
  page_title: "Example Co",
  page_description: "Invoicing for small businesses.",
  components: {
    contact: { emails: ["hello@example.com"], phones: [], address: null, page: "https://example.com/contact" },
    docs: { page: "https://example.com/docs" },
    pricing: { page: "https://example.com/pricing", plans: ["Free", "Pro"] },
  },
  discovered_tools: [{ type: "openapi", url: "https://example.com/openapi.json", title: "Example Co API" }],
  category: "finance",
  tags: ["invoicing"],
  created_at: "2026-03-01T12:00:00.000Z",
};
const ownedSiteExample = {
  ...siteExample,
  error: null,
  crawled_at: "2026-03-01T12:01:30.000Z",
  updated_at: "2026-03-01T12:01:30.000Z",
};
const pendingSiteExample = {
  ...ownedSiteExample,
  status: "pending",
  page_title: "",
  page_description: "",
  components: {},
  discovered_tools: [],
  category: "",
  tags: [],
  crawled_at: null,
  updated_at: ownedSiteExample.created_at,
};
const deletedExample = { deleted: true };

const skillTooLarge: ResponseDoc = {
  description:
    "The body is over the request limit (`payload_too_large`), or the bundle over 1 MiB in all (`skill_too_large`: " +
    "SKILL.md and every file's name and content, UTF-8).",
  schema: ref("Error"),
};
const deleted = closed({ deleted: { const: true } });

export const contentOps = {
  // ---- skills ----
  createSkill: {
    operationId: "createSkill",
    summary: "Create a skill",
    description:
      "A private skill, created at once; public skills go through a submission and its review (`visibility` public is " +
      "400 `visibility_not_allowed`). The bundle is checked: the name, the SKILL.md frontmatter, at most 100 files in " +
      "all (400 `invalid_skill`), at most 1 MiB in all (413 `skill_too_large`). `service_id` must name a catalog " +
      "service the caller can see (400 `invalid_service_id`). A second skill of the same name is 409 `skill_name_taken`.",
    tags: ["Skills"],
    body: {
      schema: {
        type: "object",
        required: ["name", "skill_md_content"],
        properties: {
          ...bundleProperties,
          visibility: { ...oneOf("private"), description: "Default private, the only value accepted here." },
          service_id: { ...string, description: "A catalog service the skill goes with." },
        },
      },
      example: { name: skillExample.name, skill_md_content: skillMd, scripts: [plotScript] },
    },
    responses: {
      200: { description: "The skill.", schema: ref("Skill"), example: skillExample },
      409: { description: "The caller already has a skill of that name (`skill_name_taken`).", schema: ref("Error") },
      413: skillTooLarge,
    },
  },
  listMySkills: {
    operationId: "listMySkills",
    summary: "The caller's skills",
    description: "Newest first, both visibilities unless `visibility` says one. JWT only; an API key is refused.",
    tags: ["Skills"],
    query: {
      visibility: { description: "Only these; any other value is a 400.", schema: skillVisibility },
    },
    responses: {
      200: { description: "Summaries, newest first.", schema: arrayOf(ref("SkillSummary")), example: [skillSummaryExample] },
    },
  },
  listPublicSkills: {
    operationId: "listPublicSkills",
    summary: "Public skills",
    tags: ["Skills"],
    query: {
      search: { description: "Words in the name or description (the first 200 characters are used).", schema: string },
      limit: { description: "At most this many (1-100, default 20).", schema: { type: "integer", minimum: 1, maximum: 100 } },
      offset: { description: "Skip this many (0-100000, default 0).", schema: { type: "integer", minimum: 0, maximum: 100000 } },
    },
    responses: {
      200: { description: "Summaries.", schema: arrayOf(ref("SkillSummary")), example: [publicSkillSummaryExample] },
    },
  },
  getSkill: {
    operationId: "getSkill",
    summary: "A skill",
    description: "Public skills to anyone; a private one to its owner (anyone else gets 404).",
    tags: ["Skills"],
    path: skillId,
    responses: { 200: { description: "The skill, with its files.", schema: ref("Skill"), example: skillExample } },
  },
  getSkillArchive: {
    operationId: "getSkillArchive",
    summary: "A skill as a zip",
    description:
      "The installable folder `<name>/`: SKILL.md and the `scripts/`, `references/` and `assets/` folders. Same " +
      "visibility as the skill.",
    tags: ["Skills"],
    path: skillId,
    responses: {
      200: {
        description: "The zip archive.",
        contentType: "application/zip",
        schema: { type: "string", contentMediaType: "application/zip" },
        headers: {
          "Content-Disposition": { description: 'attachment; filename="<name>.zip"', schema: string },
        },
      },
    },
  },
  deleteSkill: {
    operationId: "deleteSkill",
    summary: "Delete a skill (owner)",
    description: "Anyone else's skill, or an unknown one, is 404.",
    tags: ["Skills"],
    path: skillId,
    responses: { 200: { description: "Deleted, for good.", schema: deleted, example: deletedExample } },
  },

  // ---- submissions ----
  createSkillSubmission: {
    operationId: "createSkillSubmission",
    summary: "Submit a skill for public release",
    description:
      "Either `skill_id`, a skill of the caller's (404 `skill_not_found` otherwise), or the bundle inline (checked as " +
      "in `POST /skills`). A bundle that looks like it holds a credential is 400 `submission_contains_secret`, naming " +
      "the file and line. A platform administrator reviews it. JWT only.",
    tags: ["Skills"],
    body: {
      schema: {
        type: "object",
        properties: { skill_id: { ...string, description: "A skill of the caller's to submit." }, ...bundleProperties },
      },
      example: { skill_id: skillExample.id },
    },
    responses: {
      200: { description: "The submission, pending.", schema: ref("SkillSubmission"), example: submissionExample },
      404: { description: "`skill_id` names no skill of the caller's (`skill_not_found`).", schema: ref("Error") },
      413: skillTooLarge,
    },
  },
  submitSkill: {
    operationId: "submitSkill",
    summary: "Submit one of the caller's skills for public release",
    description:
      "Same as `POST /skill-submissions` with `skill_id`. Someone else's skill is 404; a credential in the bundle is " +
      "400 `submission_contains_secret`. JWT only.",
    tags: ["Skills"],
    path: skillId,
    responses: {
      200: { description: "The submission, pending.", schema: ref("SkillSubmission"), example: submissionExample },
    },
  },
  listMySkillSubmissions: {
    operationId: "listMySkillSubmissions",
    summary: "The caller's submissions",
    description: "JWT only.",
    tags: ["Skills"],
    responses: {
      200: { description: "Submissions.", schema: arrayOf(ref("SkillSubmission")), example: [submissionExample] },
    },
  },
  listSkillSubmissions: {
    operationId: "listSkillSubmissions",
    summary: "The review queue (platform administrators)",
    description: "Anyone else gets 403 `platform_admin_only`. JWT only.",
    tags: ["Skills"],
    query: { status: { description: "Default pending.", schema: oneOf("pending", "approved", "rejected") } },
    responses: {
      200: {
        description: "Submissions of that status.",
        schema: arrayOf(ref("SkillSubmission")),
        example: [submissionExample],
      },
    },
  },
  getSkillSubmission: {
    operationId: "getSkillSubmission",
    summary: "A submission",
    description: "The submitter's own (platform administrators see all); anyone else gets 404. JWT only.",
    tags: ["Skills"],
    path: submissionId,
    responses: { 200: { description: "The submission.", schema: ref("SkillSubmission"), example: submissionExample } },
  },
  reviewSkillSubmission: {
    operationId: "reviewSkillSubmission",
    summary: "Approve or reject a submission (platform administrators)",
    description:
      "Approving publishes the skill publicly (the submission's `skill_id`). A decision is final: a second review is " +
      "409 `submission_already_reviewed`. Anyone but a platform administrator gets 403 `platform_admin_only`.",
    tags: ["Skills"],
    path: submissionId,
    body: {
      schema: {
        type: "object",
        required: ["decision"],
        properties: {
          decision: oneOf("approve", "reject"),
          notes: { type: "string", maxLength: 5000, description: "The reviewer's notes (`reviewer_notes` also accepted)." },
          reviewer_notes: { type: "string", maxLength: 5000, description: "Same as `notes`, which wins when both are given." },
        },
      },
      example: { decision: "approve", notes: "Looks good." },
    },
    responses: {
      200: { description: "The submission as decided.", schema: ref("SkillSubmission"), example: approvedSubmissionExample },
      409: { description: "The submission was already reviewed (`submission_already_reviewed`).", schema: ref("Error") },
    },
  },

  // ---- site records ----
  getSiteByDomain: {
    operationId: "getSiteByDomain",
    summary: "The site record of a domain",
    description:
      "The most recently crawled live public record of the domain (its registrable domain: www.example.com reads " +
      "example.com); none is 404 `site_not_found`.",
    tags: ["Sites"],
    path: { domain: { description: "A domain or host name.", schema: string, example: "example.com" } },
    responses: { 200: { description: "The site record.", schema: ref("Site"), example: siteExample } },
  },
  createSite: {
    operationId: "createSite",
    summary: "Add a site to crawl",
    description:
      "The URL must be http or https and reach a public address (400 `invalid_url`, `url_not_allowed`, " +
      "`url_unresolvable`). The record starts `pending`; the crawl runs in the background (read the record to follow it).",
    tags: ["Sites"],
    body: {
      schema: {
        type: "object",
        required: ["url"],
        properties: {
          url: { type: "string", maxLength: 2048, description: "The page to start from." },
          visibility: { ...oneOf("public", "private"), description: "Default public." },
        },
      },
      example: { url: "https://example.com/" },
    },
    responses: {
      200: { description: "The record, pending its crawl.", schema: ref("OwnedSite"), example: pendingSiteExample },
    },
  },
  listMySites: {
    operationId: "listMySites",
    summary: "The caller's site records",
    tags: ["Sites"],
    responses: {
      200: {
        description: "Records in any status, newest first.",
        schema: arrayOf(ref("OwnedSite")),
        example: [ownedSiteExample],
      },
    },
  },
  getSite: {
    operationId: "getSite",
    summary: "A site record of the caller's",
    description: "In any status; anyone else's is 404.",
    tags: ["Sites"],
    path: siteId,
    responses: { 200: { description: "The record.", schema: ref("OwnedSite"), example: ownedSiteExample } },
  },
  recrawlSite: {
    operationId: "recrawlSite",
    summary: "Crawl a site record again (owner)",
    description: "Queues a crawl (at most one waits at a time); a failed record goes back to `pending`, a live one stays live.",
    tags: ["Sites"],
    path: siteId,
    responses: { 200: { description: "The record.", schema: ref("OwnedSite"), example: ownedSiteExample } },
  },
  deleteSite: {
    operationId: "deleteSite",
    summary: "Delete a site record (owner)",
    tags: ["Sites"],
    path: siteId,
    responses: { 200: { description: "Deleted, for good.", schema: deleted, example: deletedExample } },
  },
} satisfies Record<string, OperationDoc>;
