/**
 * What a key with a pair of allow-lists could call (POST /v1/api-keys/callable-tools), for the person
 * picking them. The meaning is execution's (domain/executor.ts there): a tool passes when it is in
 * allowed_tools (or that list is absent) AND its service is in allowed_services (or that list is absent).
 */

import type { Caller } from "./access.js";
import type { CatalogDeps } from "./deps.js";
import type { CallableTool } from "./ports.js";

export const CALLABLE_DEFAULT_LIMIT = 20;

export interface Callable {
  count: bigint;
  tools: CallableTool[];
  warnings: string[];
}

export async function listCallableTools(
  deps: Pick<CatalogDeps, "store">,
  caller: Caller,
  input: { services: string[] | null; tools: string[] | null; limit: number | undefined },
): Promise<Callable> {
  const limit = Math.min(100, Math.max(1, input.limit ?? CALLABLE_DEFAULT_LIMIT));
  const found = await deps.store.callableTools(caller, input.services, input.tools, limit);
  return { ...found, warnings: await warningsFor(deps, caller, input.services, input.tools) };
}

/** Why the lists let less through than they seem to: each listed tool outside the listed services, and so on. */
async function warningsFor(
  deps: Pick<CatalogDeps, "store">,
  caller: Caller,
  services: string[] | null,
  tools: string[] | null,
): Promise<string[]> {
  const warnings: string[] = [];
  if (services?.length === 0) warnings.push("allowed_services is an empty list: the key can call no tool");
  if (tools?.length === 0) warnings.push("allowed_tools is an empty list: the key can call no tool");
  if (!services?.length || !tools?.length) return warnings;
  const listed = await deps.store.toolsWithServices(caller, tools);
  const allowedServices = new Set(services.map((id) => id.toLowerCase()));
  const servicesWithTools = new Set<string>();
  for (const tool of listed) {
    if (allowedServices.has(tool.serviceId.toLowerCase())) servicesWithTools.add(tool.serviceId.toLowerCase());
    else {
      warnings.push(
        `${tool.name} is in allowed_tools but its service ${tool.serviceName} is not in allowed_services: the key cannot call it`,
      );
    }
  }
  const names = await deps.store.serviceNamesById(caller, services);
  for (const id of services) {
    // A service the caller does not see is passed over like one that does not exist: nothing to say.
    const name = names.get(id.toLowerCase());
    if (name !== undefined && !servicesWithTools.has(id.toLowerCase())) {
      warnings.push(`${name} is in allowed_services but none of its tools is in allowed_tools: none of them is callable`);
    }
  }
  return warnings;
}
