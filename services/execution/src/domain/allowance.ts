/**
 * Quota leases: execution's side of the per-call allowance (rate limit and free tier). Instead of one
 * identity statement per call, a caller's allowance is reserved in blocks (identity's
 * LeaseCallAllowance raises the shared counters by what it grants, so replicas together never count
 * past a limit) and spent here, in memory, one unit per call.
 *
 * - A block lasts at most identity's ALLOWANCE_LEASE_MS (2 s by default), and never past the rate
 *   window's end or, with free-tier calls, the month's. Its size follows the caller's pace: twice what
 *   the previous block used, or the calls that found none meanwhile if more, up to `maxBlock`; identity grants at
 *   most a sixteenth of the limit at once. A caller making one call now and then reserves one at a time.
 * - What a block did not use is given back: with the next block's request, or when it runs out.
 *   A process that stops gives back what it holds; one that dies leaves its units counted: rate-limit
 *   hits until their window ends (at most a minute), free-tier calls until the month is reconciled
 *   with the recorded calls after it ends (identity, store/leases.ts). So the bound is: never more calls
 *   than a limit, and at most one block fewer for as long as a block lives.
 * - Revocation stays immediate: a key's leases are taken with its key check, and identity's revoke
 *   (or a member's removal) tells this process to drop them (`_toolport.leases.<holder>`) before it
 *   answers. A block still being fetched when the drop arrives is discarded, and its callers ask
 *   identity again, which refuses the key.
 * Concurrent calls of one caller share one pending request for a new block.
 */
import { randomUUID } from "node:crypto";
import { unavailable } from "@toolport/kit/errors";
import type { Caller } from "./model.js";
import type { FreeTierUsage, IdentityPort, Lease, RateWindow } from "./ports.js";

export type Allowance = { ok: true } | { ok: false; rate: RateWindow } | { ok: false; freeTier: FreeTierUsage };

interface Entry {
  readonly key: string;
  readonly caller: Caller;
  /** Units left in the current block, and when it ends (performance.now() time). */
  rate: number;
  free: number;
  expires: number;
  /** The block's window and month, for giving back what it did not use. */
  windowStart?: Date;
  month: string;
  /** Units the current block handed out, for the next block's size. */
  used: number;
  usedFree: number;
  /** Calls that found no unit since the last request for a block started: the demand it did not cover. */
  misses: number;
  pending?: Promise<Lease>;
  dropped: boolean;
  timer?: NodeJS.Timeout;
}

export interface AllowanceOptions {
  /** The per-minute limit to ask identity for (0 = identity's default). */
  limit: number;
  windowSeconds: number;
  /** The largest block asked for at once; 1 = one identity statement per call. */
  maxBlock: number;
  /** This process's holder id; a fresh one by default. */
  holder?: string;
}

export class AllowanceLeases {
  readonly holder: string;
  private readonly entries = new Map<string, Entry>();
  private stopped = false;

  constructor(
    private readonly identity: IdentityPort,
    private readonly options: AllowanceOptions,
  ) {
    this.holder = options.holder ?? `exec-${randomUUID()}`;
  }

  /**
   * One call's allowance: a rate-limit hit, and a free-tier call when `countsFreeTier`. Refusals come
   * back as the window (rate limit) or the month (free tier) that refused; a revoked key throws
   * UNAUTHENTICATED, identity being unreachable throws UNAVAILABLE.
   */
  async take(caller: Caller, countsFreeTier: boolean): Promise<Allowance> {
    const key = `${caller.keyId ?? ""}\n${caller.accountId}\n${caller.organizationId}`;
    for (;;) {
      let entry = this.entries.get(key);
      if (!entry) {
        entry = { key, caller, rate: 0, free: 0, expires: 0, month: "", used: 0, usedFree: 0, misses: 0, dropped: false };
        this.entries.set(key, entry);
      }
      const live = performance.now() < entry.expires;
      if (live && entry.rate > 0 && (!countsFreeTier || entry.free > 0)) {
        entry.rate--;
        entry.used++;
        if (countsFreeTier) {
          entry.free--;
          entry.usedFree++;
        }
        return { ok: true };
      }
      entry.misses++;
      entry.pending ??= this.renew(entry, countsFreeTier).finally(() => {
        entry.pending = undefined;
      });
      const lease = await entry.pending;
      // A refusal answers everyone who waited for that block; a block others emptied first is asked again.
      if (lease.granted === 0) return { ok: false, rate: lease.rate };
      if (countsFreeTier && lease.freeTier && lease.freeGranted === 0 && entry.free === 0)
        return { ok: false, freeTier: lease.freeTier };
    }
  }

  /** Drops the leases of a revoked key, or of every key of an account in an organization. */
  drop(target: { keyId: string } | { accountId: string; organizationId: string }): number {
    let dropped = 0;
    for (const entry of this.entries.values()) {
      const c = entry.caller;
      const hit =
        "keyId" in target
          ? c.keyId === target.keyId
          : c.accountId === target.accountId && c.organizationId === target.organizationId;
      if (!hit) continue;
      entry.dropped = true;
      entry.rate = 0;
      entry.free = 0;
      clearTimeout(entry.timer);
      this.entries.delete(entry.key);
      dropped++;
    }
    return dropped;
  }

  /** Gives back everything held (at shutdown); later calls get no allowance. */
  async stop(): Promise<void> {
    this.stopped = true;
    const held = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(
      held.map((entry) => {
        clearTimeout(entry.timer);
        return entry.pending ? entry.pending.then(() => this.giveBack(entry)) : this.giveBack(entry);
      }),
    );
  }

  private async renew(entry: Entry, countsFreeTier: boolean): Promise<Lease> {
    if (this.stopped) throw unavailable("execution_stopping", "execution is shutting down; the call was not run");
    clearTimeout(entry.timer);
    const { caller } = entry;
    const back = this.leftovers(entry);
    const demand = entry.misses;
    const want = this.size(entry.used, demand);
    // A caller on the free tier asks for free-tier calls whenever its last block had some, so a mix
    // of free and other calls does not fetch a block per kind.
    const wantFree = countsFreeTier || entry.usedFree > 0 ? this.size(entry.usedFree, demand) : 0;
    entry.misses = 0;
    entry.used = 0;
    entry.usedFree = 0;
    const sent = performance.now();
    const lease = await this.identity.leaseCallAllowance({
      subject: caller.keyId ?? caller.accountId,
      limit: this.options.limit,
      windowSeconds: this.options.windowSeconds,
      want,
      freeTier: wantFree > 0 || (back?.freeCalls ?? 0) > 0 ? { accountId: caller.accountId, want: wantFree } : undefined,
      keyCheck: caller.keyId
        ? { keyId: caller.keyId, accountId: caller.accountId, organizationId: caller.organizationId }
        : undefined,
      holder: this.holder,
      giveBack: back,
    });
    // Dropped (revoked) while the block was on its way: it is not spent. The callers loop to a new
    // entry, whose request identity refuses.
    if (entry.dropped || this.stopped) return lease;
    entry.rate = lease.granted;
    entry.free = Number(lease.freeGranted);
    entry.windowStart = lease.windowStart;
    entry.month = lease.month;
    entry.expires = sent + lease.ttlMs;
    if (lease.granted > 0) {
      entry.timer = setTimeout(() => this.expire(entry), Math.max(0, lease.ttlMs));
      entry.timer.unref();
    } else this.entries.delete(entry.key);
    return lease;
  }

  /** A block that ran out: its unused units go back and the entry is forgotten until the next call. */
  private expire(entry: Entry): void {
    if (entry.pending || entry.dropped || this.entries.get(entry.key) !== entry) return;
    this.entries.delete(entry.key);
    void this.giveBack(entry).catch(() => {});
  }

  private async giveBack(entry: Entry): Promise<void> {
    const back = this.leftovers(entry);
    if (!back || entry.dropped) return;
    const { caller } = entry;
    await this.identity.leaseCallAllowance({
      subject: caller.keyId ?? caller.accountId,
      limit: this.options.limit,
      windowSeconds: this.options.windowSeconds,
      want: 0,
      freeTier: back.freeCalls > 0 ? { accountId: caller.accountId, want: 0 } : undefined,
      holder: this.holder,
      giveBack: back,
    });
  }

  /** The block's unused units, taken out of the entry. */
  private leftovers(entry: Entry): Lease["giveBack"] {
    if (!entry.windowStart || (entry.rate === 0 && entry.free === 0)) return undefined;
    const back = { windowStart: entry.windowStart, hits: entry.rate, month: entry.month, freeCalls: entry.free };
    entry.rate = 0;
    entry.free = 0;
    return back;
  }

  private size(used: number, demand: number): number {
    return Math.max(1, Math.min(this.options.maxBlock, Math.max(used * 2, demand)));
  }
}
