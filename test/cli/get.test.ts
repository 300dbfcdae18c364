/**
 * `crm-upsert get` through the built bin against a fake HubSpot: one JSON line per id in the
 * order asked, found or not (exit 1 when some was not), by a lookupBy field, only the allowlisted
 * and readFields fields, and a bad request or a refused token as a usage error (exit 2) with the
 * token nowhere in the output.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { contactLine, ensureBuilt, HUBSPOT_OBJECTS, runCli, tempDir, writeHubSpotConfig } from './helpers.js';

const TOKEN = 'pat-na1-get-test-0001';

describe('crm-upsert get', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let config: string;
  const env = { HUBSPOT_ACCESS_TOKEN: TOKEN };
  const lines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot({ token: TOKEN });
    server = await fake.listen();
    const dir = tempDir();
    const objects = { ...HUBSPOT_OBJECTS, contact: { ...HUBSPOT_OBJECTS.contact, readFields: ['createdate'], lookupBy: ['email'] } };
    config = writeHubSpotConfig(dir, server.basePath, {}, { objects });
    const file = join(dir, 'actions.jsonl');
    writeFileSync(file, [contactLine(1), contactLine(2)].join('\n'));
    const synced = await runCli(['sync', file, '--config', config], { env });
    expect(synced.code).toBe(0);
  });
  afterAll(async () => server?.close());

  it('prints one line per id in the order asked, and exits 1 when one is not found', async () => {
    const before = fake.count();
    const r = await runCli(['get', 'contact', 'c-2', 'c-404', 'c-1', '--config', config], { env });
    expect(r.code).toBe(1);
    const [two, missing, one] = lines(r.stdout);
    expect(two).toMatchObject({ id: 'c-2', found: true, externalId: 'c-2', fields: { email: 'user2@example.com', firstname: 'User2' } });
    expect(Object.keys(two!.fields as object).sort()).toEqual(['createdate', 'email', 'firstname', 'lastname', 'lifecyclestage']);
    expect(missing).toEqual({ id: 'c-404', found: false });
    expect(one).toMatchObject({ id: 'c-1', found: true });
    expect(fake.count() - before).toBe(1);
  });

  it('reads by a lookupBy field, narrows the fields, and exits 0 when every id is found', async () => {
    const r = await runCli(['get', 'contact', 'user1@example.com', '--by', 'email', '--fields', 'firstname', '--config', config], { env });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([{ id: 'user1@example.com', found: true, recordId: expect.any(String), externalId: 'c-1', fields: { firstname: 'User1' } }]);
  });

  it.each([
    [['get', 'lead', 'x'], /get: object: unknown object "lead"/],
    [['get', 'note', 'x'], /get: object: "note" is an activity object/],
    [['get', 'contact', 'c-1', '--fields', 'hs_secret'], /get: --fields: "hs_secret" is not readable on "contact"/],
    [['get', 'contact', 'c-1', '--by', 'firstname'], /get: --by: "contact" cannot be read by "firstname"; lookupBy: email/],
  ])('refuses %j as a usage error before any request', async (args, message) => {
    const before = fake.count();
    const r = await runCli([...args, '--config', config], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(fake.count()).toBe(before);
  });

  it('names the token variable when HubSpot refuses the token, without printing it', async () => {
    const r = await runCli(['get', 'contact', 'c-1', '--config', config], { env: { HUBSPOT_ACCESS_TOKEN: 'pat-na1-wrong-token-9999' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/HUBSPOT_ACCESS_TOKEN/);
    expect(r.stderr + r.stdout).not.toContain('pat-na1-wrong-token-9999');
  });
});
