/**
 * The string formats the description uses, for validating against it with ajv (which knows none by
 * itself): the examples test, and the end-to-end harness's check of every reply.
 */
import type { Ajv } from "ajv";

/** RFC 3339: a date-time with a zone (`Z` or an offset); fractional seconds optional. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** RFC 3339 full-date: YYYY-MM-DD, a real day. */
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

export function addDescriptionFormats(ajv: Pick<Ajv, "addFormat">): void {
  ajv.addFormat("date-time", { type: "string", validate: (s: string) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)) });
  ajv.addFormat("date", {
    type: "string",
    validate: (s: string) => DATE.test(s) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
  });
  ajv.addFormat("uuid", { type: "string", validate: (s: string) => UUID.test(s) });
  ajv.addFormat("uri", { type: "string", validate: (s: string) => URL.canParse(s) });
  ajv.addFormat("email", { type: "string", validate: (s: string) => EMAIL.test(s) });
}
