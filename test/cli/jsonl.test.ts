import { describe, expect, it } from 'vitest';
import { invalidUtf8Offset, readLines, type RawLine } from '../../src/cli/jsonl.js';
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

  it('reports a line with an invalid byte with its offsets instead of decoding it to U+FFFD, and goes on', async () => {
    const bad = Buffer.concat([Buffer.from('{"externalId":"a'), Buffer.from([0xff]), Buffer.from('"}\r\n')]);
    const lines = await collect([Buffer.from('{"x":1}\n'), bad.subarray(0, 5), bad.subarray(5), Buffer.from('{"y":"é"}')]);
    expect(lines).toEqual([
      { line: 1, text: '{"x":1}' },
      { line: 2, invalidUtf8: true, byte: 16, fileByte: 24, reason: 'invalid UTF-8 at byte 16 of the line (byte 24 of the input, counting from 0); not parsed' },
      { line: 3, text: '{"y":"é"}' },
    ]);
  });

  it('finds an invalid byte and a CRLF ending split across chunks', async () => {
    const bytes = Buffer.concat([Buffer.from('ok\r'), Buffer.from('\nab'), Buffer.from([0xc3]), Buffer.from('\r'), Buffer.from('\nlast')]);
    const lines = await collect([...bytes].map((b) => Buffer.from([b])));
    expect(lines.map((l) => ('text' in l ? l.text : 'invalidUtf8' in l ? `bad@${l.byte}/${l.fileByte}` : 'long'))).toEqual(['ok', 'bad@2/6', 'last']);
  });

  it('drops a UTF-8 BOM on line 1 only', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(await collect([Buffer.concat([bom.subarray(0, 2)]), Buffer.concat([bom.subarray(2), Buffer.from('{"a":1}\r\n'), bom, Buffer.from('{}')])])).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '\ufeff{}' },
    ]);
    // An offset counts the BOM's bytes: it is a byte of the file.
    expect(await collect([Buffer.concat([bom, Buffer.from([0x80])])])).toMatchObject([{ line: 1, invalidUtf8: true, byte: 3, fileByte: 3 }]);
  });

  it.each([
    ['overlong "/"', [0x41, 0xc0, 0xaf], 1],
    ['UTF-16 surrogate encoded', [0xed, 0xa0, 0x80], 0],
    ['past U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 0],
    ['truncated at the end', [0x61, 0x62, 0xe2, 0x82], 2],
    ['stray continuation', [0xe2, 0x82, 0xac, 0x80], 3],
    ['lead byte then ASCII', [0xc3, 0x41], 0],
  ])('locates an ill-formed sequence: %s', (_name, bytes, at) => {
    expect(invalidUtf8Offset(Uint8Array.from(bytes))).toBe(at);
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes))).toThrow();
  });

  it('accepts what a fatal TextDecoder accepts', () => {
    expect(invalidUtf8Offset(Buffer.from('aé€😀\u{10FFFF}\ufffd'))).toBe(-1);
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
