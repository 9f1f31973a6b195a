/**
 * Principals resolved from API keys, kept for a short time so a tool call can skip the Authenticate
 * round trip (see auth.ts for where it is used and why revocation stays immediate). Entries are keyed
 * by the SHA-256 of the key (hex) and the `svc-org-id` header value: the plaintext key is never kept.
 * Bounded: past `maxEntries` the oldest entry goes first (a Map iterates in insertion order).
 */
import { createHash } from "node:crypto";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";

export const DEFAULT_MAX_ENTRIES = 10_000;

export interface PrincipalCacheOptions {
  /** How long an entry is used; 0 disables the cache (nothing is stored). */
  ttlMs: number;
  maxEntries?: number;
  /** Milliseconds clock, injectable for tests. */
  now?: () => number;
}

interface Entry {
  principal: Principal;
  expiresAt: number;
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: PrincipalCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_MAX_ENTRIES);
    this.now = options.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cache key of an API key presented with an `svc-org-id` value ("" when absent). */
  static keyOf(apiKey: string, orgHeader: string | undefined): string {
    return `${createHash("sha256").update(apiKey).digest("hex")}\n${orgHeader ?? ""}`;
  }

  get(key: string): Principal | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.principal;
  }

  /** Stores a principal from a successful Authenticate, used until the TTL or `notAfterMs`, whichever is first. */
  set(key: string, principal: Principal, notAfterMs?: number): void {
    if (!this.enabled) return;
    // Re-inserting moves the key to the end, so eviction order stays oldest-written first.
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    const expiresAt = Math.min(this.now() + this.ttlMs, notAfterMs ?? Number.POSITIVE_INFINITY);
    if (expiresAt <= this.now()) return;
    this.entries.set(key, { principal, expiresAt });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Every stored key (tests check that no plaintext is among them). */
  keys(): string[] {
    return [...this.entries.keys()];
  }
}
