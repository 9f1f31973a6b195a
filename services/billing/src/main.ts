/** billing service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { routes } from "./routes.js";

runMain("billing", () =>
  runService({
    name: "billing",
    defaultPort: 50053,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [BillingService],
    routes,
  }),
);
