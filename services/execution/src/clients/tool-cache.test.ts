import { describe, expect, it } from "vitest";
import type { Caller, Credential, ToolForCall } from "../domain/model.js";
import type { CatalogPort } from "../domain/ports.js";
import { CachingCatalog } from "./tool-cache.js";

const caller: Caller = {
  accountId: "acc-1",
  organizationId: "org-1",
  tier: "free",
  requireConfirmation: false,
  callRefusal: null,
};

function tool(id: string, revision: bigint, sunsetAt?: Date): ToolForCall {
  return {
    id,
    name: id,
    serviceId: "svc",
    serviceName: "svc",
    serviceType: "internal",
    method: "GET",
    path: "/",
    baseUrl: "",
    mcpServerUrl: "",
    mcpToolName: id,
    internalHandler: "",
    parameters: [],
    inputSchema: {},
    requestBodyContentType: "",
    securitySchemes: [],
    sideEffecting: false,
    isPaid: false,
    priceCents: 0n,
    revision,
    active: true,
    sunsetAt,
  } as ToolForCall;
}

/** A catalog whose answers the test changes, counting the lookups that reach it. */
class ChangingCatalog implements CatalogPort {
  revision = 1n;
  sunsetAt: Date | undefined;
  lookups = 0;
  gate: Promise<void> | undefined;
  async resolveTool(toolId: string): Promise<ToolForCall> {
    this.lookups++;
    const answer = tool(toolId, this.revision, this.sunsetAt);
    await this.gate;
    return answer;
  }
  async resolveCredential(): Promise<Credential | undefined> {
    return undefined;
  }
  refreshes = 0;
  async refreshOAuth(connectionId: string): Promise<Credential> {
    this.refreshes++;
    const n = this.refreshes;
    await this.gate;
    return { kind: "oauth", token: `token-${n}`, connectionId };
  }
}

describe("CachingCatalog", () => {
  it("resolves at the catalog every time until the change follower is live", async () => {
    const inner = new ChangingCatalog();
    const cache = new CachingCatalog(inner, { ttlMs: 60_000, maxEntries: 10 });
    await cache.resolveTool("t", caller);
    await cache.resolveTool("t", caller);
    expect(inner.lookups).toBe(2);
    cache.setLive(true);
    await cache.resolveTool("t", caller);
    await cache.resolveTool("t", caller);
    expect(inner.lookups).toBe(3);
    cache.setLive(false); // NATS down: no caching, nothing kept
    inner.revision = 2n;
    expect((await cache.resolveTool("t", caller)).revision).toBe(2n);
    expect(cache.size).toBe(0);
  });

  it("forgets everything on a change, and keys entries by account, organization and admin flag", async () => {
    const inner = new ChangingCatalog();
    let admin = false;
    const cache = new CachingCatalog(inner, { ttlMs: 60_000, maxEntries: 10 }, () => admin);
    cache.setLive(true);
    await cache.resolveTool("t", caller);
    await cache.resolveTool("t", { ...caller, organizationId: "org-2" });
    admin = true;
    await cache.resolveTool("t", caller);
    expect(inner.lookups).toBe(3);
    inner.revision = 2n;
    cache.invalidateAll();
    expect((await cache.resolveTool("t", caller)).revision).toBe(2n);
  });

  it("never stores an answer looked up before a change that arrived while it was in flight", async () => {
    const inner = new ChangingCatalog();
    const cache = new CachingCatalog(inner, { ttlMs: 60_000, maxEntries: 10 });
    cache.setLive(true);
    let release: () => void = () => {};
    inner.gate = new Promise((r) => {
      release = r;
    });
    const inFlight = cache.resolveTool("t", caller); // reads revision 1
    inner.revision = 2n;
    cache.invalidateAll(); // the change event arrives before the answer
    release();
    expect((await inFlight).revision).toBe(1n);
    inner.gate = undefined;
    expect((await cache.resolveTool("t", caller)).revision).toBe(2n);
  });

  it("expires entries after the TTL and refuses to serve a tool past its sunset", async () => {
    let now = 1_000_000;
    const inner = new ChangingCatalog();
    const cache = new CachingCatalog(inner, { ttlMs: 3_000, maxEntries: 10, now: () => now });
    cache.setLive(true);
    inner.sunsetAt = new Date(now + 1_000);
    await cache.resolveTool("t", caller);
    await cache.resolveTool("t", caller);
    expect(inner.lookups).toBe(1);
    now += 1_000; // the sunset is reached: the catalog is asked again (and answers 404 in real life)
    inner.sunsetAt = undefined;
    await cache.resolveTool("t", caller);
    expect(inner.lookups).toBe(2);
    now += 3_001;
    await cache.resolveTool("t", caller);
    expect(inner.lookups).toBe(3);
  });

  it("holds at most maxEntries", async () => {
    const cache = new CachingCatalog(new ChangingCatalog(), { ttlMs: 60_000, maxEntries: 2 });
    cache.setLive(true);
    for (const id of ["a", "b", "c", "d"]) await cache.resolveTool(id, caller);
    expect(cache.size).toBe(2);
  });

  it("refreshes an OAuth connection once for every call waiting on it, and again once that refresh is done", async () => {
    const inner = new ChangingCatalog();
    let open!: () => void;
    inner.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const cache = new CachingCatalog(inner, { ttlMs: 60_000, maxEntries: 10 });
    const caller = { accountId: "a", organizationId: "o", tier: "free", requireConfirmation: false, callRefusal: null };
    const waiting = Array.from({ length: 20 }, () => cache.refreshOAuth("conn-1", caller, { minValidSeconds: 60 }));
    const other = cache.refreshOAuth("conn-2", caller, { minValidSeconds: 60 });
    open();
    const tokens = await Promise.all(waiting);
    expect(new Set(tokens.map((t) => (t.kind === "oauth" ? t.token : "")))).toEqual(new Set(["token-1"]));
    const second = await other;
    expect(second.kind === "oauth" ? second.connectionId : "").toBe("conn-2");
    expect(inner.refreshes).toBe(2);
    await cache.refreshOAuth("conn-1", caller, { minValidSeconds: 60 });
    expect(inner.refreshes).toBe(3);
  });
});
