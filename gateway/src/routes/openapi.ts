/**
 * GET /v1/openapi.json and /v1/openapi.yaml: the description of every /v1 route (openapi/document.ts),
 * built once, on the first request.
 */
import { stringify } from "yaml";
import type { GatewayConfig } from "../config.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { describedDocument } from "../openapi/document.js";
import { systemOps } from "../openapi/operations/system.js";

export function openApiRoutes(api: DescribedRouter, config: GatewayConfig): void {
  let yaml: string | undefined;
  const described = () => describedDocument(api, config.PUBLIC_URL);
  api.get("/openapi.json", systemOps.openApiJson, (ctx) => {
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.body = described();
  });
  api.get("/openapi.yaml", systemOps.openApiYaml, (ctx) => {
    yaml ??= stringify(described(), { aliasDuplicateObjects: false, lineWidth: 0 });
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.type = "application/yaml";
    ctx.body = yaml;
  });
}
