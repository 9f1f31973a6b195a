/**
 * The catalog as content's domain asks it (CatalogPort, domain/ports.ts), over catalog's RPCs with the
 * caller's principal: a skill's service, a workflow's tool. A refusal is an answer (not a service or tool the caller can see), never "try
 * again": only the catalog failing to answer (down, deadline, internal error) is 503 catalog_unavailable.
 */
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { readError, unavailable } from "@toolport/kit/errors";
import type { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { CatalogPort } from "../domain/ports.js";

/** Codes by which the catalog says it could not answer, as opposed to answering no. */
const OUTAGE = new Set([Code.Unavailable, Code.DeadlineExceeded, Code.Internal, Code.Unknown, Code.ResourceExhausted]);

/**
 * The catalog's refusal as content reads it (its code and reason), or a 503 catalog_unavailable thrown
 * when the catalog could not answer. `what` ends the 503's message ("service_id", "the workflow's tools").
 */
export function catalogRefusal(err: unknown, what: string): { code: Code; reason: string } {
  if (!(err instanceof ConnectError)) throw err;
  // readError reads a peer cut mid-call (Aborted/Canceled without the service's own detail) as Unavailable.
  const received = readError(err);
  if (OUTAGE.has(received.code)) {
    throw unavailable("catalog_unavailable", `the catalog could not be asked about ${what}; try again`, { cause: err });
  }
  return { code: received.code, reason: received.reason };
}

/**
 * Whether the caller can see a service, from catalog's GetService. GetService checks visibility first (a
 * service the caller cannot see, or none, is NotFound) and ownership second: a service of another
 * organization that the caller can see (a public one, say) but not manage is PermissionDenied
 * `not_service_owner`, still a service the caller can see. Any other refusal: not one the caller can see.
 */
export async function serviceVisible(getService: () => Promise<unknown>): Promise<boolean> {
  try {
    await getService();
    return true;
  } catch (err) {
    const refusal = catalogRefusal(err, "service_id");
    return refusal.code === Code.PermissionDenied && refusal.reason === "not_service_owner";
  }
}

/**
 * Catalog's refusal for a tool (one the caller cannot see, or none): no tool. The catalog failing to
 * answer is 503 catalog_unavailable.
 */
export function toolLookupFailed(err: unknown): null {
  catalogRefusal(err, "the workflow's tools");
  return null;
}

/** CatalogPort over catalog's client (called in the caller's scope, so with the caller's principal). */
export class CatalogClient implements CatalogPort {
  constructor(private readonly client: Client<typeof CatalogService>) {}

  serviceVisible(serviceId: string): Promise<boolean> {
    return serviceVisible(() => this.client.getService({ serviceId }));
  }

  async visibleTool(toolId: string): Promise<{ id: string; name: string } | null> {
    try {
      const { tool } = await this.client.getTool({ toolId });
      return tool ? { id: tool.id, name: tool.name } : null;
    } catch (err) {
      return toolLookupFailed(err);
    }
  }
}
