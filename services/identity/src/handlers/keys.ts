/** API keys, their usage, and the client helper. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { DEV_SECRET_KEY } from "../config.js";
import { createKey, endSession, issueConsoleKey, keyUsage, listKeys, revokeKey } from "../domain/keys.js";
import { buildMcpJson, resolveMcpOrganization } from "../domain/mcp-json.js";
import {
  agentType,
  apiKeyToProto,
  createdKeyToProto,
  organizationContextToProto,
  permissionsFromProto,
  requireCaller,
  ts,
} from "./convert.js";
import type { IdentityDeps } from "./deps.js";

type Impl = Pick<
  ServiceImpl<typeof IdentityService>,
  "createApiKey" | "listApiKeys" | "revokeApiKey" | "getApiKeyUsage" | "getMcpJson" | "issueConsoleKey" | "endSession"
>;

export function keyHandlers(deps: IdentityDeps): Impl {
  return {
    async createApiKey(req, context) {
      const caller = requireCaller(context);
      const { key, plaintext } = await createKey(deps, caller, {
        name: req.name,
        permissions: permissionsFromProto(req.permissions),
        agentName: req.agentName,
        agentType: req.agentType,
        purpose: req.purpose,
        organizationId: req.organizationId,
      });
      deps.log.info(
        { key_id: key.id, organization_id: key.organizationId, created_by_key_id: key.createdByKeyId },
        "api key created",
      );
      return createdKeyToProto(key, plaintext);
    },

    async issueConsoleKey(req, context) {
      const caller = requireCaller(context);
      const secret = deps.config.IDENTITY_SECRET_KEY ?? DEV_SECRET_KEY;
      const { key, plaintext } = await issueConsoleKey(deps, secret, caller, { organizationId: req.organizationId });
      return { key: createdKeyToProto(key, plaintext) };
    },

    async endSession(_req, context) {
      const caller = requireCaller(context);
      const revoked = await endSession(deps, caller);
      for (const key of revoked) await deps.leases.drop({ keyId: key.id });
      deps.log.info({ account_id: caller.accountId, revoked_keys: revoked.length }, "sign-in ended");
      return { revokedKeys: revoked.length };
    },

    async listApiKeys(req, context) {
      const keys = await listKeys(deps, requireCaller(context), {
        organizationId: req.organizationId?.trim() || undefined,
        includeRevoked: req.includeRevoked,
      });
      return { keys: keys.map(apiKeyToProto) };
    },

    async revokeApiKey(req, context) {
      const caller = requireCaller(context);
      const { key, revoked } = await revokeKey(deps, caller, req.keyId);
      // Live quota leases on the key, and on the keys made with it, are dropped before answering (the
      // key's also when it was revoked before, in case that revoke stopped before its drop), so their very
      // next call is refused everywhere.
      const made = revoked.filter((k) => k.id !== key.id);
      for (const k of [key, ...made]) await deps.leases.drop({ keyId: k.id });
      deps.log.info({ key_id: key.id, by: caller.accountId, also_revoked: made.map((k) => k.id) }, "api key revoked");
      return { revoked: true, key: apiKeyToProto(key) };
    },

    async getApiKeyUsage(req, context) {
      let usage: Awaited<ReturnType<typeof keyUsage>>;
      try {
        usage = await keyUsage(deps.keys, requireCaller(context), req.keyId, req.days);
      } catch (err) {
        const cause = (err as Error).cause;
        if (cause) deps.log.error({ err: cause, key_id: req.keyId }, "key usage could not be computed");
        throw err;
      }
      const k = usage.key;
      return {
        usage: {
          key: {
            id: k.id,
            name: k.name,
            agentName: k.agentName ?? undefined,
            agentType: agentType(k.agentType),
            purpose: k.purpose ?? undefined,
            createdAt: ts(k.createdAt),
          },
          windowDays: usage.windowDays,
          calls: usage.calls,
          successes: usage.successes,
          successRate: usage.successRate ?? undefined,
          p50Seconds: usage.p50Seconds ?? undefined,
          paidCalls: usage.paidCalls,
          spentCents: usage.spentCents,
          firstCallAt: ts(usage.firstCallAt),
          lastCallAt: ts(usage.lastCallAt),
          topTools: usage.topTools,
          daily: usage.daily.map((d) => ({ ...d, p50Seconds: d.p50Seconds ?? undefined })),
        },
      };
    },

    async getMcpJson(req, context) {
      const caller = requireCaller(context);
      const org = await resolveMcpOrganization(deps.organizations, caller, { query: req.orgId, header: req.headerOrgId }, (err) =>
        deps.log.warn({ err }, "client helper: organization not resolved, template returned without it"),
      );
      const result = buildMcpJson(req.mcpUrl || deps.config.MCP_PUBLIC_URL, org);
      return {
        file: result.file,
        scope: result.scope,
        mcpJson: result.mcpJson,
        org: org ? organizationContextToProto(org) : undefined,
        instructions: result.instructions,
      };
    },
  };
}
