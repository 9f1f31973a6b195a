/** Time zones through Intl (the IANA database Node ships); no clock reads here: callers pass the instant. */
import { BuiltinInputError } from "../types.js";

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatter for `timeZone`, or a BuiltinInputError naming the field when Intl does not know the zone. */
function formatterFor(timeZone: string, field: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter) return formatter;
  try {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      weekday: "long",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
  } catch {
    throw new BuiltinInputError(
      `${field}: unknown time zone "${timeZone}"; use an IANA name such as "Europe/Paris", "America/New_York" or "UTC"`,
    );
  }
  if (formatters.size < 1000) formatters.set(timeZone, formatter);
  return formatter;
}

export function checkTimeZone(timeZone: string, field: string): string {
  return formatterFor(timeZone, field).resolvedOptions().timeZone;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: string;
}

function wallClock(instant: Date, timeZone: string, field: string): WallClock {
  const parts = Object.fromEntries(
    formatterFor(timeZone, field)
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: parts.weekday!,
  };
}

/** Minutes east of UTC that `timeZone` is at `instant`. */
export function offsetMinutes(instant: Date, timeZone: string, field = "timezone"): number {
  const w = wallClock(instant, timeZone, field);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, "0");

export function formatOffset(minutes: number): string {
  return `${minutes < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** Everything the time tools report about one instant in one zone. */
export function describeInstant(instant: Date, timeZone: string, field = "timezone") {
  const zone = checkTimeZone(timeZone, field);
  const w = wallClock(instant, zone, field);
  const offset = offsetMinutes(instant, zone, field);
  const date = `${w.year < 0 ? "-" : ""}${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;
  const time = `${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
  return {
    iso: `${date}T${time}${formatOffset(offset)}`,
    unix: Math.floor(instant.getTime() / 1000),
    unix_ms: instant.getTime(),
    timezone: zone,
    date,
    time,
    weekday: w.weekday,
    utc_offset: formatOffset(offset),
  };
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An instant from an ISO 8601 timestamp or unix seconds. A timestamp without an offset is wall-clock time in
 * `fromZone` (resolved to the earlier instant when a clock change repeats the hour).
 */
export function parseInstant(input: string | number, fromZone: string): Date {
  if (typeof input === "number") {
    const date = new Date(input * 1000);
    if (Number.isNaN(date.getTime())) throw new BuiltinInputError("timestamp: unix seconds out of range");
    return date;
  }
  const text = input.trim();
  if (/^-?\d{1,12}(?:\.\d+)?$/.test(text)) return parseInstant(Number(text), fromZone);
  const m = ISO.exec(text);
  if (!m) {
    throw new BuiltinInputError(
      `timestamp: "${input.slice(0, 40)}" is not ISO 8601 (e.g. "2024-03-10T14:30:00Z", "2024-03-10 14:30") nor unix seconds`,
    );
  }
  const [, y, mo, d, h = "0", mi = "0", s = "0", fraction = "", zone] = m;
  const fields = [
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    Number(fraction.slice(0, 3).padEnd(3, "0")),
  ] as const;
  const wall = Date.UTC(...fields);
  const check = new Date(wall);
  if (
    check.getUTCMonth() !== fields[1] ||
    check.getUTCDate() !== fields[2] ||
    fields[3] > 23 ||
    fields[4] > 59 ||
    fields[5] > 59
  ) {
    throw new BuiltinInputError(`timestamp: "${input}" is not a real date and time`);
  }
  if (zone !== undefined) {
    if (zone.toUpperCase() === "Z") return new Date(wall);
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const minutes = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
    return new Date(wall - minutes * 60_000);
  }
  // Wall time in fromZone: guess with the offset at that moment, then correct once for a clock change.
  checkTimeZone(fromZone, "from_timezone");
  let guess = wall - offsetMinutes(new Date(wall), fromZone, "from_timezone") * 60_000;
  guess = wall - offsetMinutes(new Date(guess), fromZone, "from_timezone") * 60_000;
  return new Date(guess);
}
