/**
 * How proto values read in our JSON (proto/README.md): an enum value is its name without the enum's
 * prefix, lower-cased (`READINESS_NEEDS_CREDENTIAL` -> "needs_credential"), and UNSPECIFIED is null;
 * a timestamp is ISO 8601 with milliseconds, or null when absent.
 */
import type { DescEnum } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

export function enumName(desc: DescEnum, value: number): string | null {
  if (value === 0) return null;
  const found = desc.value[value];
  return found ? found.localName.toLowerCase() : null;
}

export function isoTime(t: Timestamp | undefined): string | null {
  return t ? timestampDate(t).toISOString() : null;
}
