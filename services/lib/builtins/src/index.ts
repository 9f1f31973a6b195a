/**
 * @toolport/builtins: every built-in tool, definition and implementation in one place.
 *
 * - The catalog seeds its demo catalog from `builtinServices` (service and tool records: slug, name,
 *   description, tags, `inputSchema` as the tool's parameters, `output`, `tips`, `example` for the describe
 *   endpoint's example call), storing each tool's `handler` as its `internal_handler`.
 * - Execution runs an `internal` tool with `findBuiltin(internal_handler).run(input, { now })`, mapping a thrown
 *   `BuiltinInputError` to a caller error (400) and anything else to a platform failure.
 *
 * Tools do CPU work only: no network, filesystem or environment access; deterministic except the time and
 * UUID tools. Every input is bounded (string lengths, counts, sizes) so no call can burn the CPU.
 */
import { dataToolsService } from "./data-tools.js";
import { sampleStoreService } from "./sample-store.js";
import { textToolsService } from "./text-tools.js";
import type { BuiltinService, BuiltinTool } from "./types.js";

export { type BuiltinContext, BuiltinInputError, type BuiltinService, type BuiltinTool, type JsonSchema } from "./types.js";

/** The built-in services in display order: the demo store first, then the utilities. */
export const builtinServices: readonly BuiltinService[] = [sampleStoreService, textToolsService, dataToolsService];

const byHandler = new Map<string, BuiltinTool>(
  builtinServices.flatMap((service) => service.tools.map((tool) => [tool.handler, tool] as const)),
);

/** The built-in tool stored under `handler` (a tool's `internal_handler`), if there is one. */
export function findBuiltin(handler: string): BuiltinTool | undefined {
  return byHandler.get(handler);
}
