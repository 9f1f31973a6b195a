/**
 * The heap limit from the memory this process is given (@toolport/kit/memory: TOOLPORT_MEMORY_MB, else
 * the cgroup's limit): V8 takes its limit only at start, so when one is known and none was chosen on
 * the command line or in NODE_OPTIONS, this process starts Toolport again as its child with
 * `--max-old-space-size` (three quarters of the memory; the rest is for buffers, worker threads and
 * native memory), passes the signals it gets on to it (SIGTERM still drains) and ends as the child ends:
 * the same exit code, or the same signal. With no limit known Toolport runs here, with Node's own sizing.
 * An out-of-memory crash is then one the launcher (deploy/local) or Kubernetes restarts, and the heap
 * watch (@toolport/kit/heap-watch) warns before it.
 */
import { spawn } from "node:child_process";
import os from "node:os";
import { heapLimitGiven, heapLimitMb, memoryBudget } from "@toolport/kit/memory";

/** Set in the child: its heap was sized (the value says by what), so it does not re-execute again. */
const SIZED = "TOOLPORT_HEAP_SIZED_BY";
const FORWARDED: NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP", "SIGUSR2"];

export async function sizeHeapThenRun(run: () => Promise<unknown>): Promise<void> {
  let budget: ReturnType<typeof memoryBudget>;
  try {
    budget = process.env[SIZED] || heapLimitGiven() ? undefined : memoryBudget();
  } catch (err) {
    process.stderr.write(`toolport: ${(err as Error).message}\n`);
    process.exit(2);
  }
  if (!budget) {
    await run();
    return;
  }
  const mb = heapLimitMb(budget);
  const child = spawn(process.execPath, [...process.execArgv, `--max-old-space-size=${mb}`, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, [SIZED]: `${budget.source} (${Math.round(budget.bytes / (1024 * 1024))} MiB)` },
  });
  for (const signal of FORWARDED) process.on(signal, () => child.kill(signal));
  child.on("error", (err) => {
    process.stderr.write(`toolport: could not start with --max-old-space-size=${mb}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      for (const s of FORWARDED) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      // As a container's PID 1 a signal without a handler does nothing: exit as a shell reports it.
      process.exit(128 + (os.constants.signals[signal] ?? 0));
    }
    process.exit(code ?? 1);
  });
}
