/** billing service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { billingService } from "./service.js";

runMain("billing", () => runService(billingService));
