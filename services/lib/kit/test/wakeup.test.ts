/**
 * Wakeup against a real Postgres: polls that find nothing slow down to IDLE_POLL_FACTOR x pollMs while
 * LISTEN is up, a NOTIFY still wakes a slowed-down Wakeup at once and brings it back to pollMs, and polls
 * that find work keep pollMs. A look that says when its next work falls due sets the next poll's wait to
 * that (IDLE_WAIT_MAX_MS with none queued), and work already due that it could not take slows down as
 * nothing does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDatabase, testDatabase } from "../../../../test/harness/db.js";
import { until } from "../../../../test/harness/wait.js";
import { createLogger } from "../src/logger.js";
import { IDLE_POLL_FACTOR, IDLE_WAIT_MAX_MS, type LookResult, Wakeup } from "../src/wakeup.js";

const log = createLogger("wakeup-test", "silent");
const POLL_MS = 100;

describe("Wakeup", () => {
  let db: TestDatabase;
  let wakeup: Wakeup;
  let looks = 0;
  let found: LookResult = false;
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
    // The NOTIFY's look is the next one, or, when the NOTIFY reached the Wakeup later than the slowed-down
    // poll after `before` was due (.ci/run's load once delayed it past those 400 ms), the one after that.
    // Without a wake-up every look here would start at the slowed-down wait.
    await until("the NOTIFY's look", async () => waits.slice(before, before + 2).includes(POLL_MS) || looks >= before + 2);
    expect(waits[before - 1]).toBe(POLL_MS * IDLE_POLL_FACTOR);
    expect(waits.slice(before, before + 2)).toContain(POLL_MS);
  });

  it("keeps polling every pollMs while polls find work", async () => {
    found = true;
    const before = looks;
    await until("three polls that find work", async () => looks >= before + 3);
    expect(wakeup.nextPollMs).toBe(POLL_MS);
    found = false;
  });

  it("waits until the next work falls due when the look can tell", async () => {
    found = { dueInMs: 2_000 };
    await until("the wait set from the due time", async () => wakeup.nextPollMs === 2_005);
    // No look before that time: the next one is the poll 2,005 ms after the last (a second of it is
    // watched, so a test process slowed by the machine's load still sees it whole).
    const after = looks;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(looks).toBe(after);
    await until("the poll at the due time", async () => looks > after);
  });

  it("waits IDLE_WAIT_MAX_MS with nothing queued, and a NOTIFY still looks at once", async () => {
    found = { dueInMs: null };
    const before = looks;
    await db.pool.query("SELECT pg_notify('wakeup_test', '')");
    await until("the long idle wait", async () => looks > before && wakeup.nextPollMs === IDLE_WAIT_MAX_MS);
    const waiting = looks;
    found = true;
    await db.pool.query("SELECT pg_notify('wakeup_test', '')");
    await until("the NOTIFY's look", async () => looks > waiting);
    await until("the wait back at pollMs", async () => wakeup.nextPollMs === POLL_MS);
  });

  it("slows down as with nothing found when the work is already due but could not be taken", async () => {
    found = { dueInMs: -20 };
    await until("the idle poll to slow down to its cap", async () => wakeup.nextPollMs === POLL_MS * IDLE_POLL_FACTOR);
    found = false;
  });
});
