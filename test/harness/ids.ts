/** Checks on the time-ordered ids Toolport hands out (@toolport/kit/ids, the webhooks service's uuid_v7()). */
import { expect } from "vitest";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** `id` is a UUID version 7 whose first 48 bits, its time in milliseconds, are within a minute of now. */
export function expectTimeOrderedUuidOfNow(id: unknown): void {
  expect(id).toMatch(UUID_V7);
  const madeAt = Number.parseInt(String(id).replaceAll("-", "").slice(0, 12), 16);
  expect(Math.abs(Date.now() - madeAt)).toBeLessThan(60_000);
}
