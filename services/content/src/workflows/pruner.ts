/**
 * Workflow run retention: a run that ended (completed or failed) more than CONTENT_WORKFLOW_RETENTION_DAYS
 * ago is deleted with its steps (workflow_run_steps cascades), every CONTENT_WORKFLOW_PRUNE_INTERVAL_MS.
 * Deletes go in batches of CONTENT_WORKFLOW_PRUNE_BATCH runs, each its own short transaction, so a
 * backlog of millions never holds locks or WAL for long; the rows of a batch are taken with SKIP LOCKED,
 * so replicas pruning at once divide the work instead of waiting on each other. Running runs and runs
 * awaiting confirmation are never touched. Retention 0 keeps everything.
 */
import type { Logger } from "@toolport/kit/logger";
import type { Pool } from "@toolport/kit/pg";

export interface WorkflowPrunerOptions {
  pool: Pool;
  log: Logger;
  retentionDays: number;
  intervalMs: number;
  batchSize: number;
}

export class WorkflowPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: WorkflowPrunerOptions) {}

  start(): void {
    if (this.o.retentionDays <= 0) return;
    this.timer = setInterval(() => {
      this.running ??= this.pruneAll()
        .then(
          (deleted) => {
            if (deleted > 0) this.o.log.info({ deleted, retention_days: this.o.retentionDays }, "pruned finished workflow runs");
          },
          (err) => this.o.log.warn({ err }, "pruning finished workflow runs failed; retrying on the next interval"),
        )
        .finally(() => {
          this.running = undefined;
        });
    }, this.o.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Deletes batch after batch until one comes back short; the number of runs deleted. */
  async pruneAll(): Promise<number> {
    let total = 0;
    while (!this.stopped) {
      const deleted = await this.pruneBatch();
      total += deleted;
      if (deleted < this.o.batchSize) break;
    }
    return total;
  }

  /** One batch: at most batchSize of the oldest runs past the retention, their steps with them. */
  async pruneBatch(): Promise<number> {
    const { rowCount } = await this.o.pool.query(
      `DELETE FROM workflow_runs WHERE id IN (
         SELECT id FROM workflow_runs
          WHERE status IN ('completed', 'failed') AND finished_at < now() - make_interval(days => $1)
          ORDER BY finished_at
          LIMIT $2
          FOR UPDATE SKIP LOCKED)`,
      [this.o.retentionDays, this.o.batchSize],
    );
    return rowCount ?? 0;
  }
}
