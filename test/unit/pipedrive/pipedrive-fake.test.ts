/**
 * fakePipedrive refuses what Pipedrive refuses, with its bodies, and models its search lag, its
 * windows and its token; spoken to over loopback with plain fetch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fakePipedrive, type FakePipedrive, type FakePipedriveOptions } from '../../../adapters/testing/index.js';

describe('fakePipedrive', () => {
  let fake: FakePipedrive;
  let url = '';
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  async function open(options: FakePipedriveOptions = {}) {
    let now = 1_000_000;
    fake = fakePipedrive({ searchLagMs: 2_000, burstLimit: false, searchLimit: false, now: () => now, ...options });
    const front = await fake.open('loopback');
    url = front.url;
    close = front.close;
    return { tick: (ms: number) => (now += ms) };
  }
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { 'x-api-token': 'tok-123456' }) => {
    const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as { success: boolean; data?: unknown; error?: string; code?: string } };
  };

  it('refuses a request without the token, and counts a token sent in the URL', async () => {
    await open();
    expect(await call('GET', '/api/v2/personFields', undefined, {})).toMatchObject({ status: 401, body: { success: false, error: 'unauthorized access' } });
    expect((await call('GET', '/api/v2/personFields?api_token=tok-123456', undefined, {})).status).toBe(200);
    expect(fake.state.tokenInUrl).toBe(1);
  });

  it.each([
    ['a number as text', { name: 'A', custom_fields: { SCORE: '4' } }],
    ['an enumeration label instead of its option id', { name: 'A', custom_fields: { STATUS: 'Qualified' } }],
    ['an empty set', { name: 'A', custom_fields: { TAGS: [] } }],
    ['an unknown custom field key', { name: 'A', custom_fields: { ['f'.repeat(40)]: 'x' } }],
    ['an unknown standard field', { name: 'A', nickname: 'x' }],
    ['a relation to an organization that does not exist', { name: 'A', org_id: 999 }],
    ['a person without a name', { email: 'x' }],
  ])('refuses %s with 400 and Pipedrive\'s body', async (_name, body) => {
    await open();
    const keys = { SCORE: fake.defineField('person', 'Score', 'double'), STATUS: fake.defineField('person', 'Status', 'enum', ['Qualified']), TAGS: fake.defineField('person', 'Tags', 'set', ['a']) };
    const custom = (body as { custom_fields?: Record<string, unknown> }).custom_fields;
    const sent = custom ? { ...body, custom_fields: Object.fromEntries(Object.entries(custom).map(([k, v]) => [keys[k as keyof typeof keys] ?? k, v])) } : body;
    const res = await call('POST', '/api/v2/persons', sent);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false });
    expect(typeof res.body.error).toBe('string');
    expect(fake.records('person')).toHaveLength(0);
  });

  it('shows a write to the search index only after its lag; lists and reads by id see it at once', async () => {
    const clock = await open();
    const key = fake.field('person', 'ai_external_id')!.field_code;
    const created = await call('POST', '/api/v2/persons', { name: 'Ada', custom_fields: { [key]: 'P-1' } });
    const id = (created.body.data as { id: number }).id;
    const search = () => call('GET', `/api/v2/itemSearch/field?entity_type=person&field=${key}&term=P-1&match=exact`);
    expect((await search()).body.data).toEqual([]);
    expect((await call('GET', `/api/v2/persons/${id}`)).status).toBe(200);
    expect(((await call('GET', '/api/v2/persons?updated_since=1970-01-01T00:00:00Z')).body.data as unknown[]).length).toBe(1);
    clock.tick(2_000);
    expect((await search()).body.data).toEqual([{ result_score: 1, item: { id, type: 'person' } }]);
    // Exact is exact and case-sensitive; a beginning match is not.
    expect((await call('GET', `/api/v2/itemSearch/field?entity_type=person&field=${key}&term=p-1&match=exact`)).body.data).toEqual([]);
    expect(((await call('GET', `/api/v2/itemSearch/field?entity_type=person&field=${key}&term=P-&match=beginning`)).body.data as unknown[]).length).toBe(1);
  });

  it('answers 404 for a deleted record, on read and on update', async () => {
    await open();
    const id = fake.seed('person', { name: 'Gone' });
    fake.delete('person', id);
    expect(await call('GET', `/api/v2/persons/${id}`)).toMatchObject({ status: 404, body: { success: false, code: 'ERR_NOT_FOUND' } });
    expect((await call('PATCH', `/api/v2/persons/${id}`, { name: 'Back' })).status).toBe(404);
  });

  it('answers 429 past the search window and the burst window, and the daily-budget 429 past the budget', async () => {
    await open({ searchLimit: 2, burstLimit: 5, dailyBudget: 7 });
    const key = fake.field('person', 'ai_external_id')!.field_code;
    const search = () => call('GET', `/api/v2/itemSearch/field?entity_type=person&field=${key}&term=x&match=exact`);
    expect([(await search()).status, (await search()).status, (await search()).status]).toEqual([200, 200, 429]);
    expect([(await call('GET', '/api/v2/personFields')).status, (await call('GET', '/api/v2/personFields')).status, (await call('GET', '/api/v2/personFields')).status]).toEqual([200, 200, 429]);
    // Every request counts against the day, refused ones included: the 7th is refused by the burst window, the 8th by the day.
    expect((await call('GET', '/api/v2/personFields')).body).toMatchObject({ error: 'Request over limit' });
    const daily = await call('GET', '/api/v2/personFields');
    expect(daily).toMatchObject({ status: 429, body: { success: false, error: 'daily request budget exceeded' } });
  });

  it('sanitizes note HTML but keeps its text', async () => {
    await open();
    const id = fake.seed('person', { name: 'Ada' });
    await call('POST', '/api/v1/notes', { content: '<p onclick="x()">Hi<script>alert(1)</script></p><p>[crm-upsert key: k-1]</p>', person_id: id });
    expect(fake.notes()[0]!.content).toBe('<p>Hi</p><p>[crm-upsert key: k-1]</p>');
    expect((await call('GET', `/api/v1/notes?person_id=${id + 1000}`)).body.data).toBeNull();
  });
});
