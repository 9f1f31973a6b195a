/**
 * Keeps this replica's search index in step with the catalog. Every catalog replica holds its own
 * index (the embedded engine lives in the process), so each one reads toolport.catalog.tool.changed
 * through its own ordered (ephemeral) consumer rather than sharing a durable one that would hand each
 * event to a single replica. The consumer is created before the start-up rebuild (or snapshot load)
 * and its events are held until that is done, so a change made meanwhile is applied after it, never lost.
 * Each event re-reads the tool from Postgres, so order and repetition do not matter. If applying an
 * event fails (the engine is unreachable), the index is rebuilt from Postgres once the engine answers.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { currentNatsNames, pullOptions, Subjects } from "@toolport/kit/events";
import type { Logger } from "@toolport/kit/logger";
import { CatalogToolChangedSchema, ChangeKind } from "@toolport/proto/toolport/events/v1/events_pb";
import { type ConsumerMessages, DeliverPolicy, type NatsConnection } from "nats";
import type { SearchIndex } from "../search/search-index.js";

export interface IndexConsumer {
  /**
   * Loads the index's snapshot or else rebuilds it from Postgres (retrying until the engine answers),
   * then applies held events.
   */
  rebuildAndFollow(): Promise<void>;
  stop(): Promise<void>;
}

export async function startIndexConsumer(nc: NatsConnection, index: SearchIndex, log: Logger): Promise<IndexConsumer> {
  const consumer = await nc.jetstream().consumers.get(currentNatsNames().stream, {
    filterSubjects: currentNatsNames().wire(Subjects.catalogToolChanged),
    deliver_policy: DeliverPolicy.New,
  });
  const messages: ConsumerMessages = await consumer.consume(pullOptions(256));
  let stopped = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let rebuilding: Promise<void> | undefined;

  const rebuildUntilDone = async () => {
    let delayMs = 500;
    while (!stopped) {
      try {
        await index.rebuild();
        return;
      } catch (err) {
        log.error(
          { err: (err as Error).message, retry_in_ms: delayMs },
          "search index rebuild failed; search answers 503 meanwhile",
        );
        await new Promise((r) => setTimeout(r, delayMs));
        delayMs = Math.min(delayMs * 2, 10_000);
      }
    }
  };
  const scheduleRebuild = () => {
    index.markStale();
    rebuilding ??= rebuildUntilDone().finally(() => {
      rebuilding = undefined;
    });
  };

  const loop = (async () => {
    for await (const msg of messages) {
      await ready;
      if (stopped) break;
      try {
        const event = fromBinary(CatalogToolChangedSchema, msg.data);
        if (event.kind === ChangeKind.DELETE) await index.remove([event.toolId]);
        else await index.refreshOne(event.toolId);
      } catch (err) {
        log.warn({ err: (err as Error).message }, "could not apply a catalog change to the search index; rebuilding it");
        scheduleRebuild();
      }
    }
  })().catch((err) => log.error({ err }, "search index consumer stopped"));

  return {
    async rebuildAndFollow() {
      if (!(await index.restoreSnapshot())) await rebuildUntilDone();
      markReady();
    },
    async stop() {
      stopped = true;
      markReady();
      await messages.close();
      await loop;
      await rebuilding;
    },
  };
}
