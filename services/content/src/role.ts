/** the content role (a process of its own, or one of several in one process): see @toolport/kit/service. Its parts are built in deps.ts. */
import { fileURLToPath } from "node:url";
import { type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { contentEnv } from "./config.js";
import { type ContentDeps, createDeps } from "./deps.js";
import { routes } from "./routes.js";

const content: ServiceDefinition<typeof contentEnv, ContentDeps> = {
  name: "content",
  defaultPort: 50055,
  env: contentEnv,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  services: [ContentService],
  deps: createDeps,
  routes,
  async background(deps) {
    await deps.crawls.start();
    await deps.runner.start();
    deps.pruner.start();
    return [
      {
        async stop() {
          await deps.pruner.stop();
          await deps.runner.stop();
          await deps.crawls.stop();
        },
      },
    ];
  },
};

export const contentRole = serviceRole(content);
