/**
 * A short-lived cache of catalog.ResolveToolForCall in front of the catalog port, so a call does not
 * pay a catalog round trip (and a catalog database read) for a tool it resolved a moment ago.
 *
 * Freshness: every toolport.catalog.tool.changed event (tool create, edit, price, (de)activation,
 * deprecation, sunset, delete; service edits emit one per tool) empties the whole cache on every
 * execution replica (see events/tool-changed-follower.ts), so a change is seen as soon as its event
 * arrives; entries also expire after `ttlMs` whatever happens to events. The cache is only used while
 * that follower is live: before it has started and while NATS is disconnected every call resolves at
 * the catalog. A lookup started before an invalidation is never stored after it (generation count).
 * A tool's sunset date is checked on every hit, so a tool passing its sunset is refused at once.
 * Only successful resolutions are kept (an unknown or invisible tool is asked again), keyed by what
 * the catalog's answer depends on: the id or slug asked for, the account, organization and the
 * principal's platform-admin flag (visibility). Credentials are never cached (their changes publish
 * no event).
 */
import type { Caller, Credential, ToolForCall } from "../domain/model.js";
import type { CatalogPort } from "../domain/ports.js";

export interface ToolCacheOptions {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

interface Entry {
  tool: ToolForCall;
  expiresAt: number;
}

export class CachingCatalog implements CatalogPort {
  private readonly entries = new Map<string, Entry>();
  private readonly refreshes = new Map<string, Promise<Credential>>();
  private generation = 0;
  private live = false;
  private readonly now: () => number;

  constructor(
    private readonly inner: CatalogPort,
    private readonly options: ToolCacheOptions,
    /** The principal's platform-admin flag (it changes what the catalog lets the caller see). */
    private readonly adminFlag: () => boolean = () => false,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Called by the change follower: caching on (it is following changes) or off (it is not). */
  setLive(live: boolean): void {
    this.live = live;
    this.invalidateAll();
  }

  /** Forgets every entry, and every lookup still in flight. */
  invalidateAll(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  async resolveTool(toolId: string, caller: Caller): Promise<ToolForCall> {
    if (!this.live || this.options.ttlMs <= 0) return this.inner.resolveTool(toolId, caller);
    const key = `${toolId}\u0000${caller.accountId}\u0000${caller.organizationId}\u0000${this.adminFlag() ? 1 : 0}`;
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now && !pastSunset(hit.tool, now)) return hit.tool;
    if (hit) this.entries.delete(key);
    const generation = this.generation;
    const tool = await this.inner.resolveTool(toolId, caller);
    if (this.live && generation === this.generation && !pastSunset(tool, now)) {
      this.entries.set(key, { tool, expiresAt: now + this.options.ttlMs });
      if (this.entries.size > this.options.maxEntries) {
        this.entries.delete(this.entries.keys().next().value as string);
      }
    }
    return tool;
  }

  resolveCredential(tool: ToolForCall, caller: Caller): Promise<Credential | { broken: string } | undefined> {
    return this.inner.resolveCredential(tool, caller);
  }

  /**
   * Single-flight per connection: calls that find the same token expiring (or refused) while a refresh
   * is in flight wait for that one instead of asking again. Across replicas the catalog's row lock does
   * the same, so a provider sees one refresh per expiry however many calls are running.
   */
  refreshOAuth(
    connectionId: string,
    caller: Caller,
    options: { minValidSeconds: number; rejectedToken?: string; insufficientScope?: string[]; brokenReason?: string },
  ): Promise<Credential> {
    // Recording a step-up or a broken connection is no refresh: never shared with one.
    if (options.insufficientScope || options.brokenReason !== undefined) {
      return this.inner.refreshOAuth(connectionId, caller, options);
    }
    const inFlight = this.refreshes.get(connectionId);
    if (inFlight) return inFlight;
    const refresh = this.inner.refreshOAuth(connectionId, caller, options).finally(() => this.refreshes.delete(connectionId));
    this.refreshes.set(connectionId, refresh);
    return refresh;
  }
}

function pastSunset(tool: ToolForCall, now: number): boolean {
  return tool.sunsetAt !== undefined && tool.sunsetAt.getTime() <= now;
}
