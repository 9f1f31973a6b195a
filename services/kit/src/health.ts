/**
 * The standard grpc.health.v1.Health service, served by every Toolport service so Kubernetes gRPC
 * probes and any gRPC client can check it. "" is the whole process; each gRPC service of the
 * process is also listed under its full name.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Health, HealthCheckResponse_ServingStatus as Status } from "@toolport/proto/grpc/health/v1/health_pb";

export { Status as ServingStatus };

export class HealthState {
  private readonly statuses = new Map<string, Status>();
  private readonly watchers = new Set<() => void>();

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

  implementation(): ServiceImpl<typeof Health> {
    const state = this;
    return {
      check(request) {
        const status = state.get(request.service);
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
