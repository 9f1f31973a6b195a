/** The webhooks role alone in a process (one Deployment per role in Kubernetes); services/host runs several. */
import { runMain } from "@toolport/kit/lifecycle";
import { runRoles } from "@toolport/kit/roles";
import { webhooksRole } from "./role.js";

runMain("webhooks", () => runRoles([webhooksRole]).then(() => {}));
