/**
 * The consumers' write: for each event new to the inbox, one delivery per active webhook of the event's
 * owner that subscribes to it, due now. A paused webhook gets none (events that happen while it is paused
 * are not kept for later). One statement for a whole batch of events; a delivery that exists already
 * (same webhook and event) is left as it is. Its trigger wakes every replica's sender (NOTIFY
 * toolport_webhooks) when it added any.
 */
import type { PoolClient } from "@toolport/kit/pg";
import type { Outgoing } from "../domain/events.js";

export type FanOutEvent = Outgoing & { eventId: string };

export async function insertFanOut(client: PoolClient, events: FanOutEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const { rowCount } = await client.query({
    // Named: prepared once per connection, not parsed and planned again for every batch.
    name: "webhooks_fan_out",
    text: `INSERT INTO deliveries (id, webhook_id, event, event_id, body, next_attempt_at)
           SELECT uuid_v7(), w.id, e.event, e.event_id, e.body, now()
             FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS e(event_id, owner_id, event, body)
             JOIN webhooks w ON w.owner_id = e.owner_id AND w.is_active AND e.event = ANY (w.events)
           ON CONFLICT (webhook_id, event_id) DO NOTHING`,
    values: [events.map((e) => e.eventId), events.map((e) => e.ownerId), events.map((e) => e.event), events.map((e) => e.body)],
  });
  return rowCount ?? 0;
}
