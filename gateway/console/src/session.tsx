/**
 * The signed-in person: the session token, the account, its organizations and the one chosen in the
 * switcher (sent as `svc-org-id`), and the clients to act with. Screens read it with `useSession()`.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { ToolportClient } from "@toolport/client";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react";
import {
  anonymousClient,
  type components,
  endSignIn,
  forgetConsoleKeys,
  loadOrganization,
  loadSession,
  SESSION_EXPIRED,
  type Session,
  saveOrganization,
  saveSession,
  sessionClient,
  unwrap,
  withConsoleKey,
} from "./api";

type Schemas = components["schemas"];
export type Account = Schemas["Account"];
export type Organization = Schemas["Organization"];

interface Reply<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export interface SignedIn {
  session: Session;
  account: Account | undefined;
  organizations: Organization[];
  /** The organization the console acts in (personal until another is picked). */
  orgId: string;
  organization: Organization | undefined;
  setOrgId(orgId: string): void;
  /** The person's client (JWT), acting in `orgId`. */
  api: ToolportClient;
  /** Runs a request that the spec opens to API keys only, with the console key of `orgId` (api.ts). */
  withKey<T>(request: (client: ToolportClient) => Promise<Reply<T>>): Promise<T>;
  /** Ends the sign-in (its console keys are revoked); `reason` is said on the sign-in screen. */
  signOut(reason?: string): Promise<void>;
}

interface SessionState {
  signedIn: SignedIn | null;
  /** Why the last session ended, when it was not a sign-out (shown on the sign-in screen). */
  endedBecause: string | null;
  signIn(email: string, password: string): Promise<void>;
  signUp(email: string, password: string, name: string): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const [endedBecause, setEndedBecause] = useState<string | null>(null);
  const [chosenOrg, setChosenOrg] = useState<string | null>(() => (session ? loadOrganization(session.accountId) : null));

  const start = useCallback(
    (token: string, accountId: string, expiresIn: number, orgId?: string) => {
      const next = { token, accountId, expiresAt: Date.now() + expiresIn * 1000 };
      // Console keys cached for an earlier sign-in are that sign-in's: this one asks for its own.
      forgetConsoleKeys(accountId);
      saveSession(next);
      if (orgId) saveOrganization(accountId, orgId);
      queryClient.clear();
      setEndedBecause(null);
      setChosenOrg(orgId ?? loadOrganization(accountId));
      setSession(next);
    },
    [queryClient],
  );

  const end = useCallback(
    (reason: string | null) => {
      saveSession(null);
      queryClient.clear();
      setEndedBecause(reason);
      setSession(null);
    },
    [queryClient],
  );

  // The token's end: sign out when it expires or a request with it answers 401. The sign-in's console
  // keys end with the token at the gateway; here they are forgotten.
  useEffect(() => {
    if (!session) return;
    const expired = (event?: Event) => {
      forgetConsoleKeys(session.accountId);
      const code = (event as CustomEvent<string | undefined> | undefined)?.detail;
      end(
        code === "console_session_ended"
          ? "This sign-in has ended (signed out in another tab, or its console key was revoked). Sign in again to go on."
          : "Your session ended. Sign in again to go on.",
      );
    };
    const timer = setTimeout(expired, Math.max(0, session.expiresAt - Date.now()));
    window.addEventListener(SESSION_EXPIRED, expired);
    return () => {
      clearTimeout(timer);
      window.removeEventListener(SESSION_EXPIRED, expired);
    };
  }, [session, end]);

  const bare = useMemo(() => (session ? sessionClient(session, null) : null), [session]);
  const account = useQuery({
    queryKey: ["account", session?.accountId],
    enabled: bare !== null,
    queryFn: () => unwrap(bare!.GET("/v1/accounts/me")),
  });
  const organizations = useQuery({
    queryKey: ["organizations", session?.accountId],
    enabled: bare !== null,
    queryFn: () => unwrap(bare!.GET("/v1/organizations")),
  });

  const orgList = organizations.data ?? [];
  const known = chosenOrg !== null && orgList.some((o) => o.id === chosenOrg);
  const orgId = known ? chosenOrg : (account.data?.personal_organization_id ?? chosenOrg ?? "");
  const api = useMemo(() => (session ? sessionClient(session, orgId || null) : null), [session, orgId]);

  const signedIn = useMemo<SignedIn | null>(() => {
    if (!session || !api) return null;
    return {
      session,
      account: account.data,
      organizations: orgList,
      orgId,
      organization: orgList.find((o) => o.id === orgId),
      setOrgId(next) {
        saveOrganization(session.accountId, next);
        setChosenOrg(next);
        // Everything but the account and its organizations depends on the organization.
        queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== "account" && q.queryKey[0] !== "organizations" });
      },
      api,
      withKey: (request) => withConsoleKey(session, orgId, request),
      async signOut(reason) {
        await endSignIn(session);
        end(reason ?? null);
      },
    };
  }, [session, api, account.data, orgList, orgId, queryClient, end]);

  const state = useMemo<SessionState>(
    () => ({
      signedIn,
      endedBecause,
      async signIn(email, password) {
        const reply = await unwrap(anonymousClient().POST("/v1/auth/login", { body: { email, password } }));
        start(reply.access_token, reply.account_id, reply.expires_in);
      },
      async signUp(email, password, name) {
        const reply = await unwrap(
          anonymousClient().POST("/v1/auth/signup", { body: { email, password, ...(name ? { name } : {}) } }),
        );
        start(reply.access_token, reply.account_id, reply.expires_in, reply.organization_id);
      },
    }),
    [signedIn, endedBecause, start],
  );

  return <SessionContext.Provider value={state}>{children}</SessionContext.Provider>;
}

export function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error("useSessionState outside SessionProvider");
  return state;
}

/** The signed-in person; screens behind the sign-in only (App renders them only then). */
export function useSession(): SignedIn {
  const { signedIn } = useSessionState();
  if (!signedIn) throw new Error("useSession while signed out");
  return signedIn;
}
