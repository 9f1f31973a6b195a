/** Registration, the guide, human sign-up and login, JWKS, Authenticate and GetAccount. */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { invalidArgument, notFound, permissionDenied } from "@toolport/kit/errors";
import { principalKey } from "@toolport/kit/rpc";
import { JwkSchema } from "@toolport/proto/toolport/identity/v1/identity_resources_pb";
import type { IdentityService } from "@toolport/proto/toolport/identity/v1/identity_service_pb";
import { externalUser, login, registerAgent, signup } from "../domain/accounts.js";
import {
  authenticateAccessToken,
  authenticateAccount,
  authenticateApiKey,
  invalidCredentials,
  resolveOrganization,
} from "../domain/authenticate.js";
import { buildGuide, registrationUrl } from "../domain/guide.js";
import type { ResolvedPrincipal } from "../domain/model.js";
import { looksLikeAccessToken } from "../domain/oauth-server.js";
import { accountToProto, guideToProto, principalToProto, requireCaller } from "./convert.js";
import { addresses, type IdentityDeps } from "./deps.js";

type Impl = Pick<
  ServiceImpl<typeof IdentityService>,
  "registerAgent" | "getGettingStarted" | "signup" | "login" | "getJwks" | "authenticate" | "getAccount"
>;

export function accountHandlers(deps: IdentityDeps): Impl {
  const { config } = deps;
  const freeCalls = config.FREE_TIER_CALLS_PER_MONTH;

  /** Platform administrators: the accounts flagged in the database, and those TOOLPORT_ADMIN_EMAILS names. */
  const withAdminFlag = <A extends { email: string; isPlatformAdmin: boolean }>(account: A): A =>
    !account.isPlatformAdmin && deps.adminEmails.has(account.email.trim().toLowerCase())
      ? { ...account, isPlatformAdmin: true }
      : account;

  return {
    async registerAgent(req) {
      const registered = await registerAgent(deps, {
        name: req.name,
        operatorEmail: req.operatorEmail,
        clientIp: req.clientIp,
      });
      const where = addresses(config, req);
      deps.log.info({ account_id: registered.account.id }, "agent registered");
      return {
        agentId: registered.account.id,
        apiKey: registered.apiKey,
        walletId: registered.wallet.walletId,
        balanceUsdc: registered.wallet.balanceUsdc,
        depositAddress: registered.wallet.depositAddress ?? undefined,
        registrationUrl: registrationUrl(where),
        gettingStarted: guideToProto(buildGuide(where, freeCalls, registered.starters, registered.apiKey)),
      };
    },

    async getGettingStarted(req) {
      const where = addresses(config, req);
      const starters = await deps.catalog.starterTools(3);
      return { gettingStarted: guideToProto(buildGuide(where, freeCalls, starters)), registrationUrl: registrationUrl(where) };
    },

    async signup(req) {
      const tokens = await deps.tokens;
      const account = await signup(deps.accounts, { email: req.email, password: req.password, name: req.name });
      return {
        accountId: account.id,
        organizationId: account.personalOrganizationId,
        accessToken: await tokens.issue(account.id),
        tokenType: "Bearer",
        expiresIn: tokens.ttlSeconds,
      };
    },

    async login(req) {
      const tokens = await deps.tokens;
      const account = await login(deps.accounts, { email: req.email, password: req.password });
      return {
        accountId: account.id,
        accessToken: await tokens.issue(account.id),
        tokenType: "Bearer",
        expiresIn: tokens.ttlSeconds,
      };
    },

    async getJwks() {
      const tokens = await deps.tokens;
      return {
        keys: tokens.jwks.map((k) =>
          create(JwkSchema, { kty: k.kty, crv: k.crv, x: k.x, y: k.y, kid: k.kid, alg: k.alg, use: k.use ?? "sig" }),
        ),
      };
    },

    async authenticate(req) {
      const selector = req.organizationId?.trim() || undefined;
      let resolved: ResolvedPrincipal;
      switch (req.credential.case) {
        case "apiKey":
          resolved = await authenticateApiKey(deps, req.credential.value, selector);
          break;
        case "bearerToken": {
          // An OAuth access token of this server's (an MCP client's grant) rather than a JWT.
          if (looksLikeAccessToken(req.credential.value)) {
            resolved = await authenticateAccessToken(deps, req.credential.value, selector);
            break;
          }
          const verified = await (await deps.tokens).verify(req.credential.value);
          if (verified.kind === "toolport") {
            resolved = { ...(await authenticateAccount(deps, verified.accountId, selector)), session: verified.session };
            break;
          }
          const account = await externalUser(deps.accounts, verified);
          if (!account) throw invalidCredentials();
          resolved = await resolveOrganization(deps, account, null, selector, "jwt");
          break;
        }
        default:
          throw invalidArgument("invalid_request", "credential: an API key or a bearer token is required", {
            details: { field: "credential" },
          });
      }
      resolved = { ...resolved, account: withAdminFlag(resolved.account) };
      return { principal: principalToProto(resolved) };
    },

    async getAccount(req, context: HandlerContext) {
      const caller = requireCaller(context);
      const wanted = req.accountId || caller.accountId;
      if (wanted !== caller.accountId && !context.values.get(principalKey)?.isPlatformAdmin) {
        throw permissionDenied("forbidden", "only platform admins read other accounts");
      }
      const account = await deps.accounts.accountById(wanted);
      if (!account) throw notFound("account_not_found", `account ${wanted} not found`);
      // The same flag Authenticate gives, so an account reads as what it may do (the console's review queue).
      return { account: accountToProto(withAdminFlag(account)) };
    },
  };
}
