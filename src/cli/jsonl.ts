/**
 * A streaming JSONL line reader: constant memory, 1-based line numbers, and a line-length guard
 * that drops an oversized line's bytes as they arrive instead of buffering it whole.
 */

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

export type RawLine =
  /** A complete line, without its `\n` / `\r\n`. */
  | { line: number; text: string }
  /** A line longer than the limit; `bytes` is its full length. Its content was discarded. */
  | { line: number; tooLong: true; bytes: number; limit: number };

export interface ReadLinesOptions {
  /** Longest line accepted, in bytes. Default 1 MiB. */
  maxLineBytes?: number;
}

export async function* readLines(input: AsyncIterable<Buffer | string>, options: ReadLinesOptions = {}): AsyncGenerator<RawLine> {
  const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  let line = 0;

  const finish = (): RawLine => {
    line += 1;
    let out: RawLine;
    if (skipping) {
      out = { line, tooLong: true, bytes: size, limit: max };
    } else {
      let text = Buffer.concat(parts, size).toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      out = { line, text };
    }
    parts = [];
    size = 0;
    skipping = false;
    return out;
  };

  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    while (start < buf.length) {
      const nl = buf.indexOf(10, start);
      const end = nl === -1 ? buf.length : nl;
      size += end - start;
      if (!skipping) {
        if (size > max) {
          skipping = true;
          parts = [];
        } else if (end > start) {
          // Copy: holding a slice would pin the whole read buffer until the line ends.
          parts.push(Buffer.from(buf.subarray(start, end)));
        }
      }
      if (nl === -1) break;
      yield finish();
      start = nl + 1;
    }
  }
  if (size > 0 || skipping) yield finish();
}
