/**
 * `--config` on `schema` and `schema pull` through the built bin: the file named is the one read,
 * on either side of `pull`, even with another crm-upsert.config.json in the folder. The fake
 * HubSpot on loopback answers the property reads.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { runCli, startFakeHubSpot, tempDir } from './helpers.js';

const env = { HUBSPOT_ACCESS_TOKEN: 'pat-na1-config-flag-0001' };

/** The config the flag names: contacts with email and jobtitle, deals with dealname. */
const CUSTOM_OBJECTS = {
  contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'jobtitle'] },
  deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname'] },
};
/** The one in the folder, which must not be read: companies only. */
const DEFAULT_OBJECTS = {
  company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'] },
};

describe('--config on schema and schema pull', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  let dir: string;

  beforeAll(async () => {
    ({ fake, server } = await startFakeHubSpot());
    dir = tempDir();
    const write = (name: string, objects: object) =>
      writeFileSync(join(dir, name), JSON.stringify({ crm: 'hubspot', ledger: `sqlite:${join(dir, 'ledger.db')}`, hubspot: { basePath: server.basePath, objects } }));
    write('custom.config.json', CUSTOM_OBJECTS);
    write('crm-upsert.config.json', DEFAULT_OBJECTS);
  });
  afterAll(async () => server?.close());

  const pulled = (file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as { crm: string; objects: Record<string, Record<string, unknown>> };

  it.each([
    ['after pull', ['schema', 'pull', '--config', 'custom.config.json', '--out', 'after.json'], 'after.json'],
    ['before pull', ['schema', '--config', 'custom.config.json', 'pull', '--out', 'before.json'], 'before.json'],
  ])('schema pull reads the config --config names (%s)', async (_where, args, out) => {
    const before = fake.count();
    const r = await runCli(args, { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${out}: field definitions from HubSpot`);
    expect(r.stdout).toMatch(/contact 2, deal 1/);
    const file = pulled(out);
    expect(Object.keys(file.objects).sort()).toEqual(['contact', 'deal']);
    expect(Object.keys(file.objects.contact!).sort()).toEqual(['email', 'jobtitle']);
    // It asked the CRM (one property read per object type), not the folder's default config.
    expect(fake.count()).toBeGreaterThan(before);
  });

  it('without --config, schema pull reads the folder\'s crm-upsert.config.json', async () => {
    const r = await runCli(['schema', 'pull', '--out', 'default.json'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(pulled('default.json').objects)).toEqual(['company']);
  });

  it('schema pull --config with a missing file exits 2 naming that file, not the default', async () => {
    const r = await runCli(['schema', 'pull', '--config', 'nope.json', '--out', 'never.json'], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('nope.json');
    expect(existsSync(join(dir, 'never.json'))).toBe(false);
  });

  it.each([
    ['after --object', ['schema', '--object', 'contact', '--config', 'custom.config.json']],
    ['before --object', ['schema', '--config', 'custom.config.json', '--object', 'contact']],
  ])('schema --object reads the config --config names (%s), sending nothing', async (_where, args) => {
    const before = fake.count();
    const r = await runCli(args, { cwd: dir, env: {} });
    expect(r.code, r.stderr).toBe(0);
    const schema = JSON.parse(r.stdout) as { title: string; properties: { fields: { properties: Record<string, unknown> } } };
    expect(schema.title).toBe('upsert_contact');
    expect(Object.keys(schema.properties.fields.properties).sort()).toEqual(['email', 'jobtitle']);
    expect(fake.count()).toBe(before);
  });
});
