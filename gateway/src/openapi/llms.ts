/**
 * Texts for agents, written from the description (document.ts), so they list exactly the routes that
 * exist and say of each what the description says:
 * - `GET /llms.txt` (llmstxt.org): what Toolport is, then every operation by section, each linked to its
 *   entry in the reference page (`/docs#/<tag>/<operationId>`);
 * - the API section of the agent skill file (`GET /v1/agents/skill.md`, routes/identity.ts), which the
 *   registration answer's `read_next` points to.
 */
import { API_VERSION, type OpenApiDocument, TAGS } from "./document.js";

interface Listed {
  method: string;
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: string;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

function security(op: Record<string, unknown>): string {
  const requirements = (op.security as Array<Record<string, unknown>> | undefined) ?? [];
  if (requirements.length === 0) return "public";
  const names = requirements.map((r) => Object.keys(r)[0] ?? "none");
  if (names.includes("none")) return "public; more with credentials";
  if (names.includes("ApiKey") && names.includes("BearerJwt")) return "API key or JWT";
  return names.includes("ApiKey") ? "API key" : "JWT";
}

/** Every operation of the document, by section in the reference's order, then path order. */
export function listOperations(doc: OpenApiDocument): Map<string, Listed[]> {
  const bySection = new Map<string, Listed[]>(TAGS.map((t) => [t.name, []]));
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = (op.tags as string[] | undefined)?.[0] ?? "System";
      if (!bySection.has(tag)) bySection.set(tag, []);
      bySection.get(tag)!.push({
        method: method.toUpperCase(),
        path,
        operationId: String(op.operationId),
        summary: String(op.summary ?? ""),
        tag,
        auth: security(op),
      });
    }
  }
  for (const [tag, ops] of bySection) if (ops.length === 0) bySection.delete(tag);
  return bySection;
}

/** The API section of the skill file: each route with its summary and who may call it. */
export function apiMarkdown(doc: OpenApiDocument, baseUrl: string): string[] {
  const lines = [
    "## API",
    "",
    `Every route of version ${API_VERSION}, from the machine-readable description (${baseUrl}/v1/openapi.json; ` +
      `reference: ${baseUrl}/docs). Send the API key as the \`svc-api-key\` header.`,
  ];
  for (const [tag, ops] of listOperations(doc)) {
    lines.push("", `### ${tag}`, "");
    for (const op of ops) lines.push(`- \`${op.method} ${op.path}\`: ${op.summary} (${op.auth})`);
  }
  return lines;
}

/** GET /llms.txt. */
export function llmsTxt(doc: OpenApiDocument, baseUrl: string): string {
  const info = doc.info as { title: string; summary?: string; description?: string };
  const lines = [
    `# ${info.title}`,
    "",
    `> ${info.summary ?? ""}`,
    "",
    info.description ?? "",
    "",
    `- Machine-readable description (OpenAPI 3.1, version ${API_VERSION}): ${baseUrl}/v1/openapi.json`,
    `- Agent skill file: ${baseUrl}/v1/agents/skill.md`,
    `- Quickstart: ${baseUrl}/v1/agents/quickstart.md`,
  ];
  const descriptions = new Map(TAGS.map((t) => [t.name, t.description]));
  for (const [tag, ops] of listOperations(doc)) {
    lines.push("", `## ${tag}`, "");
    if (descriptions.has(tag)) lines.push(descriptions.get(tag)!, "");
    for (const op of ops) {
      const link = `${baseUrl}/docs#/${encodeURIComponent(tag)}/${encodeURIComponent(op.operationId)}`;
      lines.push(`- [${op.method} ${op.path}](${link}): ${op.summary} (${op.auth})`);
    }
  }
  lines.push("", "## Optional", "", `- [API reference](${baseUrl}/docs): the description rendered for people`);
  return `${lines.join("\n")}\n`;
}
