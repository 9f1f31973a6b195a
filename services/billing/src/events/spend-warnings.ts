/**
 * `toolport.spend.limit_approaching`: once per key per UTC day, when the key's captured spend that day
 * reaches 80% of its daily cap. Written to the outbox in the capture's own transaction (the relay
 * publishes it), and the (key, day) primary key of spend_warnings makes "once" hold across replicas.
 */
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { currentRequestId } from "@toolport/kit/context";
import { enqueueEvent, Subjects } from "@toolport/kit/events";
import { timeOrderedUuid } from "@toolport/kit/ids";
import { SpendLimitApproachingSchema } from "@toolport/proto/toolport/events/v1/events_pb";
import { atomicToCents, SPEND_WARNING_PERCENT } from "../domain/money.js";
import type { Db } from "../store/db.js";

export interface CapturedOnKey {
  accountId: string;
  organizationId: string;
  keyId: string;
  /** YYYY-MM-DD, the UTC day the hold counts against. */
  day: string;
  dailyLimitCents: bigint;
}

export class SpendWarnings {
  async afterCapture(db: Db, c: CapturedOnKey): Promise<void> {
    if (c.dailyLimitCents <= 0n) return;
    const { rows } = await db.query<{ spent: bigint }>(
      `SELECT COALESCE(SUM(amount), 0)::bigint AS spent FROM holds
        WHERE account_id = $1 AND key_id = $2 AND day = $3::date AND status = 'captured'`,
      [c.accountId, c.keyId, c.day],
    );
    const spentCents = atomicToCents(rows[0]!.spent);
    if (spentCents * 100n < SPEND_WARNING_PERCENT * c.dailyLimitCents) return;
    const eventId = timeOrderedUuid();
    const inserted = await db.query(
      `INSERT INTO spend_warnings (key_id, day, account_id, daily_limit_cents, spent_today_cents, event_id)
       VALUES ($1, $2::date, $3, $4, $5, $6) ON CONFLICT (key_id, day) DO NOTHING`,
      [c.keyId, c.day, c.accountId, c.dailyLimitCents, spentCents, eventId],
    );
    if (inserted.rowCount !== 1) return; // already warned today
    const percentage = Number((spentCents * 10_000n) / c.dailyLimitCents) / 100;
    await enqueueEvent(
      db,
      Subjects.spendLimitApproaching,
      SpendLimitApproachingSchema,
      create(SpendLimitApproachingSchema, {
        eventId,
        occurredAt: timestampNow(),
        requestId: currentRequestId() ?? "",
        accountId: c.accountId,
        organizationId: c.organizationId,
        keyId: c.keyId,
        dailyLimitCents: c.dailyLimitCents,
        spentTodayCents: spentCents,
        percentage,
        day: c.day,
      }),
      eventId,
    );
  }
}
