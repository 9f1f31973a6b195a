/** catalog service process: see @toolport/kit/service for the start-up and shutdown sequence. */
import { fileURLToPath } from "node:url";
import { runMain } from "@toolport/kit/lifecycle";
import { runService } from "@toolport/kit/service";
import { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { routes } from "./routes.js";

runMain("catalog", () =>
  runService({
    name: "catalog",
    defaultPort: 50051,
    migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
    services: [CatalogService],
    routes,
  }),
);
