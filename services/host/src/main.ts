#!/usr/bin/env node
/**
 * `toolport --roles=all` (or `--roles=gateway,execution,identity`, ...; or TOOLPORT_ROLES): one process
 * hosting the named roles. Co-hosted roles call each other in process (@toolport/kit/local-rpc); every
 * role keeps its own port, database, config checks, health and logs, and SIGTERM stops them all, the
 * edge first.
 */
import { runMain } from "@toolport/kit/lifecycle";
import { runRoles } from "@toolport/kit/roles";
import { hostEnv, parseRoles, ROLE_NAMES } from "./roles.js";

function rolesArgument(argv: string[]): string | undefined {
  let value = process.env.TOOLPORT_ROLES;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg.startsWith("--roles=")) value = arg.slice("--roles=".length);
    else if (arg === "--roles") value = argv[++i];
    else if (arg === "--help" || arg === "-h") {
      process.stdout.write(`usage: toolport --roles=all | --roles=<role>[,<role>...]\nroles: ${ROLE_NAMES.join(", ")}\n`);
      process.exit(0);
    } else throw Object.assign(new Error(`unknown argument ${arg} (usage: toolport --roles=all)`), { name: "ConfigError" });
  }
  return value;
}

runMain("toolport", async () => {
  const roles = parseRoles(rolesArgument(process.argv.slice(2)));
  await runRoles(roles, hostEnv(roles, process.env));
});
