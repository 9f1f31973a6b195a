/** The identity role alone in a process (one Deployment per role in Kubernetes); services/host runs several. */
import { runMain } from "@toolport/kit/lifecycle";
import { runRoles } from "@toolport/kit/roles";
import { identityRole } from "./role.js";

runMain("identity", () => runRoles([identityRole]).then(() => {}));
