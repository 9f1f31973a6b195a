/** CatalogService internal RPCs (execution and identity call them; the gateway has no route to them). */

import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { jsonBytes } from "@toolport/kit/json-bytes";
import {
  ApiKeyCredentialSchema,
  BasicCredentialSchema,
  BearerCredentialSchema,
  type CredentialMaterial as CredentialMaterialMsg,
  CredentialMaterialSchema,
  CredentialScope,
  StarterToolSchema,
} from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import type { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import { resolveCredential } from "../domain/credentials.js";
import type { CatalogDeps } from "../domain/deps.js";
import { checkCatalogIds, findServicesOnDomain, listStarterTools, resolveToolForCall } from "../domain/internal.js";
import type { CredentialMaterial } from "../domain/model.js";
import { callerOf } from "./caller.js";
import { credentialScopeToProto, resolvedToolToProto } from "./convert.js";
import { oauthMaterialToProto } from "./oauth-handlers.js";

type Impl = Pick<
  ServiceImpl<typeof CatalogService>,
  "resolveToolForCall" | "resolveCredential" | "checkCatalogIds" | "listStarterTools" | "findServicesOnDomain"
>;

function materialToProto(m: CredentialMaterial, credentialId: string): CredentialMaterialMsg {
  switch (m.type) {
    case "api_key":
      return create(CredentialMaterialSchema, {
        kind: {
          case: "apiKey",
          value: create(ApiKeyCredentialSchema, { value: m.value, parameterName: m.parameterName, location: m.location }),
        },
      });
    case "bearer":
      return create(CredentialMaterialSchema, {
        kind: { case: "bearer", value: create(BearerCredentialSchema, { token: m.token }) },
      });
    case "basic":
      return create(CredentialMaterialSchema, {
        kind: { case: "basic", value: create(BasicCredentialSchema, { username: m.username, password: m.password }) },
      });
    case "oauth2":
      return oauthMaterialToProto(m, credentialId);
  }
}

export function createInternalHandlers(deps: CatalogDeps): Impl {
  return {
    async resolveToolForCall(req, context) {
      const principal = callerOf(context);
      // The principal forwarded by execution carries the key's allow-lists; the ids in the request win
      // when they name another account (a workflow running for its owner).
      const caller = principal && principal.accountId === req.accountId ? principal : null;
      const view = await resolveToolForCall(deps, req.toolId, req.accountId, req.organizationId, caller);
      return { tool: resolvedToolToProto(view) };
    },
    async resolveCredential(req) {
      const { credential: found, brokenReason } = await resolveCredential(deps, {
        serviceId: req.serviceId,
        accountId: req.accountId,
        organizationId: req.organizationId,
        schemeName: req.schemeName,
      });
      if (!found) return { found: false, scope: CredentialScope.UNSPECIFIED, brokenReason: brokenReason ?? "" };
      return {
        found: true,
        scope: credentialScopeToProto[found.scope],
        credential: materialToProto(found.material, found.id),
        schemeName: found.schemeName ?? undefined,
      };
    },
    async checkCatalogIds(req) {
      return checkCatalogIds(deps, req.serviceIds, req.toolIds);
    },
    async findServicesOnDomain(req) {
      return { services: await findServicesOnDomain(deps, req.domain) };
    },
    async listStarterTools(req) {
      const limit = req.limit === undefined || req.limit <= 0 ? 3 : Math.min(req.limit, 20);
      const tools = await listStarterTools(deps, limit);
      return {
        tools: tools.map(({ pair, exampleInput }) =>
          create(StarterToolSchema, {
            toolId: pair.tool.id,
            name: pair.tool.name,
            service: pair.service.name,
            description: pair.tool.description,
            parametersJson: jsonBytes(pair.tool.inputSchema),
            exampleInputJson: jsonBytes(exampleInput),
          }),
        ),
      };
    },
  };
}
