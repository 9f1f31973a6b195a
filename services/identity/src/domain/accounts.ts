/**
 * Creating accounts: self-registered agents (with a key and a wallet) and humans (email and password,
 * or a trusted external OIDC identity). Every account gets a personal organization it owns.
 */
import { randomUUID } from "node:crypto";
import { conflict, unauthenticated } from "@toolport/kit/errors";
import { generateApiKeySecret } from "./api-key-secret.js";
import type { Account } from "./model.js";
import { decoyHash, hashPassword, verifyPassword } from "./passwords.js";
import type { AccountStore, CatalogPort, StarterTool, WalletInfo, WalletPort } from "./ports.js";
import { optionalText, requireEmail, requirePassword, requireText } from "./validation.js";

export interface RegisteredAgent {
  account: Account;
  apiKey: string;
  wallet: WalletInfo;
  starters: StarterTool[];
}

export interface RegistrationDeps {
  accounts: AccountStore;
  wallets: WalletPort;
  catalog: CatalogPort;
}

/**
 * The wallet is created first, for an account id chosen up front: when billing cannot create it,
 * nothing has been written here and the caller gets 503 wallet_unavailable. Billing's CreateWallet is
 * idempotent per account, and a wallet whose account insert then fails holds no money and is never
 * reachable, so no compensation is needed in that direction.
 */
export async function registerAgent(
  deps: RegistrationDeps,
  input: { name: string; operatorEmail: string; clientIp: string },
): Promise<RegisteredAgent> {
  const name = requireText("name", input.name, 100);
  const email = requireEmail("operator_email", input.operatorEmail);
  const accountId = randomUUID();
  // Asked at once: the starter tools depend on nothing here, and the wallet is a call to billing first.
  const startersAsked = deps.catalog.starterTools(3);
  startersAsked.catch(() => {}); // awaited below; if the wallet fails first, its error is the answer
  const wallet = await deps.wallets.createWallet(accountId);
  const secret = generateApiKeySecret();
  const [account, starters] = await Promise.all([
    deps.accounts.createAccount(
      {
        id: accountId,
        kind: "agent",
        name,
        email,
        passwordHash: null,
        externalIssuer: null,
        externalSubject: null,
        registeredIp: input.clientIp || null,
      },
      {
        id: randomUUID(),
        name: `${name} (registration)`,
        hash: secret.hash,
        prefix: secret.prefix,
        permissions: null,
        agentName: name,
        agentType: null,
        purpose: null,
      },
    ),
    startersAsked,
  ]);
  return { account, apiKey: secret.plaintext, wallet, starters };
}

export async function signup(
  accounts: AccountStore,
  input: { email: string; password: string; name: string | undefined },
): Promise<Account> {
  const email = requireEmail("email", input.email);
  const password = requirePassword(input.password);
  const name = optionalText("name", input.name, 100) ?? email.split("@")[0]!;
  if (await accounts.humanByEmail(email))
    throw conflict("email_taken", "an account with this email already exists; log in instead");
  try {
    return await accounts.createAccount({
      id: randomUUID(),
      kind: "human",
      name,
      email,
      passwordHash: await hashPassword(password),
      externalIssuer: null,
      externalSubject: null,
      registeredIp: null,
    });
  } catch (err) {
    // Two signups with one email at once: the unique index decides.
    if ((err as { code?: string }).code === "23505") {
      throw conflict("email_taken", "an account with this email already exists; log in instead");
    }
    throw err;
  }
}

export async function login(accounts: AccountStore, input: { email: string; password: string }): Promise<Account> {
  const refused = unauthenticated("invalid_credentials", "email or password is wrong");
  const found = await accounts.humanByEmail(input.email.trim());
  if (!found?.passwordHash) {
    await verifyPassword(input.password, await decoyHash());
    throw refused;
  }
  if (!(await verifyPassword(input.password, found.passwordHash))) throw refused;
  return found;
}

/** A human from the trusted external issuer: found by (iss, sub), created on first sight. */
export async function externalUser(
  accounts: AccountStore,
  claims: { issuer: string; subject: string; email: string | undefined; name: string | undefined },
): Promise<Account> {
  const existing = await accounts.accountByExternalSubject(claims.issuer, claims.subject);
  if (existing) return existing;
  try {
    return await accounts.createAccount({
      id: randomUUID(),
      kind: "human",
      name: claims.name?.slice(0, 100) || claims.email || claims.subject.slice(0, 100),
      email: claims.email ?? "",
      passwordHash: null,
      externalIssuer: claims.issuer,
      externalSubject: claims.subject,
      registeredIp: null,
    });
  } catch (err) {
    // The same user's first two requests at once: the other one created it.
    if ((err as { code?: string }).code === "23505") {
      const created = await accounts.accountByExternalSubject(claims.issuer, claims.subject);
      if (created) return created;
    }
    throw err;
  }
}
