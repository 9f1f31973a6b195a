/**
 * Async batches (StartBatch / GetBatch / CancelBatch): the calls of POST /v1/tools/call/batch with
 * `Prefer: respond-async`, recorded in Postgres and run in the background of this process.
 *
 * Same path as CallBatch: every element goes through `Executor.callElement` (permissions, caps,
 * consent, prices, idempotency, settlement, events), concurrently, inside the request scope of the
 * submission (its request id and principal, so calls to identity, catalog and billing carry the caller
 * as authenticated then; each call's allowance check still re-checks the key). A refusal of the caller
 * as a whole (the key revoked meanwhile, a role demoted) ends the batch `failed` with that refusal, as
 * CallBatch answers it, once every element settled. Each element's outcome is stored as it ends.
 *
 * Restarts: the process running a batch holds a lease on it (EXECUTION_BATCH_LEASE_MS), renewed while it
 * runs. An element is marked `started` before the executor gets it, and only a call that made that
 * transition runs. When a lease ran out (the process died), another round (here or on another replica)
 * takes the batch over: a `started` element without its outcome may or may not have reached its upstream,
 * so it is never run again and ends as a failed element `batch_interrupted` (its execution, if it was
 * recorded, stays readable under its own id); `pending` elements run then. Nothing runs twice.
 *
 * Cancel: pending elements end `batch_cancelled` without running; running calls finish; the batch reads
 * `cancelled`. Retention: batches are deleted EXECUTION_BATCH_RETENTION_MS after they ended.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { runInScope } from "@toolport/kit/context";
import type { DomainError } from "@toolport/kit/errors";
import type { Logger } from "@toolport/kit/logger";
import { type Principal, PrincipalSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { CallResultSchema } from "@toolport/proto/toolport/execution/v1/execution_results_pb";
import type { CallOutcome, CallRequest, Executor } from "../domain/executor.js";
import { refusalOutcome } from "../domain/executor.js";
import { callerFromPrincipal, outcomeToProto } from "../handlers/convert.js";
import type { BatchRow, PgBatchStore } from "../store/batches-store.js";

export interface BatchRunnerOptions {
  executor: Executor;
  store: PgBatchStore;
  log: Logger;
  /** How long a batch stays this process's without a renewal. */
  leaseMs: number;
  /** How long an ended batch stays readable. */
  retentionMs: number;
}

const encode = (outcome: CallOutcome) => toBinary(CallResultSchema, outcomeToProto(outcome));

/** The element of a call that never ran because the batch was cancelled first. */
export const cancelledElement = (call: CallRequest) =>
  encode(
    refusalOutcome(call.toolId, {
      reason: "batch_cancelled",
      message: "the batch was cancelled before this call started; it did not run",
      details: {},
    }),
  );

/** The element of a call whose process stopped while it ran: it may or may not have reached its upstream. */
export const interruptedElement = (call: CallRequest) =>
  encode(
    refusalOutcome(call.toolId, {
      reason: "batch_interrupted",
      message:
        "the execution service restarted while this call ran: it may or may not have reached the tool, and it was not run again. Check before repeating it",
      details: {},
    }),
  );

/** How long after a lease's end the upkeep looks, so that the lease has run out by Postgres's clock. */
const LEASE_END_MARGIN_MS = 20;

export class BatchRunner {
  /** Batches running in this process, by id. */
  private readonly running = new Map<string, Promise<void>>();
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(private readonly o: BatchRunnerOptions) {}

  /** Records the batch and starts it; answers the record at once. */
  async start(principal: Principal, requestId: string, calls: CallRequest[]): Promise<BatchRow> {
    const caller = callerFromPrincipal(principal);
    // A caller who may not call at all is refused now, as CallBatch refuses it.
    if (caller.callRefusal) throw caller.callRefusal;
    const row = await this.o.store.create({
      id: randomUUID(),
      owner: { accountId: caller.accountId, organizationId: caller.organizationId, keyId: caller.keyId },
      principal: toBinary(PrincipalSchema, principal),
      requestId,
      calls,
      holder: this.holder,
      leaseMs: this.o.leaseMs,
    });
    this.launch(
      row.id,
      principal,
      requestId,
      calls.map((call, position) => ({ position, call })),
    );
    return row;
  }

  private launch(id: string, principal: Principal, requestId: string, elements: { position: number; call: CallRequest }[]): void {
    const run = this.run(id, principal, requestId, elements)
      .catch((err) => this.o.log.error({ err, batch_id: id }, "batch stopped; it is taken over when its lease runs out"))
      .finally(() => this.running.delete(id));
    this.running.set(id, run);
    this.nudgeUpkeep?.();
  }

  private run(
    id: string,
    principal: Principal,
    requestId: string,
    elements: { position: number; call: CallRequest }[],
  ): Promise<void> {
    const { executor, store } = this.o;
    return runInScope({ requestId, principal }, async () => {
      const caller = callerFromPrincipal(principal);
      const settled = await Promise.allSettled(
        elements.map(async ({ position, call }) => {
          if (!(await store.startElement(id, position))) return;
          const outcome = await executor.callElement(caller, call);
          await store.finishElement(id, position, encode(outcome));
        }),
      );
      const rejected = settled.filter((s): s is PromiseRejectedResult => s.status === "rejected").map((s) => s.reason);
      const refusal = rejected.find((e) => e instanceof Error && e.name === "DomainError") as DomainError | undefined;
      if (refusal) {
        await store.fail(id, {
          code: refusal.code,
          reason: refusal.reason,
          message: refusal.message,
          details: refusal.details,
          ...(refusal.detail !== undefined ? { detail: refusal.detail } : {}),
        });
        return;
      }
      // Anything else (Postgres unreachable while storing an outcome) leaves the batch to a takeover.
      if (rejected.length > 0) throw rejected[0];
      await store.complete(id);
    });
  }

  /** Set while the upkeep runs: a batch launched here needs its lease renewed within a third of it. */
  private nudgeUpkeep?: () => void;

  /** How often this process renews the leases of the batches it runs: a third of a lease. */
  private get renewEveryMs(): number {
    return Math.max(100, Math.floor(this.o.leaseMs / 3));
  }

  /**
   * One round of upkeep: renew this process's leases, take over batches whose lease ran out, prune
   * ended ones past retention. Answers how long until the next round is needed: a third of a lease while
   * this process renews leases or has just taken batches over; otherwise until the first lease of a
   * working batch runs out, and at most a lease. No batch can be taken over sooner: one that another
   * replica starts after this round's look holds a full lease from its start.
   */
  async tick(): Promise<number> {
    const { store, log, leaseMs } = this.o;
    await store.renew([...this.running.keys()], this.holder, leaseMs);
    let waitMs = leaseMs;
    const leaseEndsInMs = await store.nextLeaseEndMs();
    if (leaseEndsInMs !== null && leaseEndsInMs <= 0) {
      for (const batch of await store.takeOver(this.holder, leaseMs, interruptedElement)) {
        log.warn({ batch_id: batch.id, resumed: batch.elements.length }, "took over a batch whose lease ran out");
        const principal = fromBinary(PrincipalSchema, batch.principal);
        if (batch.elements.length === 0) await store.complete(batch.id);
        else this.launch(batch.id, principal, batch.requestId, batch.elements);
      }
      // More may have run out than one round takes (10): look again soon.
      waitMs = this.renewEveryMs;
    } else if (leaseEndsInMs !== null) {
      // Just past the lease's end, so that `lease_until < now()` holds when we look.
      waitMs = Math.min(leaseMs, Math.ceil(leaseEndsInMs) + LEASE_END_MARGIN_MS);
    }
    const pruned = await store.prune(this.o.retentionMs);
    if (pruned > 0) log.info({ pruned }, "pruned ended batches");
    return waitMs;
  }

  /**
   * Runs `tick` now and then when it says (see there); a batch launched here brings the next round
   * within a third of a lease. stop() lets the batches running here end, for at most `graceMs`
   * (SHUTDOWN_GRACE_MS): what is still running then is cut with the process, and taken over once its
   * lease runs out.
   */
  startUpkeep(graceMs: number): { stop(): Promise<void> } {
    let round: Promise<void> | undefined;
    let timer: NodeJS.Timeout | undefined;
    let dueAt = 0;
    let stopped = false;
    const schedule = (ms: number) => {
      clearTimeout(timer);
      if (stopped) return;
      // Leases of batches running here (launched during the round too) are renewed every third.
      const wait = this.running.size > 0 ? Math.min(ms, this.renewEveryMs) : ms;
      dueAt = Date.now() + wait;
      timer = setTimeout(tick, wait);
      timer.unref();
    };
    const tick = () => {
      round ??= this.tick()
        .catch((err) => {
          this.o.log.warn({ err }, "batch upkeep failed");
          return this.renewEveryMs;
        })
        .then((ms) => {
          round = undefined;
          schedule(ms);
        });
    };
    this.nudgeUpkeep = () => {
      if (!round && dueAt - Date.now() > this.renewEveryMs) schedule(this.renewEveryMs);
    };
    tick();
    return {
      stop: async () => {
        stopped = true;
        this.nudgeUpkeep = undefined;
        clearTimeout(timer);
        await round;
        clearTimeout(timer);
        let grace: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...this.running.values()]),
          new Promise((resolve) => {
            grace = setTimeout(resolve, graceMs);
          }),
        ]);
        clearTimeout(grace);
      },
    };
  }
}
