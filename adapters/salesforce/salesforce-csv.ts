/**
 * CSV as Bulk API 2.0 reads and writes it (comma-delimited, UTF-8; "Valid CSV Record Rows" in
 * Salesforce's Bulk API 2.0 guide [V]): a value holding a comma, a double quote, a line feed or a
 * carriage return is enclosed in double quotes with each double quote doubled; values are not
 * trimmed; an empty value is ignored on update and `#N/A` sets the field to null.
 */

/** What one CSV cell is written from. `null` clears the field (`#N/A`); `undefined` and `''` leave it unchanged on update. */
export type CsvValue = string | number | boolean | null | undefined;

/** Salesforce's null in Bulk API CSV [V: "To set a field value to null, use a field value of #N/A"]. */
export const CSV_NULL = '#N/A';

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell. Numbers are written as `String(n)` (no exponent below 1e21), booleans as `true`/`false`.
 * The text `#N/A` itself cannot be sent as a value: Salesforce reads it as null either way
 * [I: whether quoting it keeps it as text is not documented].
 */
export function csvCell(value: CsvValue): string {
  if (value === null) return CSV_NULL;
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line (without its line ending). */
export const csvLine = (cells: readonly CsvValue[]): string => cells.map(csvCell).join(',');

/** A whole CSV text: the header, then one line per row (`row[column]`), each ended by `lineEnding`. */
export function toCsv(columns: readonly string[], rows: ReadonlyArray<Readonly<Record<string, CsvValue>>>, lineEnding: '\n' | '\r\n' = '\n'): string {
  let out = csvLine(columns) + lineEnding;
  for (const row of rows) out += csvLine(columns.map((c) => row[c])) + lineEnding;
  return out;
}

/** A CSV text that does not parse: where, and why. */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    /** 1-based line of the text where the fault is. */
    readonly line: number,
  ) {
    super(`${message} (line ${line})`);
    this.name = 'CsvSyntaxError';
  }
}

/**
 * Parse CSV text into rows of cells: quoted cells may hold commas, doubled quotes and line breaks;
 * lines end in LF or CRLF; a final line ending is optional; an empty text is no rows. Throws
 * CsvSyntaxError on a quote inside an unquoted cell, text after a closing quote, or a quote left open.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  // Whether the current row has begun (a final line without its line ending still counts).
  let open = false;
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    open = true;
    if (c === '"' && cell === '') {
      const start = line;
      i += 1;
      for (;;) {
        if (i >= n) throw new CsvSyntaxError('a quoted value is not closed', start);
        const q = text[i]!;
        if (q === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        if (q === '\n') line += 1;
        cell += q;
        i += 1;
      }
      const next = text[i];
      if (next !== undefined && next !== ',' && next !== '\n' && !(next === '\r' && text[i + 1] === '\n')) {
        throw new CsvSyntaxError('text after a closing quote', line);
      }
      if (next === ',') {
        row.push(cell);
        cell = '';
        i += 1;
      }
      continue;
    }
    if (c === '"') throw new CsvSyntaxError('a double quote inside an unquoted value', line);
    if (c === ',') {
      row.push(cell);
      cell = '';
      i += 1;
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      open = false;
      i += c === '\n' ? 1 : 2;
      line += 1;
    } else {
      cell += c;
      i += 1;
    }
  }
  if (open) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** A parsed CSV with a header: the column names and one object per row (`column -> cell`). */
export interface CsvTable {
  columns: string[];
  rows: Array<Record<string, string>>;
}

/**
 * Parse CSV text whose first row names the columns. An empty text is no columns and no rows.
 * Throws CsvSyntaxError when a row has a different number of cells than the header.
 */
export function parseCsvTable(text: string): CsvTable {
  const [columns = [], ...lines] = parseCsv(text);
  const rows = lines.map((cells, i) => {
    if (cells.length !== columns.length) throw new CsvSyntaxError(`${cells.length} values where the header names ${columns.length} columns`, i + 2);
    const row: Record<string, string> = {};
    columns.forEach((c, j) => (row[c] = cells[j]!));
    return row;
  });
  return { columns, rows };
}
