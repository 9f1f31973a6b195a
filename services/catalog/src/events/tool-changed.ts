/**
 * toolport.catalog.tool.changed: written to the outbox in the transaction of every tool create, edit,
 * (de)activation, deprecation and delete (a service edit writes one per tool), and consumed by every
 * catalog replica to keep its own search index in step (see index-consumer.ts).
 */

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { currentRequestId } from "@toolport/kit/context";
import { enqueueEvents, Subjects } from "@toolport/kit/events";
import { timeOrderedUuid } from "@toolport/kit/ids";
import type { PoolClient } from "@toolport/kit/pg";
import { CatalogToolChangedSchema, ChangeKind } from "@toolport/proto/toolport/events/v1/events_pb";
import type { ChangedTool } from "../domain/ports.js";

/** One event per tool, written in one statement (kit enqueueEvents). */
export async function enqueueToolChanged(client: PoolClient, tools: ChangedTool[], kind: "upsert" | "delete"): Promise<void> {
  const now = new Date();
  const occurredAt = timestampFromDate(now);
  const requestId = currentRequestId() ?? "";
  await enqueueEvents(
    client,
    Subjects.catalogToolChanged,
    CatalogToolChangedSchema,
    tools.map((tool) => {
      const eventId = timeOrderedUuid();
      return {
        eventId,
        message: create(CatalogToolChangedSchema, {
          eventId,
          occurredAt,
          requestId,
          toolId: tool.id,
          serviceId: tool.serviceId,
          kind: kind === "upsert" ? ChangeKind.UPSERT : ChangeKind.DELETE,
          version: tool.revision,
          updatedAt: timestampFromDate(tool.updatedAt ?? now),
        }),
      };
    }),
  );
}
