/**
 * The client helper (spec item 35): a project-scope `.mcp.json` for a coding-assistant client. The
 * names `danube` and `${DANUBE_API_KEY}` are the spec's, kept so existing clients keep working.
 */
import { Code } from "@toolport/kit/errors";
import { organizationNotFound } from "./authenticate.js";
import type { Caller, OrganizationMembership } from "./model.js";
import type { OrganizationStore } from "./ports.js";
import { isUuid } from "./validation.js";

// The literal the spec names: a placeholder the client expands from its environment, not a template here.
// biome-ignore lint/suspicious/noTemplateCurlyInString: the text ${DANUBE_API_KEY} is the point
export const KEY_PLACEHOLDER = "${DANUBE_API_KEY}";

export interface McpJson {
  file: ".mcp.json";
  scope: "project";
  mcpJson: { mcpServers: { danube: { type: "http"; url: string; headers: Record<string, string> } } };
  org: OrganizationMembership | null;
  instructions: string;
}

/**
 * Resolution order: explicit selector (query org_id, else header svc-org-id), then the organization
 * the credential runs in (the key's bound organization, else the personal one). An unknown or
 * foreign selected organization is 404; any other failure leaves the template without an organization.
 */
export async function resolveMcpOrganization(
  orgs: OrganizationStore,
  caller: Caller,
  selector: { query: string | undefined; header: string | undefined },
  onFailure: (err: unknown) => void,
): Promise<OrganizationMembership | null> {
  const explicit = selector.query?.trim() || selector.header?.trim() || undefined;
  const candidates = explicit ? [explicit] : [caller.organizationId, caller.personalOrganizationId];
  try {
    for (const id of candidates) {
      const membership = isUuid(id) ? await orgs.membership(id, caller.accountId) : null;
      if (membership) return membership;
      if (explicit) throw organizationNotFound(id);
    }
    return null;
  } catch (err) {
    if ((err as { code?: Code }).code === Code.NotFound) throw err;
    onFailure(err);
    return null;
  }
}

export function buildMcpJson(mcpUrl: string, org: OrganizationMembership | null): McpJson {
  const headers: Record<string, string> = { "svc-api-key": KEY_PLACEHOLDER };
  if (org) headers["svc-org-id"] = org.id;
  // Single quotes: in double quotes the shell would expand ${DANUBE_API_KEY} and write the key itself
  // (or nothing) into the project's file; the header values hold no single quote (a placeholder, a UUID).
  const headerFlags = Object.entries(headers)
    .map(([name, value]) => `--header '${name}: ${value}'`)
    .join(" ");
  const instructions = [
    "Save this as .mcp.json at the root of your project and commit it: it holds no secret, only the",
    `${KEY_PLACEHOLDER} placeholder, which each developer sets in their own environment`,
    "(export DANUBE_API_KEY=<your API key>).",
    org ? `Calls run in the organization "${org.name}" (${org.slug}).` : "Calls run in the organization your key belongs to.",
    "Equivalent add-server command:",
    `claude mcp add --transport http --scope project danube ${mcpUrl} ${headerFlags}`,
  ].join("\n");
  return {
    file: ".mcp.json",
    scope: "project",
    mcpJson: { mcpServers: { danube: { type: "http", url: mcpUrl, headers } } },
    org,
    instructions,
  };
}
