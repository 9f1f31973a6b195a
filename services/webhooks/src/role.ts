/** the webhooks role (a process of its own, or one of several in one process): see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { serviceRole } from "@toolport/kit/service";
import { WebhooksService } from "@toolport/proto/toolport/webhooks/v1/webhooks_service_pb";
import { routes } from "./routes.js";

export const webhooksRole = serviceRole(() => ({
  name: "webhooks",
  defaultPort: 50056,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  services: [WebhooksService],
  routes,
}));
