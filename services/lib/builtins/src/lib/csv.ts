/**
 * RFC 4180 CSV: fields separated by a one-character delimiter, records by CRLF or LF (or CR), fields that
 * contain the delimiter, quotes or line breaks enclosed in double quotes, a quote inside written twice.
 * One pass, linear in the input. Hand-written (not csv-parse) to report the line and column of the first
 * problem in words a caller can act on, and to stop at the row and column caps.
 */
import { BuiltinInputError } from "../types.js";

export const MAX_COLUMNS = 1_000;

export interface CsvOptions {
  delimiter: string;
  maxRows: number;
}

export function parseCsv(text: string, { delimiter, maxRows }: CsvOptions): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false; // inside a quoted field
  let wasQuoted = false; // the current field was quoted (only a delimiter or line end may follow the closing quote)
  let line = 1;
  let column = 1;
  const fail = (why: string): never => {
    throw new BuiltinInputError(`csv: ${why} at line ${line}, column ${column}`);
  };
  const endField = () => {
    row.push(field);
    if (row.length > MAX_COLUMNS) fail(`more than ${MAX_COLUMNS} columns`);
    field = "";
    wasQuoted = false;
  };
  const endRow = () => {
    endField();
    // A line with nothing on it is skipped, not read as a row of one empty field.
    if (!(row.length === 1 && row[0] === "")) rows.push(row);
    if (rows.length > maxRows) fail(`more than ${maxRows} rows; raise max_rows (up to its limit) or send fewer rows`);
    row = [];
  };

  let i = 0;
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a UTF-8 byte-order mark is not data
  for (i = start; i < text.length; i++, column++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
          column++;
        } else quoted = false;
      } else {
        if (c === "\n") {
          line++;
          column = 0;
        }
        field += c;
      }
    } else if (c === delimiter) endField();
    else if (c === "\n" || c === "\r") {
      endRow();
      if (c === "\r" && text[i + 1] === "\n") i++;
      line++;
      column = 0;
    } else if (wasQuoted) fail("text after a closing quote (a quote inside a quoted field is written twice)");
    else if (c === '"') {
      if (field !== "") fail("a quote inside an unquoted field (enclose the field in quotes and double the quote)");
      quoted = true;
      wasQuoted = true;
    } else field += c;
  }
  if (quoted) fail("a quoted field is never closed");
  if (field !== "" || wasQuoted || row.length > 0) endRow();
  return rows;
}
