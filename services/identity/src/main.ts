/** identity service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { routes } from "./routes.js";

runMain("identity", () =>
  runService({
    name: "identity",
    defaultPort: 50054,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [IdentityService],
    routes,
  }),
);
