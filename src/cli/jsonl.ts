/**
 * A streaming JSONL line reader: constant memory, 1-based line numbers, a line-length guard
 * that drops an oversized line's bytes as they arrive instead of buffering it whole, and strict
 * UTF-8: a line with an invalid byte is reported with its offset, never decoded to U+FFFD (two
 * lines differing only in one bad byte would otherwise become the same text, the same key).
 */
import { isUtf8 } from 'node:buffer';

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

export type RawLine =
  /** A complete line, without its `\n` / `\r\n` (and without a UTF-8 BOM on line 1). */
  | { line: number; text: string }
  /** A line longer than the limit; `bytes` is its full length. Its content was discarded. */
  | { line: number; tooLong: true; bytes: number; limit: number }
  /** A line that is not valid UTF-8; `reason` names the first bad byte. Its content was discarded. */
  | { line: number; invalidUtf8: true; byte: number; fileByte: number; reason: string };

export interface ReadLinesOptions {
  /** Longest line accepted, in bytes. Default 1 MiB. */
  maxLineBytes?: number;
}

const BOM = [0xef, 0xbb, 0xbf];

/**
 * Offset of the first byte that starts an ill-formed UTF-8 sequence, or -1 when `bytes` is
 * well-formed (the same rules as a fatal TextDecoder: no overlongs, no surrogates, nothing past
 * U+10FFFF, no truncated sequence).
 */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const c = bytes[i]!;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const d = bytes[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return -1;
}

export async function* readLines(input: AsyncIterable<Buffer | string>, options: ReadLinesOptions = {}): AsyncGenerator<RawLine> {
  const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  let line = 0;
  /** Offset in the input of the current line's first byte. */
  let lineStart = 0;

  const finish = (): RawLine => {
    line += 1;
    let out: RawLine;
    if (skipping) {
      out = { line, tooLong: true, bytes: size, limit: max };
    } else {
      let bytes = Buffer.concat(parts, size);
      let skipped = 0;
      if (line === 1 && bytes.length >= 3 && BOM.every((b, i) => bytes[i] === b)) {
        bytes = bytes.subarray(3);
        skipped = 3;
      }
      if (bytes.length > 0 && bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, -1);
      if (isUtf8(bytes)) {
        out = { line, text: bytes.toString('utf8') };
      } else {
        const at = invalidUtf8Offset(bytes) + skipped;
        const fileByte = lineStart + at;
        out = { line, invalidUtf8: true, byte: at, fileByte, reason: `invalid UTF-8 at byte ${at} of the line (byte ${fileByte} of the input, counting from 0); not parsed` };
      }
    }
    parts = [];
    size = 0;
    skipping = false;
    return out;
  };

  let consumed = 0;
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
      lineStart = consumed + nl + 1;
      start = nl + 1;
    }
    consumed += buf.length;
  }
  if (size > 0 || skipping) yield finish();
}
