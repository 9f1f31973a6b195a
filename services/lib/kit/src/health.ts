/**
 * The standard grpc.health.v1.Health service, served by every Toolport service so Kubernetes gRPC
 * probes and any gRPC client can check it. "" is the whole process (liveness: cheap, checks nothing
 * else); each gRPC service of the process is also listed under its full name. Checked names
 * (`addCheck`) look now at what the process depends on: `toolport.readiness` (its database and, for a
 * role that consumes events, NATS; Kubernetes' readiness probe), `toolport.database`, `toolport.nats`.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Health, HealthCheckResponse_ServingStatus as Status } from "@toolport/proto/grpc/health/v1/health_pb";

export { Status as ServingStatus };

/** The names of the checks every service registers (service.ts). */
export const READINESS = "toolport.readiness";
export const DATABASE_CHECK = "toolport.database";
export const NATS_CHECK = "toolport.nats";

/** How long a check may take before it counts as failed (Kubernetes' probe waits 3 s). */
const CHECK_TIMEOUT_MS = 1_500;

/** True when `check` resolves true within the timeout; false when it fails, rejects or takes longer. */
async function passes(check: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check().catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

export class HealthState {
  private readonly statuses = new Map<string, Status>();
  private readonly watchers = new Set<() => void>();
  private readonly checks = new Map<string, () => Promise<boolean>>();

  constructor(services: string[]) {
    for (const name of ["", ...services]) this.statuses.set(name, Status.NOT_SERVING);
  }

  /** Sets every registered name at once (the process is either up or draining). */
  setAll(status: Status): void {
    for (const name of this.statuses.keys()) this.statuses.set(name, status);
    for (const notify of this.watchers) notify();
  }

  get(service: string): Status | undefined {
    return this.statuses.get(service);
  }

  /**
   * A name whose status is looked at when asked: SERVING while the process serves and `check` passes
   * (within 1.5 s), NOT_SERVING otherwise. Watching it gives the process's status.
   */
  addCheck(name: string, check: () => Promise<boolean>): void {
    this.checks.set(name, check);
    this.statuses.set(name, this.statuses.get("") ?? Status.NOT_SERVING);
  }

  /** The status of `service` now, running its check if it has one. */
  async checkNow(service: string): Promise<Status | undefined> {
    const status = this.get(service);
    const check = this.checks.get(service);
    if (status !== Status.SERVING || !check) return status;
    return (await passes(check)) ? Status.SERVING : Status.NOT_SERVING;
  }

  implementation(): ServiceImpl<typeof Health> {
    const state = this;
    return {
      async check(request) {
        const status = await state.checkNow(request.service);
        if (status === undefined) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
        return { status };
      },
      async *watch(request, context) {
        let last: Status | undefined;
        while (!context.signal.aborted) {
          const status = state.get(request.service) ?? Status.SERVICE_UNKNOWN;
          if (status !== last) {
            last = status;
            yield { status };
          }
          await new Promise<void>((resolve) => {
            const done = () => {
              state.watchers.delete(done);
              context.signal.removeEventListener("abort", done);
              resolve();
            };
            state.watchers.add(done);
            context.signal.addEventListener("abort", done);
          });
        }
      },
    };
  }
}
