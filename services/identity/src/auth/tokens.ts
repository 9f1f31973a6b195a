/**
 * JWTs: Toolport-issued ES256 tokens for human accounts, and, when configured, tokens of one trusted
 * external OIDC issuer. Algorithms are pinned per issuer (never taken from the token), and issuer,
 * audience and expiry are always checked.
 */
import { randomUUID } from "node:crypto";
import { unauthenticated, unavailable } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  importJWK,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
} from "jose";
import { SIGNING_ALG, type SigningKey } from "./signing-keys.js";

export interface TokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
  oidc?: { jwksUrl: string; issuer: string; audience: string; algorithms: string[] };
}

export type VerifiedToken =
  | { kind: "toolport"; accountId: string; session: { id: string; expiresAt: Date } | null }
  | { kind: "external"; issuer: string; subject: string; email: string | undefined; name: string | undefined };

export class TokenService {
  private readonly localKeys: JWTVerifyGetKey;
  private readonly remoteKeys: JWTVerifyGetKey | undefined;

  constructor(
    private readonly key: SigningKey,
    private readonly settings: TokenSettings,
    private readonly log: Logger,
  ) {
    this.localKeys = createLocalJWKSet({ keys: key.publicJwks });
    if (settings.oidc) this.remoteKeys = createRemoteJWKSet(new URL(settings.oidc.jwksUrl), { timeoutDuration: 3000 });
  }

  get jwks(): JWK[] {
    return this.key.publicJwks;
  }

  get ttlSeconds(): number {
    return this.settings.ttlSeconds;
  }

  async issue(accountId: string): Promise<string> {
    const privateKey = await importJWK(this.key.privateJwk, SIGNING_ALG);
    return new SignJWT({})
      .setProtectedHeader({ alg: SIGNING_ALG, kid: this.key.kid, typ: "JWT" })
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setSubject(accountId)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${this.settings.ttlSeconds}s`)
      .sign(privateKey);
  }

  async verify(token: string): Promise<VerifiedToken> {
    let claimedIssuer: string | undefined;
    try {
      // Unverified read, only to choose which issuer's rules apply; verification follows.
      claimedIssuer = decodeJwt(token).iss;
    } catch {
      throw invalidToken("the token is not a JWT");
    }
    const oidc = this.settings.oidc;
    if (oidc && this.remoteKeys && claimedIssuer === oidc.issuer) {
      const payload = await this.check(token, this.remoteKeys, oidc.issuer, oidc.audience, oidc.algorithms);
      return {
        kind: "external",
        issuer: oidc.issuer,
        subject: payload.sub!,
        email: typeof payload.email === "string" ? payload.email : undefined,
        name: typeof payload.name === "string" ? payload.name : undefined,
      };
    }
    const payload = await this.check(token, this.localKeys, this.settings.issuer, this.settings.audience, [SIGNING_ALG]);
    // The sign-in a console key is bound to: every token Toolport issues carries a jti.
    const session = typeof payload.jti === "string" ? { id: payload.jti, expiresAt: new Date(payload.exp! * 1000) } : null;
    return { kind: "toolport", accountId: payload.sub!, session };
  }

  private async check(
    token: string,
    keys: JWTVerifyGetKey,
    issuer: string,
    audience: string,
    algorithms: string[],
  ): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, keys, { issuer, audience, algorithms, requiredClaims: ["sub", "exp"] });
      return payload;
    } catch (err) {
      if (err instanceof joseErrors.JWKSTimeout || (err instanceof TypeError && /fetch/i.test(err.message))) {
        this.log.warn({ err: (err as Error).message }, "external issuer's JWKS unreachable");
        throw unavailable("token_verification_unavailable", "the token issuer's keys cannot be fetched right now; try again", {
          cause: err,
        });
      }
      throw invalidToken(reasonText(err));
    }
  }
}

function invalidToken(why: string) {
  return unauthenticated("invalid_token", `the bearer token was not accepted: ${why}`);
}

function reasonText(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return "it has expired";
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `claim ${err.claim} is not valid`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return "its signature algorithm is not accepted";
  if (err instanceof joseErrors.JWKSNoMatchingKey) return "it is not signed by a known key";
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return "its signature is not valid";
  return "it is malformed or not signed by a trusted issuer";
}
