/** the billing role (a process of its own, or one of several in one process): see @toolport/kit/service. */
import { serviceRole } from "@toolport/kit/service";
import { billingService } from "./service.js";

export const billingRole = serviceRole(() => billingService);
