/** webhooks service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { routes } from "./routes.js";

runMain("webhooks", () =>
  runService({
    name: "webhooks",
    defaultPort: 50056,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [WebhooksService],
    routes,
  }),
);
