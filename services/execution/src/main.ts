/** The execution role alone in a process (one Deployment per role in Kubernetes); services/host runs several. */
import { runMain } from "@toolport/kit/lifecycle";
import { runRoles } from "@toolport/kit/roles";
import { executionRole } from "./role.js";

runMain("execution", () => runRoles([executionRole]).then(() => {}));
