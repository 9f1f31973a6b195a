/** the content role (a process of its own, or one of several in one process): see @toolport/kit/service. */
import { fileURLToPath } from "node:url";
import { type ServiceDefinition, serviceRole } from "@toolport/kit/service";
import { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import { contentEnv } from "./config.js";
import { type ContentDeps, createDeps, routes } from "./routes.js";

export const contentRole = serviceRole((): ServiceDefinition<typeof contentEnv> => {
  let deps: ContentDeps | undefined;
  return {
    name: "content",
    defaultPort: 50055,
    env: contentEnv,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [ContentService],
    routes(router, ctx) {
      deps = createDeps(ctx);
      routes(router, deps);
    },
    async background() {
      const d = deps!;
      await d.crawls.start();
      await d.runner.start();
      d.pruner.start();
      return [
        {
          async stop() {
            await d.pruner.stop();
            await d.runner.stop();
            await d.crawls.stop();
            await d.outbound.close();
          },
        },
      ];
    },
  };
});
