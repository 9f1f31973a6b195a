/**
 * Wakeup against a real Postgres: polls that find nothing slow down to IDLE_POLL_FACTOR x pollMs while
 * LISTEN is up, a NOTIFY still wakes a slowed-down Wakeup at once and brings it back to pollMs, and polls
 * that find work keep pollMs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../../test/harness/db.js";
import { until } from "../../../../test/harness/wait.js";
import { createLogger } from "../src/logger.js";
import { IDLE_POLL_FACTOR, Wakeup } from "../src/wakeup.js";

const log = createLogger("wakeup-test", "silent");
const POLL_MS = 100;

describe("Wakeup", () => {
  let db: TestDatabase;
  let wakeup: Wakeup;
  let looks = 0;
  let found = false;
  /** The poll wait each look started with: pollMs after a wake-up, more for a slowed-down poll. */
  const waits: number[] = [];

  beforeAll(async () => {
    db = await testDatabase("wakeup");
    wakeup = new Wakeup({
      pool: db.pool,
      channel: "wakeup_test",
      pollMs: POLL_MS,
      log,
      look: async () => {
        looks++;
        waits.push(wakeup.nextPollMs);
        return found;
      },
    });
    await wakeup.start();
  });

  afterAll(async () => {
    await wakeup?.stop();
    await db?.pool.end();
  });

  it("polls less often while its polls find nothing, up to IDLE_POLL_FACTOR x pollMs and no further", async () => {
    expect(wakeup.nextPollMs).toBe(POLL_MS);
    await until("the idle poll to slow down to its cap", async () => wakeup.nextPollMs === POLL_MS * IDLE_POLL_FACTOR);
    const before = looks;
    await until("two more idle polls", async () => looks >= before + 2);
    expect(wakeup.nextPollMs).toBe(POLL_MS * IDLE_POLL_FACTOR);
  });

  it("still looks at once on a NOTIFY when slowed down, and polls at pollMs again after it", async () => {
    expect(wakeup.nextPollMs).toBe(POLL_MS * IDLE_POLL_FACTOR);
    // Right after a slowed-down poll, the next one is IDLE_POLL_FACTOR x pollMs away: the look that follows
    // the NOTIFY comes from it if it starts with the wait back at pollMs.
    const polled = looks;
    await until("a slowed-down poll", async () => looks > polled);
    const before = looks;
    await db.pool.query("SELECT pg_notify('wakeup_test', '')");
    await until("the NOTIFY's look", async () => looks > before);
    expect(waits[before - 1]).toBe(POLL_MS * IDLE_POLL_FACTOR);
    expect(waits[before]).toBe(POLL_MS);
  });

  it("keeps polling every pollMs while polls find work", async () => {
    found = true;
    const before = looks;
    await until("three polls that find work", async () => looks >= before + 3);
    expect(wakeup.nextPollMs).toBe(POLL_MS);
    found = false;
  });
});
