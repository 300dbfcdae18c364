import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHubSpot } from '../../adapters/testing/index.js';
import { contactLine, runCli, tempDir, writeHubSpotConfig, startFakeHubSpot } from './helpers.js';

interface Report {
  counts: Record<string, number>;
  problems: { line: number; key: string; status: string; reason: string }[];
}

describe('crm-upsert sync with invalid UTF-8', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };

  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()));
  afterAll(async () => server?.close());

  it('rejects the line with the bad byte (line and offset) and a lone surrogate by path, writes the contact that differs only in the byte, exits 1', async () => {
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, server.basePath);
    const file = join(dir, 'utf8.jsonl');
    // Two external ids that a lossy decoder would both turn into "utf8-\ufffd".
    const line = (id: Buffer, evt: string) => Buffer.concat([
      Buffer.from(`{"source":"test","eventId":"${evt}","op":"upsert","object":"contact","externalId":"utf8-`),
      id,
      Buffer.from('","fields":{"email":"x@example.com"}}'),
    ]);
    const bad = line(Buffer.from([0xff]), 'utf8-evt-1');
    const badAt = bad.indexOf(0xff);
    const first = Buffer.from(`\ufeff${contactLine(900, { externalId: 'utf8-plain' })}\r\n`);
    // Line 4: valid UTF-8, but its JSON escape decodes to a lone surrogate.
    const lone = line(Buffer.from('\\ud800'), 'utf8-evt-3');
    writeFileSync(file, Buffer.concat([first, bad, Buffer.from('\r\n'), line(Buffer.from('\ufffd'), 'utf8-evt-2'), Buffer.from('\n'), lone, Buffer.from('\n')]));
    const report = join(dir, 'report.json');

    const result = await runCli(['sync', file, '--config', config, '--report', report], { env: { HUBSPOT_ACCESS_TOKEN: 'pat-test-utf8' } });

    expect(result.code).toBe(1);
    const r = JSON.parse(readFileSync(report, 'utf8')) as Report;
    expect(r.counts).toEqual({ created: 2, rejected: 2 });
    expect(r.problems).toEqual([
      { line: 2, key: '', status: 'rejected', reason: `invalid UTF-8 at byte ${badAt} of the line (byte ${first.length + badAt} of the input, counting from 0); not parsed` },
      { line: 4, key: '', status: 'rejected', reason: 'externalId: contains a lone UTF-16 surrogate' },
    ]);
    const ids = fake.records('contacts').map((c) => c.properties.ai_external_id).filter((id) => id?.startsWith('utf8-')).sort();
    expect(ids).toEqual(['utf8-plain', 'utf8-\ufffd']);
  });
});
