/** content service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { routes } from "./routes.js";

runMain("content", () =>
  runService({
    name: "content",
    defaultPort: 50055,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [ContentService],
    routes,
  }),
);
