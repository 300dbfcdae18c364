/**
 * A contact's email on HubSpot: the property is typed `string`, but HubSpot refuses anything that
 * is not an address and takes the batch with it. The engine checks it as an address, with or
 * without a definitions file, before anything is claimed: 0 requests for `jo at acme`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import type { HubSpotConfig } from '../../adapters/hubspot/hubspot-config.js';
import { createSync, openLedger } from '../../src/index.js';
import { harness, objects, TOKEN, type Harness } from './hubspot-helpers.js';

const fast = { retries: 2, minTimeoutMs: 5, maxTimeoutMs: 20 };
const contact = (n: number, email: string) => ({ source: 'agent', eventId: `e-${n}`, op: 'upsert', object: 'contact', externalId: `c-${n}`, fields: { email, firstname: `C${n}` } });

describe('HubSpot contact emails, checked as addresses before any request', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  it.each([
    ['without a definitions file', false],
    ['with definitions pulled from the portal', true],
  ])('%s: refuses "jo at acme" with 0 requests, trims the address it writes', async (_what, pulled) => {
    h = await harness('loopback');
    let sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    if (pulled) {
      const section: HubSpotConfig = { ...structuredClone(hubspotCli.salesStarter.section), basePath: h.basePath, objects: { contact: objects.contact! } };
      const fieldDefinitions = await hubspotCli.pullFields!(section, { HUBSPOT_ACCESS_TOKEN: TOKEN }, { now: new Date('2026-12-05T10:00:00Z') });
      expect(fieldDefinitions.objects.contact!.email).toEqual({ type: 'email' });
      await h.stop();
      h = await harness('loopback', {}, { fieldDefinitions });
      sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    }
    const [alone] = await sync.applyMany([contact(1, 'jo at acme')]);
    expect(alone).toMatchObject({ status: 'rejected', attempts: 0, error: { code: 'VALIDATION', path: 'fields.email' } });
    expect(alone!.error!.message).toContain('fields.email: must be an email address (got "jo at acme")');
    expect(h.fake.count()).toBe(0);

    const outcomes = await sync.applyMany([contact(2, ' jo@acme.test '), contact(3, 'jo at acme'), contact(4, 'ann@acme.test')]);
    expect(outcomes.map((o) => o.status)).toEqual(['created', 'rejected', 'created']);
    expect(outcomes[0]!.normalized).toEqual([{ field: 'email', from: ' jo@acme.test ', to: 'jo@acme.test' }]);
    // The two good contacts in one request: no refused batch, no split.
    expect(h.fake.count()).toBe(1);
    expect(h.fake.records('contacts').map((c) => c.properties.email).sort()).toEqual(['ann@acme.test', 'jo@acme.test']);
    await sync.close();
  });

  it('sends it as written under a definition written by hand as `string`, and HubSpot\'s INVALID_EMAIL carries no schema pull hint', async () => {
    const contactWithText = { ...objects.contact!, definitions: [{ name: 'email', type: 'string' as const }] };
    h = await harness('loopback', {}, { objects: { ...objects, contact: contactWithText } });
    const sync = createSync({ adapter: h.adapter, ledger: openLedger('memory:'), retry: fast });
    const [failed] = await sync.applyMany([contact(1, 'jo at acme')]);
    expect(failed!.status).toBe('failed');
    expect(failed!.error).toMatchObject({ vendorCode: 'INVALID_EMAIL', path: 'fields.email', retryable: false });
    expect(failed!.error!.message).toMatch(/email = "jo at acme" \(INVALID_EMAIL: Email address jo at acme is invalid\) \(correlationId [^)]+\)$/);
    expect(failed!.error!.message).not.toContain('schema pull');
    expect(h.fake.count('batch/upsert')).toBe(1);
    await sync.close();
  });
});
