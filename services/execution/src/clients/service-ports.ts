import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { Code, ConnectError, DomainError, readError, unavailable } from "@toolport/kit/errors";
import { fromJsonBytes, objectFromJsonBytes } from "@toolport/kit/json-bytes";
import type { Json } from "@toolport/kit/json-values";
import type { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import type { CredentialMaterial, ResolvedTool } from "@toolport/proto/toolport/catalog/v1/catalog_publishing_pb";
import { ParameterLocation, ServiceType, ToolStatus } from "@toolport/proto/toolport/catalog/v1/catalog_resources_pb";
import type { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { ExecutionFailure } from "../domain/failure.js";
import type {
  Caller,
  Credential,
  ServiceType as Kind,
  ParameterLocation as Location,
  SecurityScheme,
  ToolForCall,
} from "../domain/model.js";
import type { BillingPort, CatalogPort, FinalSettlement, IdentityPort, Lease } from "../domain/ports.js";

/** Relays a refusal another service made on the caller's behalf; anything else is "unavailable". */
function translate(service: string, err: unknown, relay: Record<string, true> = {}): Error {
  if (!(err instanceof ConnectError)) return err as Error;
  const received = readError(err);
  if (relay[received.reason]) {
    return new DomainError(received.code, received.reason, received.message, {
      details: received.details,
      detail: received.detail,
      cause: err,
    });
  }
  return unavailable(`${service}_unavailable`, `the ${service} service could not answer; the call was not run`, { cause: err });
}

const locations: Record<ParameterLocation, Location | undefined> = {
  [ParameterLocation.UNSPECIFIED]: undefined,
  [ParameterLocation.PATH]: "path",
  [ParameterLocation.QUERY]: "query",
  [ParameterLocation.HEADER]: "header",
  [ParameterLocation.COOKIE]: "cookie",
  [ParameterLocation.BODY]: "body",
};
const kinds: Record<ServiceType, Kind> = {
  [ServiceType.UNSPECIFIED]: "api",
  [ServiceType.API]: "api",
  [ServiceType.MCP_SERVER]: "mcp_server",
  [ServiceType.INTERNAL]: "internal",
};

export function toolFromProto(t: ResolvedTool): ToolForCall {
  return {
    id: t.id,
    slug: t.slug,
    name: t.name,
    serviceId: t.serviceId,
    serviceName: t.serviceName,
    serviceType: kinds[t.serviceType],
    method: t.method,
    path: t.path,
    baseUrl: t.baseUrl,
    mcpServerUrl: t.mcpServerUrl,
    mcpToolName: t.mcpToolName || t.name,
    internalHandler: t.internalHandler,
    parameters: Object.entries(t.parameters).flatMap(([key, p]) => {
      const location = locations[p.location];
      if (!location) return [];
      return [
        {
          key,
          name: p.name || key,
          location,
          type: p.type,
          required: p.required,
          default: fromJsonBytes<Json>(p.defaultJson),
          enum: fromJsonBytes<Json[]>(p.enumJson),
          encodeSlashes: p.encodeSlashes,
        },
      ];
    }),
    inputSchema: objectFromJsonBytes(t.inputSchemaJson),
    requestBodySchema: fromJsonBytes(t.requestBodySchemaJson),
    requestBodyContentType: t.requestBodyContentType,
    securitySchemes: t.securitySchemes.map(
      (s): SecurityScheme => ({
        name: s.name,
        type: s.type,
        scheme: s.scheme?.toLowerCase(),
        location: (locations[s.location] as SecurityScheme["location"]) ?? undefined,
        parameterName: s.parameterName,
      }),
    ),
    sideEffecting: t.sideEffecting,
    isPaid: t.isPaid,
    priceCents: t.pricePerCallCents,
    passthroughReason: t.passthroughReason || undefined,
    revision: t.revision,
    active: t.status !== ToolStatus.INACTIVE,
    sunsetAt: t.sunsetDate ? new Date(Number(t.sunsetDate.seconds) * 1000 + Math.floor(t.sunsetDate.nanos / 1e6)) : undefined,
  };
}

export class GrpcCatalog implements CatalogPort {
  constructor(private readonly client: Client<typeof CatalogService>) {}

  async resolveTool(toolId: string, caller: Caller): Promise<ToolForCall> {
    try {
      const res = await this.client.resolveToolForCall({
        toolId,
        accountId: caller.accountId,
        organizationId: caller.organizationId,
      });
      if (!res.tool) throw new Error("catalog returned no tool");
      return toolFromProto(res.tool);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) {
        throw new DomainError(Code.NotFound, "tool_not_found", `tool ${toolId} not found`, {
          details: { tool_id: toolId },
          cause: err,
        });
      }
      throw translate("catalog", err);
    }
  }

  async resolveCredential(tool: ToolForCall, caller: Caller): Promise<Credential | { broken: string } | undefined> {
    let res: Awaited<ReturnType<Client<typeof CatalogService>["resolveCredential"]>>;
    try {
      res = await this.client.resolveCredential({
        serviceId: tool.serviceId,
        accountId: caller.accountId,
        organizationId: caller.organizationId,
      });
    } catch (err) {
      throw translate("catalog", err);
    }
    if (!res.found) return res.brokenReason ? { broken: res.brokenReason } : undefined;
    return credentialFromProto(res.credential?.kind);
  }

  async refreshOAuth(
    connectionId: string,
    caller: Caller,
    options: { minValidSeconds: number; rejectedToken?: string; insufficientScope?: string[]; brokenReason?: string },
  ): Promise<Credential> {
    let res: Awaited<ReturnType<Client<typeof CatalogService>["refreshOAuthConnection"]>>;
    try {
      res = await this.client.refreshOAuthConnection({
        connectionId,
        accountId: caller.accountId,
        organizationId: caller.organizationId,
        minValidSeconds: options.minValidSeconds,
        rejectedAccessToken: options.rejectedToken,
        insufficientScope: options.insufficientScope ?? [],
        brokenReason: options.brokenReason,
      });
    } catch (err) {
      const received = err instanceof ConnectError ? readError(err) : undefined;
      // Step-up recorded: the caller must connect again, granting the wider scope.
      if (received?.reason === "insufficient_scope") throw new ExecutionFailure("auth", "insufficient_scope", received.message);
      // The provider refused the refresh, or the connection went away meanwhile: the caller must reconnect.
      if (received?.reason === "oauth_connection_broken" || received?.reason === "connection_not_found") {
        throw new ExecutionFailure(
          "auth",
          "oauth_connection_broken",
          `${received.message}; reconnect at the service's configuration_url`,
        );
      }
      if (received?.reason === "oauth_refresh_failed") {
        throw new ExecutionFailure("upstream", "oauth_refresh_failed", received.message);
      }
      throw translate("catalog", err);
    }
    const credential = credentialFromProto(res.credential?.kind);
    if (!credential) throw new ExecutionFailure("platform", "oauth_refresh_empty", "the catalog returned no access token");
    return credential;
  }
}

function credentialFromProto(kind: CredentialMaterial["kind"] | undefined): Credential | undefined {
  switch (kind?.case) {
    case "apiKey":
      return {
        kind: "api_key",
        value: kind.value.value,
        parameterName: kind.value.parameterName,
        location: kind.value.location,
      };
    case "bearer":
      return { kind: "bearer", token: kind.value.token };
    case "basic":
      return { kind: "basic", username: kind.value.username, password: kind.value.password };
    case "oauth":
      return {
        kind: "oauth",
        token: kind.value.accessToken,
        expiresAt: kind.value.expiresAt ? timestampDate(kind.value.expiresAt) : undefined,
        connectionId: kind.value.connectionId,
      };
    default:
      return undefined;
  }
}

/** Billing's refusals of a Capture that will never succeed: the hold's money is back, or there is none. */
const NOTHING_TO_CAPTURE = new Set(["hold_already_released", "hold_expired", "hold_not_found"]);

export class GrpcBilling implements BillingPort {
  constructor(private readonly client: Client<typeof BillingService>) {}

  async hold(req: { executionId: string; caller: Caller; amountCents: bigint; toolId: string }): Promise<void> {
    try {
      await this.client.hold({
        executionId: req.executionId,
        accountId: req.caller.accountId,
        keyId: req.caller.keyId,
        amountAtomic: req.amountCents * 10_000n,
        keyCaps: { maxCostPerCallCents: req.caller.maxCostPerCallCents, dailySpendLimitCents: req.caller.dailySpendLimitCents },
        toolId: req.toolId,
        organizationId: req.caller.organizationId,
      });
    } catch (err) {
      throw translate("billing", err, { insufficient_balance: true, spend_limit_exceeded: true });
    }
  }

  async capture(executionId: string): Promise<FinalSettlement> {
    try {
      await this.client.capture({ executionId });
      return "captured";
    } catch (err) {
      // Billing's final word that there is nothing to charge; anything else (unreachable) is retried.
      if (err instanceof ConnectError && NOTHING_TO_CAPTURE.has(readError(err).reason)) return "released";
      throw err;
    }
  }

  async release(executionId: string, reason: string): Promise<FinalSettlement> {
    try {
      await this.client.release({ executionId, reason });
      return "released";
    } catch (err) {
      // An unknown hold needs nothing more; one already captured stays charged.
      if (err instanceof ConnectError && err.code === Code.NotFound) return "released";
      if (err instanceof ConnectError && readError(err).reason === "hold_already_captured") return "captured";
      throw err;
    }
  }
}

export class GrpcIdentity implements IdentityPort {
  constructor(private readonly client: Client<typeof IdentityService>) {}

  async leaseCallAllowance(req: Parameters<IdentityPort["leaseCallAllowance"]>[0]): Promise<Lease> {
    let res: Awaited<ReturnType<Client<typeof IdentityService>["leaseCallAllowance"]>>;
    try {
      res = await this.client.leaseCallAllowance({
        rateLimit: { bucket: "tool_calls", subjectKey: req.subject, limit: req.limit, windowSeconds: req.windowSeconds },
        want: req.want,
        freeTierAccountId: req.freeTier?.accountId,
        freeWant: req.freeTier?.want ?? 0,
        keyCheck: req.keyCheck,
        holder: req.holder,
        giveBack: req.giveBack && {
          windowStart: timestampFromDate(req.giveBack.windowStart),
          hits: req.giveBack.hits,
          month: req.giveBack.month,
          freeCalls: BigInt(req.giveBack.freeCalls),
        },
      });
    } catch (err) {
      // A key revoked (or whose owner left the organization) since the gateway resolved it: the caller's 401;
      // its owner made a viewer since then: the caller's 403.
      throw translate("identity", err, { unauthenticated: true, key_organization_left: true, insufficient_role: true });
    }
    const rate = res.rateLimit;
    if (!rate || !res.windowStart)
      throw unavailable("identity_unavailable", "the identity service could not answer; the call was not run");
    const free = res.freeTier;
    return {
      granted: res.granted,
      rate: {
        allowed: rate.allowed,
        limit: rate.limit,
        remaining: rate.remaining,
        resetAt: rate.resetAt ? timestampDate(rate.resetAt) : new Date(),
        retryAfterSeconds: rate.retryAfterSeconds,
      },
      windowStart: timestampDate(res.windowStart),
      freeGranted: Number(res.freeGranted),
      freeTier: free && {
        allowed: free.allowed,
        callsThisMonth: free.callsThisMonth,
        limit: free.limit,
        resetsAt: free.resetsAt ? timestampDate(free.resetsAt) : new Date(),
      },
      month: res.month,
      ttlMs: res.ttlMs,
    };
  }
}
