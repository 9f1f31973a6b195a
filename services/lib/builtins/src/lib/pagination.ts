import { BuiltinInputError } from "../types.js";

/**
 * Opaque page cursors: base64url of "o:<offset>". Opaque so callers pass them back untouched rather than
 * computing offsets; a cursor that does not decode is a caller error.
 */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === "") return 0;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match)
    throw new BuiltinInputError("cursor: not a cursor from a previous page; pass next_cursor back unchanged, or omit it");
  return Number(match[1]);
}

/** One page of `rows` from the cursor's offset, and the cursor of the next page (null on the last). */
export function paginate<T>(rows: T[], limit: number, cursor: string | undefined): { page: T[]; next_cursor: string | null } {
  const offset = decodeCursor(cursor);
  const page = rows.slice(offset, offset + limit);
  const next = offset + limit;
  return { page, next_cursor: next < rows.length ? encodeCursor(next) : null };
}
