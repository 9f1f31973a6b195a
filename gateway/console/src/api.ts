/**
 * Every request the console makes goes through the typed client (`@toolport/client`, generated from the
 * gateway's own description) to this origin's `/v1`, like any other client: the console has no API of
 * its own.
 *
 * Credentials. A person signs in for a session token (JWT), sent as `Authorization: Bearer`, with the
 * chosen organization as `svc-org-id`. The few operations the spec opens to API keys only (calling a tool,
 * funding a wallet, running a workflow, searching the catalog as oneself) run with the console key: the sign-in's own API key in that
 * organization, which the gateway derives from the session token (`POST /v1/auth/console-key`). Every
 * screen and every tab of one sign-in gets the same key, however many ask at once, so nothing here has to
 * guard against making two. It ends with the sign-in: sign-out calls `POST /v1/auth/logout`, which revokes
 * it, and it expires with the token by itself. This browser caches it per account, organization and
 * sign-in, only to spare a request; the gateway stays the source of truth.
 */
import { createToolportClient, nextCursor, PageError, pages, type ToolportClient } from "@toolport/client";

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
  if (reply.error !== undefined || !reply.response.ok) throw errorOf(reply.response, reply.error);
  return reply.data as T;
}

function errorOf(response: Response, error: unknown): ApiError {
  const body = error as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined;
  return new ApiError(
    response.status,
    body?.error?.code ?? `http_${response.status}`,
    body?.error?.message ?? `the gateway answered ${response.status}`,
    body?.error?.details ?? {},
  );
}

/**
 * One page of a list route (`GET /v1/tools`, `/v1/services/public`, `/v1/services/public/{id}/tools`): its
 * items, or an ApiError as `unwrap` throws, and the cursor of the next page from the answer's `Link`
 * header (undefined on the last page), for TanStack's `getNextPageParam`.
 */
export async function unwrapPage<T>(request: Promise<Reply<T[]>>): Promise<{ items: T[]; next: string | undefined }> {
  let response: Response | undefined;
  const items = await unwrap(
    request.then((reply) => {
      response = reply.response;
      return reply;
    }),
  );
  return { items, next: response ? nextCursor(response) : undefined };
}

/**
 * Each page of a list route in turn (the client's `pages`: it follows the `Link` header; leaving the loop
 * asks for no more), an error answer thrown as an ApiError as `unwrap` does.
 */
export async function* eachPage<T>(fetchPage: (cursor?: string) => Promise<Reply<T[]>>): AsyncGenerator<T[], void, undefined> {
  try {
    yield* pages(fetchPage);
  } catch (err) {
    if (err instanceof PageError) throw errorOf(err.response, err.error);
    throw new ApiError(0, "network_error", `the gateway did not answer (${(err as Error).message})`);
  }
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
      // The token expired or was refused, or the sign-in was ended: the session is over (session.tsx
      // signs out and says why, from the answer's error code).
      if (response.status === 401) {
        const code = await response
          .clone()
          .json()
          .then(
            (body: { error?: { code?: string } }) => body?.error?.code,
            () => undefined,
          );
        window.dispatchEvent(new CustomEvent(SESSION_EXPIRED, { detail: code }));
      }
      return response;
    },
  });
}

/** Dispatched on `window` when a request with the session token answers 401; `detail`: the error code. */
export const SESSION_EXPIRED = "toolport:session-expired";

/** The console key of a sign-in in one organization, as this browser caches it. */
interface ConsoleKey {
  id: string;
  key: string;
  /** The sign-in it belongs to: the end of its session token (the signature's tail tells sign-ins apart). */
  signIn: string;
  /** When it ends by itself (with the session token), ISO 8601; null when the gateway gave no end. */
  expiresAt: string | null;
}

const KEY_PREFIX = "toolport.console-key.";
const keyItem = (accountId: string, orgId: string) => `${KEY_PREFIX}${accountId}.${orgId}`;
const signInOf = (session: Session) => session.token.slice(-16);

/** The cached key of this sign-in in `orgId`; another sign-in's, an expired one or an old version's is none. */
function cachedKey(session: Session, orgId: string): ConsoleKey | null {
  try {
    const raw = localStorage.getItem(keyItem(session.accountId, orgId));
    const cached = raw ? (JSON.parse(raw) as Partial<ConsoleKey>) : null;
    if (!cached?.id || !cached.key || cached.signIn !== signInOf(session)) return null;
    if (cached.expiresAt && Date.parse(cached.expiresAt) <= Date.now() + 5_000) return null;
    return cached as ConsoleKey;
  } catch {
    return null;
  }
}

/** The id of this sign-in's console key in `orgId`, once a screen has needed it (the keys screen marks it). */
export function consoleKeyId(session: Session, orgId: string): string | null {
  return cachedKey(session, orgId)?.id ?? null;
}

/** Forgets the cached console key of `orgId` (`keyId`: only if it is still that one). */
function forgetConsoleKey(accountId: string, orgId: string, keyId?: string): void {
  const item = keyItem(accountId, orgId);
  try {
    const cached = JSON.parse(localStorage.getItem(item) ?? "null") as Partial<ConsoleKey> | null;
    if (cached && keyId !== undefined && cached.id !== keyId) return;
  } catch {
    // Unreadable: forget it.
  }
  localStorage.removeItem(item);
}

/** Forgets every console key this browser caches for the account (the sign-in ended). */
export function forgetConsoleKeys(accountId: string): void {
  const prefix = `${KEY_PREFIX}${accountId}.`;
  for (const item of Object.keys(localStorage).filter((k) => k.startsWith(prefix))) localStorage.removeItem(item);
}

// One request at a time per sign-in and organization in this page (the gateway makes it single in any case).
const asking = new Map<string, Promise<ConsoleKey>>();

async function consoleKey(session: Session, orgId: string): Promise<ConsoleKey> {
  const cached = cachedKey(session, orgId);
  if (cached) return cached;
  const item = keyItem(session.accountId, orgId);
  const flight = `${item}.${signInOf(session)}`;
  let ask = asking.get(flight);
  if (!ask) {
    // A 401 here (console_session_ended: the sign-in was ended in another tab, or its console key was
    // revoked, which the gateway does not replace) ends the session, as any 401 with the session token
    // does (sessionClient).
    ask = unwrap(sessionClient(session, orgId).POST("/v1/auth/console-key", { body: { organization_id: orgId } }))
      .then((got) => {
        const key: ConsoleKey = { id: got.id, key: got.key, signIn: signInOf(session), expiresAt: got.expires_at ?? null };
        localStorage.setItem(item, JSON.stringify(key));
        return key;
      })
      .finally(() => asking.delete(flight));
    asking.set(flight, ask);
  }
  return ask;
}

/**
 * Runs `request` with this sign-in's console key in `orgId`. A 401 with the key (it expired, or was
 * revoked) forgets the cached key and asks the gateway once more: it answers the sign-in's key if there
 * is still one, else 401 `console_session_ended`, which ends the session.
 */
export async function withConsoleKey<T>(
  session: Session,
  orgId: string,
  request: (client: ToolportClient) => Promise<Reply<T>>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const key = await consoleKey(session, orgId);
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

/**
 * Ends the sign-in at the gateway (`POST /v1/auth/logout` revokes every console key it made) and forgets
 * them here. A failure is ignored: the keys still expire with the session token.
 */
export async function endSignIn(session: Session): Promise<void> {
  const client = createToolportClient({ baseUrl: window.location.origin, bearer: session.token });
  await client.POST("/v1/auth/logout").catch(() => undefined);
  forgetConsoleKeys(session.accountId);
}
