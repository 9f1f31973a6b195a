/** The gateway role alone in a process (one Deployment per role in Kubernetes); services/host runs several. */
import { runMain } from "@toolport/kit/lifecycle";
import { runRoles } from "@toolport/kit/roles";
import { gatewayRole } from "./role.js";

runMain("gateway", () => runRoles([gatewayRole]).then(() => {}));
