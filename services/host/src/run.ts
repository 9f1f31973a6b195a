/**
 * What `toolport` runs once its heap is sized (main.ts). `toolport --roles=all` (or `--roles=gateway,execution,identity`, ...; or TOOLPORT_ROLES): one process
 * hosting the named roles. With `--migrate` it only creates and migrates the named roles' databases and
 * exits (a Kubernetes init container's job). Co-hosted roles call each other in process (@toolport/kit/local-rpc); every
 * role keeps its own port, database, config checks, health and logs, and SIGTERM stops them all, the
 * edge first.
 */
import { runMain } from "@toolport/kit/lifecycle";
import { migrateRoles, runRoles } from "@toolport/kit/roles";
import { hostEnv, parseRoles, ROLE_NAMES } from "./roles.js";

function parseArguments(argv: string[]): { roles: string | undefined; migrate: boolean } {
  let roles = process.env.TOOLPORT_ROLES;
  let migrate = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg.startsWith("--roles=")) roles = arg.slice("--roles=".length);
    else if (arg === "--roles") roles = argv[++i];
    else if (arg === "--migrate") migrate = true;
    else if (arg === "--help" || arg === "-h") {
      process.stdout.write(
        `usage: toolport --roles=all | --roles=<role>[,<role>...] [--migrate]\nroles: ${ROLE_NAMES.join(", ")}\n` +
          "--migrate: create and migrate the roles' databases, then exit\n",
      );
      process.exit(0);
    } else throw Object.assign(new Error(`unknown argument ${arg} (usage: toolport --roles=all)`), { name: "ConfigError" });
  }
  return { roles, migrate };
}

runMain("toolport", async () => {
  const args = parseArguments(process.argv.slice(2));
  const roles = parseRoles(args.roles);
  if (!args.migrate) {
    await runRoles(roles, hostEnv(roles, process.env));
    return;
  }
  await migrateRoles(roles, hostEnv(roles, process.env));
  process.exit(0);
});
