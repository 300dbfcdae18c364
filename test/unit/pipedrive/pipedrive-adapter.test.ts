/**
 * pipedriveAdapter at the contract's edges: the engine's last word before a write (`beforeSend`)
 * stops the request and its error comes back as it is; a known id answered 404 is looked up again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pipedriveAdapter } from '../../../adapters/pipedrive/index.js';
import { fakePipedrive, type FakePipedrive } from '../../../adapters/testing/index.js';

const objects = { contact: { kind: 'record' as const, entity: 'person' as const, idField: 'ai_external_id', fields: ['name'] } };

describe('pipedriveAdapter', () => {
  let fake: FakePipedrive;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());
  const open = async () => {
    fake = fakePipedrive({ searchLagMs: 0, burstLimit: false, searchLimit: false });
    const front = await fake.open('loopback');
    close = front.close;
    return pipedriveAdapter({ apiToken: 'tok-123456', basePath: front.url, objects, recoveryDelaysMs: [5] });
  };

  it('sends no write when beforeSend refuses, and lets its error through unchanged', async () => {
    const adapter = await open();
    const lost = new Error('claim lost');
    const context = { memo: new Map<string, string>(), beforeSend: async () => { throw lost; } };
    await expect(adapter.upsertRecords('contact', [{ key: 'k', object: 'contact', externalId: 'P-1', fields: { name: 'Ada' } }], context)).rejects.toBe(lost);
    expect(fake.count('POST')).toBe(0);
    expect(fake.records('person')).toHaveLength(0);
  });

  it('looks a record up again when its known id answers 404, and never reports the gone id written', async () => {
    const adapter = await open();
    const key = fake.field('person', 'ai_external_id')!.field_code;
    const live = fake.seed('person', { name: 'Live' }, { [key]: 'P-1' });
    const [result] = await adapter.upsertRecords('contact', [{ key: 'k', object: 'contact', externalId: 'P-1', fields: { name: 'Ada' }, knownId: '999' }]);
    expect(result).toEqual({ ok: true, recordId: String(live), created: false });
    expect(fake.count('PATCH /api/v2/persons/{id}')).toBe(2);
  });

  it('fails a create answered 500 as unconfirmed and retryable after its lookups find nothing', async () => {
    const adapter = await open();
    fake.failNext('server_error', { endpoint: 'POST /api/v2/persons' });
    const [result] = await adapter.upsertRecords('contact', [{ key: 'k', object: 'contact', externalId: 'P-1', fields: { name: 'Ada' } }]);
    expect(result).toMatchObject({ ok: false, error: { vendorCode: 'CREATE_UNCONFIRMED', retryable: true } });
    expect(fake.records('person')).toHaveLength(0);
  });
});
