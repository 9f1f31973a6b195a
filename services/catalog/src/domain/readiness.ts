/**
 * Readiness per caller (spec "Readiness for an anonymous caller" and the rules):
 * - a retired service or an inactive tool is `unavailable` to everyone;
 * - a signed-in caller whose key may not call the tool (allow-lists) gets `unavailable`;
 * - a tool that needs no credential is `ready`;
 * - otherwise anonymous callers get `needs_credential`, signed-in callers `ready` when a credential is
 *   connected for them or their organization, else `needs_credential` with a configuration URL.
 */
import type { Caller } from "./access.js";
import type { Readiness, ServiceRecord, ToolRecord } from "./model.js";

export interface ReadinessGap {
  kind: "credential" | "key_permission" | "tool_inactive" | "service_retired";
  message: string;
  configurationUrl?: string;
}

export function needsCredential(tool: ToolRecord): boolean {
  return tool.security.length > 0;
}

export function keyMayCall(caller: Caller, tool: ToolRecord): boolean {
  if (caller.allowedServices && !caller.allowedServices.includes(tool.serviceId)) return false;
  if (caller.allowedTools && !caller.allowedTools.includes(tool.id)) return false;
  return true;
}

export interface ReadinessInput {
  tool: ToolRecord;
  service: ServiceRecord;
  caller: Caller | null;
  /** Whether a credential is connected for the caller (or its organization) on the tool's service. */
  hasCredential: boolean;
  configurationUrl: string;
}

export function readinessGaps(input: ReadinessInput): ReadinessGap[] {
  const { tool, service, caller } = input;
  const gaps: ReadinessGap[] = [];
  if (service.status === "retired") gaps.push({ kind: "service_retired", message: `the service ${service.name} is retired` });
  if (tool.status === "inactive") gaps.push({ kind: "tool_inactive", message: "the tool is deactivated by its publisher" });
  if (caller && !keyMayCall(caller, tool)) {
    gaps.push({ kind: "key_permission", message: "this API key's allowed_services or allowed_tools do not include this tool" });
  }
  if (needsCredential(tool) && !input.hasCredential) {
    gaps.push({
      kind: "credential",
      message: caller
        ? `connect a credential for ${service.name} at ${input.configurationUrl} (or PUT /v1/services/${service.id}/credentials)`
        : `sign in and connect a credential for ${service.name}`,
      configurationUrl: input.configurationUrl,
    });
  }
  return gaps;
}

export function readinessOf(gaps: ReadinessGap[]): Readiness {
  if (gaps.some((g) => g.kind !== "credential")) return "unavailable";
  return gaps.length > 0 ? "needs_credential" : "ready";
}
