import { describe, expect, it } from 'vitest';
import { readLines, type RawLine } from '../../src/cli/jsonl.js';
import { parseDuration } from '../../src/cli/ledger.js';

async function collect(chunks: (string | Buffer)[], maxLineBytes?: number): Promise<RawLine[]> {
  async function* source() {
    for (const c of chunks) yield typeof c === 'string' ? Buffer.from(c) : c;
  }
  const out: RawLine[] = [];
  for await (const line of readLines(source(), maxLineBytes === undefined ? {} : { maxLineBytes })) out.push(line);
  return out;
}

describe('readLines', () => {
  it('numbers lines across chunk boundaries, strips CRLF and keeps a last line without a newline', async () => {
    expect(await collect(['{"a":', '1}\r\n\n{"b"', ':2}\n{"c":3}'])).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '' },
      { line: 3, text: '{"b":2}' },
      { line: 4, text: '{"c":3}' },
    ]);
  });

  it('decodes a multi-byte character split between chunks', async () => {
    const bytes = Buffer.from('{"n":"Chloé"}\n');
    const cut = bytes.indexOf(0xc3) + 1;
    expect(await collect([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual([{ line: 1, text: '{"n":"Chloé"}' }]);
  });

  it('reports a line over the limit with its full length and goes on with the next line', async () => {
    const lines = await collect(['ok\n', 'x'.repeat(40), 'x'.repeat(40), '\nnext'], 64);
    expect(lines).toEqual([
      { line: 1, text: 'ok' },
      { line: 2, tooLong: true, bytes: 80, limit: 64 },
      { line: 3, text: 'next' },
    ]);
  });

  it('yields nothing for an empty input', async () => {
    expect(await collect([])).toEqual([]);
  });
});

describe('parseDuration', () => {
  it.each([
    ['30d', 30 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['15m', 900_000],
    ['45s', 45_000],
    ['500ms', 500],
    ['2w', 14 * 86_400_000],
  ])('reads %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['30', 'd', '-1d', '1 day'])('refuses %s naming the flag', (text) => {
    expect(() => parseDuration(text)).toThrow(/--older-than/);
  });
});
