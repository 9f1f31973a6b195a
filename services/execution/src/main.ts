/** execution service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import { routes } from "./routes.js";

runMain("execution", () =>
  runService({
    name: "execution",
    defaultPort: 50052,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [ExecutionService],
    routes,
  }),
);
