/** Every role a Toolport process can host, by name, in start order (services, then the edge). */
import { billingRole } from "@toolport/billing/role";
import { catalogRole } from "@toolport/catalog/role";
import { contentRole } from "@toolport/content/role";
import { executionRole } from "@toolport/execution/role";
import { gatewayRole } from "@toolport/gateway/role";
import { identityRole } from "@toolport/identity/role";
import { type Role, rolePort } from "@toolport/kit/roles";
import { mcpServerRole } from "@toolport/mcp-server/role";
import { webhooksRole } from "@toolport/webhooks/role";

export const ROLES: readonly Role[] = [
  catalogRole,
  executionRole,
  billingRole,
  identityRole,
  contentRole,
  webhooksRole,
  gatewayRole,
  mcpServerRole,
];

export const ROLE_NAMES = ROLES.map((r) => r.name);

export class UsageError extends Error {
  override name = "ConfigError";
}

/**
 * The roles a `--roles` value names: `all`, or a comma-separated list (`gateway,execution,identity`).
 * Unknown or repeated names are refused with the list of valid ones.
 */
export function parseRoles(value: string | undefined): Role[] {
  if (value === undefined || value.trim() === "") {
    throw new UsageError(`no roles given: use --roles=all or --roles=<role>[,<role>...] (roles: ${ROLE_NAMES.join(", ")})`);
  }
  if (value.trim() === "all") return [...ROLES];
  const names = value.split(",").map((n) => n.trim());
  const seen = new Set<string>();
  for (const name of names) {
    if (!ROLE_NAMES.includes(name)) {
      throw new UsageError(`unknown role "${name}" in --roles (roles: all, ${ROLE_NAMES.join(", ")})`);
    }
    if (seen.has(name)) throw new UsageError(`role "${name}" is named twice in --roles`);
    seen.add(name);
  }
  return ROLES.filter((r) => seen.has(r.name));
}

/**
 * The environment of a process hosting `roles`: where a co-hosted role's address is not given, the
 * others find it at the port it will take here (the MCP server's gateway; a service's URL, used when a
 * call cannot stay in process).
 */
export function hostEnv(roles: Role[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  if (roles.length < 2) return out;
  for (const role of roles) {
    const port = rolePort(role, env);
    const urlVariable = role.name === "mcp-server" ? undefined : `${role.name.toUpperCase()}_URL`;
    if (urlVariable && !out[urlVariable]) out[urlVariable] = `http://127.0.0.1:${port}`;
  }
  return out;
}
