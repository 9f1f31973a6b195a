/**
 * Keeps this replica's tool cache (clients/tool-cache.ts) honest. Every execution replica holds its
 * own cache, so each one reads toolport.catalog.tool.changed through its own ordered (ephemeral)
 * consumer, as the catalog's search index does, rather than a shared durable one that would hand each
 * event to a single replica. Every event empties the cache. Caching is switched on only once the
 * consumer exists, and off (cache emptied) while the NATS connection is down, since events published
 * meanwhile may reach us late; it comes back on, emptied again, when the connection is back.
 */
import { currentNatsNames, pullOptions, Subjects } from "@toolport/kit/events";
import type { Logger } from "@toolport/kit/logger";
import type { ConsumerMessages, NatsConnection } from "nats";
import { DeliverPolicy } from "nats";
import type { CachingCatalog } from "../clients/tool-cache.js";

export interface ToolChangeFollower {
  stop(): Promise<void>;
}

export async function followToolChanges(nc: NatsConnection, cache: CachingCatalog, log: Logger): Promise<ToolChangeFollower> {
  const consumer = await nc.jetstream().consumers.get(currentNatsNames().stream, {
    filterSubjects: currentNatsNames().wire(Subjects.catalogToolChanged),
    deliver_policy: DeliverPolicy.New,
  });
  const messages: ConsumerMessages = await consumer.consume(pullOptions(256));
  let stopped = false;
  cache.setLive(true);

  const loop = (async () => {
    for await (const _msg of messages) {
      if (stopped) break;
      cache.invalidateAll();
    }
  })().catch((err) => {
    cache.setLive(false);
    log.error({ err }, "tool change follower stopped; tools are resolved at the catalog on every call");
  });

  const watch = (async () => {
    for await (const status of nc.status()) {
      if (stopped) break;
      if (status.type === "disconnect") cache.setLive(false);
      else if (status.type === "reconnect") cache.setLive(true);
    }
  })().catch(() => cache.setLive(false));

  return {
    async stop() {
      stopped = true;
      cache.setLive(false);
      await messages.close();
      await loop;
      void watch;
    },
  };
}
