/**
 * The config's `fieldDefinitions` in `crm-upsert sync`, through the built bin against a fake
 * HubSpot: a value the definitions refuse is a rejected line naming the field and the allowed
 * values, with no CRM call; a sloppy one is written normalized; a file that is
 * missing or pulled from another CRM stops the run before anything is sent (exit 2).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot, type FakeHubSpot } from '../../adapters/testing/index.js';
import { formatFieldDefinitions } from '../../schemas/field-definitions.js';
import { contactLine, ensureBuilt, runCli, tempDir, writeHubSpotConfig } from './helpers.js';

const FILE = {
  crm: 'hubspot', apiVersion: 'crm/v3', pulledAt: '2026-12-05',
  objects: { contact: { lifecyclestage: { type: 'enumeration' as const, options: [{ value: 'lead', label: 'Lead' }, { value: 'customer', label: 'Customer' }] }, email: { type: 'email' as const } } },
};

describe('crm-upsert sync with field definitions', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  const env = { HUBSPOT_ACCESS_TOKEN: 'pat-test-values' };
  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot();
    server = await fake.listen();
  });
  afterAll(async () => server?.close());

  it('rejects the lines whose values the definitions refuse, with 0 calls for them, and writes the sloppy one normalized', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'crm-upsert.fields.json'), formatFieldDefinitions(FILE));
    const config = writeHubSpotConfig(dir, server.basePath, { fieldDefinitions: join(dir, 'crm-upsert.fields.json') });
    const file = join(dir, 'values.jsonl');
    writeFileSync(file, [
      contactLine(1, { externalId: 'fv-1', eventId: 'fv-1', fields: { email: 'a@fv.example', lifecyclestage: 'Customer ' } }),
      contactLine(2, { externalId: 'fv-2', eventId: 'fv-2', fields: { email: 'b@fv.example', lifecyclestage: 'client' } }),
      contactLine(3, { externalId: 'fv-3', eventId: 'fv-3', fields: { email: 'not an email' } }),
    ].join('\n'));
    const report = join(dir, 'report.json');
    const before = fake.count();
    const result = await runCli(['sync', file, '--config', config, '--report', report], { env });
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout.trim().split('\n').pop()!) as { counts: Record<string, number>; apiCalls: number };
    expect(summary.counts).toEqual({ created: 1, rejected: 2 });
    expect(fake.count() - before).toBe(1);
    expect(fake.records('contacts').find((r) => r.properties.ai_external_id === 'fv-1')!.properties.lifecyclestage).toBe('customer');
    const written = JSON.parse(readFileSync(report, 'utf8')) as { problems: { line: number; reason: string }[] };
    expect(written.problems.map((p) => p.line)).toEqual([2, 3]);
    expect(written.problems[0]!.reason).toContain('fields.lifecyclestage: "client" is not an allowed value; allowed: "lead", "customer"');
    expect(written.problems[1]!.reason).toContain('fields.email: must be an email address');
    expect(result.stderr).toContain('"client" is not an allowed value');
  });

  it('stops before sending anything when the file is missing or was pulled from another CRM (exit 2)', async () => {
    const dir = tempDir();
    const file = join(dir, 'one.jsonl');
    writeFileSync(file, contactLine(9, { externalId: 'fv-9', eventId: 'fv-9' }));
    const before = fake.count();
    const missing = await runCli(['sync', file, '--config', writeHubSpotConfig(dir, server.basePath, { fieldDefinitions: join(dir, 'nope.json') })], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.json: no such file (crm-upsert schema pull writes it)');
    writeFileSync(join(dir, 'sf.json'), formatFieldDefinitions({ ...FILE, crm: 'salesforce' }));
    const other = await runCli(['sync', file, '--config', writeHubSpotConfig(dir, server.basePath, { fieldDefinitions: join(dir, 'sf.json') })], { env });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('were pulled from salesforce, not hubspot');
    expect(fake.count()).toBe(before);
  });

  it('prints an object\'s strict tool schema with the definitions\' rules, per provider (schema --object --for)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'crm-upsert.fields.json'), formatFieldDefinitions(FILE));
    const config = writeHubSpotConfig(dir, server.basePath, { fieldDefinitions: join(dir, 'crm-upsert.fields.json') });
    const before = fake.count();
    const openai = await runCli(['schema', '--object', 'contact', '--for', 'openai', '--config', config], { env: {} });
    expect(openai.code, openai.stderr).toBe(0);
    const schema = JSON.parse(openai.stdout) as { title: string; required: string[]; properties: { fields: { properties: Record<string, { enum?: unknown[] }> } } };
    expect(schema.title).toBe('upsert_contact');
    expect(schema.properties.fields.properties.lifecyclestage!.enum).toEqual(['lead', 'customer', null]);
    expect(schema.required).toContain('idempotencyKey');
    expect(fake.count()).toBe(before);
    expect(openai.stderr).toBe('');
    const anthropic = await runCli(['schema', '--object', 'contact', '--for', 'anthropic', '--config', config], { env: {} });
    expect(anthropic.code).toBe(0);
    expect(anthropic.stderr).toBe('');
    const wide = writeHubSpotConfig(dir, server.basePath, {}, { objects: { contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: Array.from({ length: 30 }, (_, i) => `p${i}`) } } });
    const crowded = await runCli(['schema', '--object', 'contact', '--for', 'anthropic', '--config', wide], { env: {} });
    expect(crowded.code).toBe(0);
    expect(crowded.stderr).toMatch(/^crm-upsert: this schema has 3\d optional parameters; Anthropic refuses a request whose strict tools hold more than 24 in all/);
    const refused = await runCli(['schema', '--for', 'openai'], { env: {} });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--for needs --object');
    const unknown = await runCli(['schema', '--object', 'ticket', '--config', config], { env: {} });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('"ticket" is not a configured object');
  });
});

