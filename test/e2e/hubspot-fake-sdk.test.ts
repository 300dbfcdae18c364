import { Client } from '@hubspot/api-client';
import { afterEach, describe, expect, it } from 'vitest';
import { fronts, harness, TOKEN, type Harness } from './hubspot-helpers.js';

/** The rest of the fake's surface, through the SDK calls other tools (check-setup, users' tests) make. */
describe.each(fronts)('fakeHubSpot through @hubspot/api-client over %s', (front) => {
  let h: Harness;
  afterEach(() => h?.stop());

  const client = () => {
    const c = new Client({ accessToken: TOKEN, basePath: h.basePath });
    // Touch the API objects now so a later Client's retry settings cannot apply (CRM-API.md §1.1).
    return { objects: c.crm.objects, properties: c.crm.properties.coreApi, associations: c.crm.associations.v4.batchApi };
  };

  it('creates a note with basicApi, reads it by id and finds it by search once indexed', async () => {
    let t = Date.parse('2026-11-29T10:00:00Z');
    h = await harness(front, { searchLagMs: 5_000, now: () => t });
    const c = client();
    const contact = await c.objects.basicApi.create('contacts', { properties: { ai_external_id: 'A', email: 'a@x.test' }, associations: [] });
    const note = await c.objects.basicApi.create('notes', {
      properties: { hs_timestamp: '2026-11-29T10:00:00Z', hs_note_body: 'hi', crm_upsert_key: 'k1' },
      associations: [{ to: { id: contact.id }, types: [{ associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 202 }] }],
    });
    const read = await c.objects.basicApi.getById('notes', note.id, ['crm_upsert_key'], undefined, ['contacts']);
    expect(read.properties.crm_upsert_key).toBe('k1');
    expect(read.associations?.contacts?.results.map((r) => r.id)).toEqual([contact.id]);
    const byExt = await c.objects.basicApi.getById('contacts', 'A', ['email'], undefined, undefined, false, 'ai_external_id');
    expect(byExt.id).toBe(contact.id);
    const search = () => c.objects.searchApi.doSearch('notes', { filterGroups: [{ filters: [{ propertyName: 'crm_upsert_key', operator: 'EQ' as never, value: 'k1' }] }], properties: ['crm_upsert_key'], limit: 10, after: '0', sorts: [] });
    expect((await search()).total).toBe(0);
    t += 5_000;
    expect((await search()).results.map((r) => r.id)).toEqual([note.id]);
  });

  it('associates in a v4 batch (answered 201 as specified, which the SDK maps) and checks and creates properties', async () => {
    h = await harness(front);
    const c = client();
    const contact = await c.objects.basicApi.create('contacts', { properties: { ai_external_id: 'A' }, associations: [] });
    const task = await c.objects.basicApi.create('tasks', { properties: { hs_timestamp: '2026-11-29T10:00:00Z', hs_task_subject: 'call' }, associations: [] });
    const associated = await c.associations.create('tasks', 'contacts', { inputs: [{ _from: { id: task.id }, to: { id: contact.id }, types: [{ associationCategory: 'HUBSPOT_DEFINED' as never, associationTypeId: 204 }] }] });
    expect(associated.results.map((r) => String(r.toObjectId))).toEqual([contact.id]);
    expect(h.fake.records('tasks')[0]!.associations).toEqual({ contacts: [{ id: contact.id, typeId: 204 }] });
    expect((await c.properties.getByName('contacts', 'ai_external_id')).hasUniqueValue).toBe(true);
    expect((await c.properties.getByName('companies', 'ai_external_id')).hasUniqueValue).toBe(true);
    await expect(c.properties.getByName('companies', 'partner_id')).rejects.toMatchObject({ code: 404 });
    const created = await c.properties.create('companies', { name: 'partner_id', label: 'Partner id', type: 'string' as never, fieldType: 'text' as never, groupName: 'companyinformation', hasUniqueValue: true });
    expect(created.hasUniqueValue).toBe(true);
  });
});
