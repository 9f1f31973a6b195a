/**
 * Group commit: writes submitted while a write is in flight go together in the next one, so N concurrent
 * callers cost one statement (and one WAL flush) instead of N. A caller's promise settles when the write
 * holding its item has committed, so whatever it answers afterwards is already durable and readable.
 * Idle, an item is written at once: no timer, no added latency.
 *
 * If a write of several items fails, each is retried alone, so one bad item fails only its own caller.
 * A write may answer each item (`R`, in the items' order): its caller's promise resolves with it.
 */
export class GroupCommit<T, R = void> {
  private queue: { item: T; resolve: (result: R) => void; reject: (err: unknown) => void }[] = [];
  private writing = false;

  constructor(
    // biome-ignore lint/suspicious/noConfusingVoidType: a write with nothing to answer returns nothing
    private readonly write: (items: T[]) => Promise<R[] | void>,
    private readonly maxBatch = 64,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.write(batch.map((b) => b.item));
          for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results ? results[i]! : (undefined as R));
        } catch (err) {
          if (batch.length === 1) {
            batch[0]?.reject(err);
            continue;
          }
          for (const b of batch) {
            try {
              const results = await this.write([b.item]);
              b.resolve(results ? results[0]! : (undefined as R));
            } catch (alone) {
              b.reject(alone);
            }
          }
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
