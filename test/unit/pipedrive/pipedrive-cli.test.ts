/**
 * What `sync --dry-run` prints for Pipedrive: the request each action would send, built from the
 * adapter's own body builders (ids known only at write time shown as what they stand for).
 */
import { describe, expect, it } from 'vitest';
import { pipedriveCli } from '../../../adapters/pipedrive/pipedrive-cli.js';
import type { Action } from '../../../schemas/action.js';

const section = pipedriveCli.salesStarter.section;

describe('pipedriveCli.previewRequest', () => {
  it('shows a person create with its id field and its organization as org_id', () => {
    const action = { source: 's', eventId: 'e', op: 'upsert', object: 'contact', externalId: 'P-1', fields: { name: 'Ada', email: 'ada@x.test' }, links: [{ object: 'company', externalId: 'acme' }] } as Action;
    expect(pipedriveCli.previewRequest(section, action, 'v1:e:k')).toEqual({
      request: 'POST /api/v2/persons (or PATCH by the id found)',
      body: { name: 'Ada', emails: [{ value: 'ada@x.test', primary: true, label: 'work' }], custom_fields: { '<key of ai_external_id>': 'P-1' }, org_id: '<id of the organization whose ai_external_id is acme>' },
    });
  });

  it('shows a task with its key marker, its relations and its person as primary participant', () => {
    const action = { source: 's', eventId: 'e', op: 'create', object: 'task', target: { object: 'deal', externalId: 'D-1' }, links: [{ object: 'contact', externalId: 'P-1' }], fields: { subject: 'Send the quote' } } as Action;
    const preview = pipedriveCli.previewRequest(section, action, 'v1:e:k');
    expect(preview.request).toBe('POST /api/v2/activities');
    expect(preview.body).toEqual({
      subject: 'Send the quote', type: 'task', note: '<p>[crm-upsert key: v1:e:k]</p>',
      deal_id: '<id of the deal whose ai_external_id is D-1>', person_id: '<id of the person whose ai_external_id is P-1>',
      participants: [{ person_id: '<id of the person whose ai_external_id is P-1>', primary: true }],
    });
  });
});
