/** The checks every use case makes on what it is given: a signed-in caller, a field from a fixed set. */
import { invalidArgument, unauthenticated } from "@toolport/kit/errors";
import type { Caller } from "./access.js";

export function requireCaller(caller: Caller | null): Caller {
  if (!caller) throw unauthenticated("unauthenticated", "this operation needs an API key or JWT");
  return caller;
}

/** A field that must be one of `allowed`; absent gives undefined, anything else is a 400 naming it. */
export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], field: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw invalidArgument(`invalid_${field}`, `${field} must be one of ${allowed.join(", ")}`, {
      details: { field, allowed: [...allowed] },
    });
  }
  return value as T;
}
