/** the content role (a process of its own, or one of several in one process): see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { serviceRole } from "@toolport/kit/service";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { routes } from "./routes.js";

export const contentRole = serviceRole(() => ({
  name: "content",
  defaultPort: 50055,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  services: [ContentService],
  routes,
}));
