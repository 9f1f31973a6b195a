/**
 * Deprecation (spec "Versioning" 4): a deprecated tool stays listed with its flag and message until its
 * sunset date; once the date has passed it leaves search and lists, and calls to it are refused (404).
 */
import type { ToolRecord } from "./model.js";

export function isSunset(tool: Pick<ToolRecord, "sunsetDate">, now: Date = new Date()): boolean {
  return tool.sunsetDate !== null && tool.sunsetDate.getTime() <= now.getTime();
}
