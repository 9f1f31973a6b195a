/**
 * How much memory this process is given, and the heap limit Toolport sets from it (the host re-execs
 * itself with `--max-old-space-size`, services/host/src/heap-limit.ts). Node sizes its heap from the
 * memory it sees, which in a container can be the whole machine's or, under a cgroup limit, nearly all of
 * the limit: either way nothing is left for buffers, worker threads and native memory, and the kernel
 * kills the process before V8 ever collects hard. Node built-ins only: read before anything else loads.
 */
import { readFileSync } from "node:fs";

/** Above this a cgroup v1 limit means "no limit" (the kernel writes a page-rounded 2^63 - 1). */
const NO_LIMIT = 2 ** 60;
/** The share of the memory given that the V8 heap may use; the rest is for everything else of the process. */
export const HEAP_SHARE = 0.75;

export interface MemoryBudget {
  bytes: number;
  /** Where it comes from: the setting, or the cgroup's limit. */
  source: "TOOLPORT_MEMORY_MB" | "cgroup";
}

function readNumber(file: string): number | undefined {
  try {
    const text = readFileSync(file, "utf8").trim();
    if (text === "max") return undefined;
    const n = Number(text);
    return Number.isFinite(n) && n > 0 && n < NO_LIMIT ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * TOOLPORT_MEMORY_MB when set (an operator's figure wins), else the cgroup's memory limit (v2
 * `memory.max`, v1 `memory.limit_in_bytes`), else undefined: no limit known, Node's own sizing stays.
 * Throws on a TOOLPORT_MEMORY_MB that is not a whole number of MiB of at least 64.
 */
export function memoryBudget(env: NodeJS.ProcessEnv = process.env, cgroupRoot = "/sys/fs/cgroup"): MemoryBudget | undefined {
  const setting = env.TOOLPORT_MEMORY_MB;
  if (setting !== undefined && setting !== "") {
    const mb = Number(setting);
    if (!Number.isInteger(mb) || mb < 64) {
      throw Object.assign(new Error(`TOOLPORT_MEMORY_MB must be a whole number of MiB, at least 64; got "${setting}"`), {
        name: "ConfigError",
      });
    }
    return { bytes: mb * 1024 * 1024, source: "TOOLPORT_MEMORY_MB" };
  }
  const bytes = readNumber(`${cgroupRoot}/memory.max`) ?? readNumber(`${cgroupRoot}/memory/memory.limit_in_bytes`);
  return bytes === undefined ? undefined : { bytes, source: "cgroup" };
}

/** The heap limit, in MiB, for a budget: HEAP_SHARE of it. */
export function heapLimitMb(budget: MemoryBudget): number {
  return Math.max(32, Math.floor((budget.bytes * HEAP_SHARE) / (1024 * 1024)));
}

/** Whether the heap limit was chosen already: a --max-old-space-size flag on the command line or in NODE_OPTIONS. */
export function heapLimitGiven(execArgv: string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  const flag = /--max[-_]old[-_]space[-_]size/;
  return execArgv.some((a) => flag.test(a)) || flag.test(env.NODE_OPTIONS ?? "");
}
