/**
 * A tool as one caller sees it: readiness (with what is missing), the configuration URL and the
 * reliability block, computed for a whole list at once (one credential query, one aggregate query).
 */

import type { Caller } from "./access.js";
import type { Readiness, ReliabilityBlock, ServiceRecord, ToolRecord, ToolWithService } from "./model.js";
import type { CredentialStore, ExecutionStats, ReliabilityAggregate } from "./ports.js";
import { needsCredential, type ReadinessGap, readinessGaps, readinessOf } from "./readiness.js";
import { reliabilityBlock, WINDOW_DAYS } from "./reliability.js";

export interface ToolView {
  tool: ToolRecord;
  service: ServiceRecord;
  readiness: Readiness;
  gaps: ReadinessGap[];
  configurationUrl: string;
  reliability: ReliabilityBlock | null;
}

export interface ViewContext {
  store: Pick<CredentialStore, "servicesWithCredential"> & Pick<ExecutionStats, "reliabilityAggregates">;
  /** Gateway address clients use, for configuration_url. */
  publicUrl: string;
}

/**
 * The console's connect page for the service (gateway/console, `/console/services/{id}/connect`): where a
 * person signs in and connects a credential. Programs use `PUT /v1/services/{id}/credentials`.
 */
export function configurationUrl(publicUrl: string, serviceId: string): string {
  return `${publicUrl.replace(/\/$/, "")}/console/services/${serviceId}/connect`;
}

export async function viewTools(
  ctx: ViewContext,
  pairs: ToolWithService[],
  caller: Caller | null,
  options: { reliability?: boolean } = {},
): Promise<ToolView[]> {
  if (pairs.length === 0) return [];
  // Both at once: two statements on two connections instead of one after the other.
  const [credentialServices, aggregates] = await Promise.all([
    caller
      ? ctx.store.servicesWithCredential(
          [...new Set(pairs.filter((p) => needsCredential(p.tool)).map((p) => p.service.id))],
          caller.accountId,
          caller.organizationId,
        )
      : new Set<string>(),
    options.reliability === false
      ? new Map<string, ReliabilityAggregate>()
      : ctx.store.reliabilityAggregates(
          pairs.map((p) => p.tool.id),
          WINDOW_DAYS,
        ),
  ]);
  const now = new Date();
  return pairs.map(({ tool, service }) => {
    const url = configurationUrl(ctx.publicUrl, service.id);
    const gaps = readinessGaps({
      tool,
      service,
      caller,
      hasCredential: credentialServices.has(service.id),
      configurationUrl: url,
    });
    return {
      tool,
      service,
      readiness: readinessOf(gaps),
      gaps,
      configurationUrl: url,
      reliability: reliabilityBlock(aggregates.get(tool.id), now),
    };
  });
}
