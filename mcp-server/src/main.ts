/** The MCP server role alone in a process; services/host runs it beside the others. */
import { runMain } from "@toolport/kit/lifecycle";
import { runRoles } from "@toolport/kit/roles";
import { mcpServerRole } from "./role.js";

runMain("mcp-server", () => runRoles([mcpServerRole]).then(() => {}));
