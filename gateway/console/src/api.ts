/**
 * Every request the console makes goes through the typed client (`@toolport/client`, generated from the
 * gateway's own description) to this origin's `/v1`, like any other client: the console has no API of
 * its own.
 *
 * Credentials. A person signs in for a session token (JWT), sent as `Authorization: Bearer`, with the
 * chosen organization as `svc-org-id`. The few operations the spec opens to API keys only (calling a tool,
 * funding a wallet, running a workflow) run with the console key: an ordinary API key of the signed-in
 * person, named "Toolport console", created the first time one of them is used in an organization, kept
 * in this browser's storage, listed on the keys screen like any other, and revoked on sign-out. A key
 * revoked elsewhere is replaced on its next 401.
 */
import { createToolportClient, type ToolportClient } from "@toolport/client";

export type { components } from "@toolport/client";

/** An error answer of /v1 (`{detail, error: {code, message, details}}`), or a request that got none. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

interface Reply<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The 2xx body, or an ApiError with the answer's code and message. */
export async function unwrap<T>(request: Promise<Reply<T>>): Promise<T> {
  let reply: Reply<T>;
  try {
    reply = await request;
  } catch (err) {
    throw new ApiError(0, "network_error", `the gateway did not answer (${(err as Error).message})`);
  }
  if (reply.error !== undefined || !reply.response.ok) {
    const body = reply.error as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined;
    throw new ApiError(
      reply.response.status,
      body?.error?.code ?? `http_${reply.response.status}`,
      body?.error?.message ?? `the gateway answered ${reply.response.status}`,
      body?.error?.details ?? {},
    );
  }
  return reply.data as T;
}

export interface Session {
  token: string;
  accountId: string;
  /** Epoch milliseconds when the token expires. */
  expiresAt: number;
}

const SESSION_ITEM = "toolport.session";
const ORG_ITEM = "toolport.organization";

export function loadSession(): Session | null {
  try {
    const raw = localStorage.getItem(SESSION_ITEM);
    if (!raw) return null;
    const session = JSON.parse(raw) as Session;
    return session.expiresAt > Date.now() + 5_000 ? session : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session | null): void {
  if (session) localStorage.setItem(SESSION_ITEM, JSON.stringify(session));
  else localStorage.removeItem(SESSION_ITEM);
}

export function loadOrganization(accountId: string): string | null {
  return localStorage.getItem(`${ORG_ITEM}.${accountId}`);
}

export function saveOrganization(accountId: string, orgId: string): void {
  localStorage.setItem(`${ORG_ITEM}.${accountId}`, orgId);
}

/** A client without credentials (sign in, sign up, public search). */
export function anonymousClient(): ToolportClient {
  return createToolportClient({ baseUrl: window.location.origin });
}

/** The signed-in person's client, acting in `orgId`. */
export function sessionClient(session: Session, orgId: string | null): ToolportClient {
  return createToolportClient({
    baseUrl: window.location.origin,
    bearer: session.token,
    ...(orgId ? { orgId } : {}),
    fetch: async (request) => {
      const response = await fetch(request);
      // The token expired or was refused: the session is over (session.tsx signs out and says why).
      if (response.status === 401) window.dispatchEvent(new Event(SESSION_EXPIRED));
      return response;
    },
  });
}

/** Dispatched on `window` when a request with the session token answers 401. */
export const SESSION_EXPIRED = "toolport:session-expired";

interface StoredKey {
  id: string;
  key: string;
}

const keyItem = (accountId: string, orgId: string) => `toolport.console-key.${accountId}.${orgId}`;
export const CONSOLE_KEY_NAME = "Toolport console";

function storedKey(accountId: string, orgId: string): StoredKey | null {
  try {
    const raw = localStorage.getItem(keyItem(accountId, orgId));
    return raw ? (JSON.parse(raw) as StoredKey) : null;
  } catch {
    return null;
  }
}

/** The id of the console key of this browser in `orgId`, if one was made (the keys screen marks it). */
export function consoleKeyId(accountId: string, orgId: string): string | null {
  return storedKey(accountId, orgId)?.id ?? null;
}

/** Forgets the console key of `orgId` (it was revoked on the keys screen). */
export function forgetConsoleKey(accountId: string, orgId: string, keyId?: string): void {
  const stored = storedKey(accountId, orgId);
  if (stored && (keyId === undefined || stored.id === keyId)) localStorage.removeItem(keyItem(accountId, orgId));
}

const pending = new Map<string, Promise<StoredKey>>();

async function ensureKey(session: Session, orgId: string): Promise<StoredKey> {
  const existing = storedKey(session.accountId, orgId);
  if (existing) return existing;
  const item = keyItem(session.accountId, orgId);
  let creating = pending.get(item);
  if (!creating) {
    creating = unwrap(
      sessionClient(session, orgId).POST("/v1/api-keys", {
        body: {
          name: CONSOLE_KEY_NAME,
          agent_type: "other",
          purpose: "Calls tools, funds the wallet and runs workflows from the Toolport console in a browser",
          organization_id: orgId,
        },
      }),
    )
      .then((created) => {
        const key = { id: created.id, key: created.key };
        localStorage.setItem(item, JSON.stringify(key));
        return key;
      })
      .finally(() => pending.delete(item));
    pending.set(item, creating);
  }
  return creating;
}

/**
 * Runs `request` with the console key of `orgId`; a 401 (the key was revoked elsewhere) replaces the key
 * once and runs it again.
 */
export async function withConsoleKey<T>(
  session: Session,
  orgId: string,
  request: (client: ToolportClient) => Promise<Reply<T>>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const key = await ensureKey(session, orgId);
    try {
      return await unwrap(request(createToolportClient({ baseUrl: window.location.origin, apiKey: key.key })));
    } catch (err) {
      if (attempt === 0 && err instanceof ApiError && err.status === 401) {
        forgetConsoleKey(session.accountId, orgId, key.id);
        continue;
      }
      throw err;
    }
  }
}

/** Revokes every console key this browser holds for the account (sign-out). Failures are ignored. */
export async function revokeConsoleKeys(session: Session): Promise<void> {
  const prefix = `toolport.console-key.${session.accountId}.`;
  const items = Object.keys(localStorage).filter((k) => k.startsWith(prefix));
  await Promise.all(
    items.map(async (item) => {
      const stored = JSON.parse(localStorage.getItem(item) ?? "null") as StoredKey | null;
      localStorage.removeItem(item);
      if (!stored) return;
      await sessionClient(session, item.slice(prefix.length))
        .DELETE("/v1/api-keys/{key_id}", { params: { path: { key_id: stored.id } } })
        .catch(() => undefined);
    }),
  );
}
