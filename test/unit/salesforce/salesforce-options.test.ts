import { describe, expect, it } from 'vitest';
import { resolveSalesforceOptions, type SalesforceAdapterOptions } from '../../../adapters/salesforce/salesforce-options.js';
import { salesforceAdapter } from '../../../adapters/salesforce/index.js';
import { ConfigError } from '../../../src/errors.js';

const objects: SalesforceAdapterOptions['objects'] = {
  contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName'] },
  task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject'], parents: { contact: 'WhoId' } },
};
const creds = { instanceUrl: 'https://acme.my.salesforce.com', accessToken: '00Dxx!token' };

describe('resolveSalesforceOptions', () => {
  it('applies the defaults', () => {
    const o = resolveSalesforceOptions({ ...creds, objects }, {});
    expect(o).toMatchObject({ apiVersion: '60.0', dailyLimitShare: 0.9, allowDuplicateSave: false, instanceUrl: 'https://acme.my.salesforce.com' });
    expect(o.rateBudget).toBeUndefined();
  });

  it('reads SF_INSTANCE_URL and SF_ACCESS_TOKEN from the environment', () => {
    const o = resolveSalesforceOptions({ objects }, { SF_INSTANCE_URL: 'https://env.my.salesforce.com/', SF_ACCESS_TOKEN: 'envtoken' });
    expect(o).toMatchObject({ instanceUrl: 'https://env.my.salesforce.com', accessToken: 'envtoken' });
  });

  it('names both environment variables when credentials are missing', () => {
    expect(() => resolveSalesforceOptions({ objects }, {})).toThrow(ConfigError);
    expect(() => resolveSalesforceOptions({ objects }, {})).toThrow(/SF_INSTANCE_URL.*SF_ACCESS_TOKEN/);
    expect(() => resolveSalesforceOptions({ objects, instanceUrl: creds.instanceUrl }, {})).toThrow(/SF_ACCESS_TOKEN/);
  });

  it.each([
    [{ apiVersion: '60' }, /apiVersion/],
    [{ apiVersion: '45.0' }, /apiVersion: must be 46.0 or later/],
    [{ dailyLimitShare: 0 }, /dailyLimitShare/],
    [{ dailyLimitShare: 1.5 }, /dailyLimitShare/],
    [{ allowDuplicateSave: 'yes' }, /allowDuplicateSave/],
    [{ instanceUrl: 'not a url' }, /instanceUrl/],
    [{ objects: {} }, /objects/],
    [{ objects: { contact: { kind: 'record', sobject: 'Contact', fields: ['Email'] } } }, /objects\.contact\.externalIdField/],
    [{ objects: { contact: { ...objects.contact, sobject: 'Contact; DELETE' } } }, /objects\.contact\.sobject/],
    [{ objects: { task: objects.task } }, /objects\.task\.parents\.contact: must name a configured record object/],
    [{ rateBudget: {} }, /rateBudget/],
    [{ bulk: { pollIntervalMs: -1 } }, /bulk\.pollIntervalMs/],
    [{ bulk: { maxUploadBytes: 0 } }, /bulk\.maxUploadBytes/],
    [{ bulk: { sleep: 5 } }, /bulk\.sleep: must be a function/],
    [{ bulk: { pollEvery: 5 } }, /bulk/],
    [{ unknownOption: 1 }, /unknownOption/],
  ])('rejects %j with a ConfigError naming the field', (bad, message) => {
    const run = () => resolveSalesforceOptions({ ...creds, objects, ...(bad as object) } as SalesforceAdapterOptions, {});
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });

  it('never echoes the token in a config error', () => {
    try {
      resolveSalesforceOptions({ ...creds, accessToken: 'tok_do_not_print', objects, apiVersion: 'x' }, {});
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('tok_do_not_print');
    }
  });
});

describe('salesforceAdapter', () => {
  it('exposes the objects as ObjectSpecs and the Salesforce capabilities', () => {
    const adapter = salesforceAdapter({ ...creds, objects });
    expect(adapter.name).toBe('salesforce');
    expect(adapter.capabilities).toEqual({ maxBatch: 200, nativeActivityUpsert: true });
    expect(adapter.objects).toEqual({
      contact: { kind: 'record', fields: ['Email', 'LastName'] },
      // A Task holds one Who and one What: the engine refuses two references landing on one of them.
      task: { kind: 'activity', fields: ['Subject'], parents: ['contact'], slots: { contact: 'WhoId' } },
    });
    expect(adapter.apiCalls()).toBe(0);
  });

  it('builds a jsforce Connection without any network call', () => {
    const adapter = salesforceAdapter({ ...creds, objects, apiVersion: '61.0' });
    expect(adapter.connection.instanceUrl).toBe(creds.instanceUrl);
    expect(adapter.connection.version).toBe('61.0');
    expect(adapter.apiCalls()).toBe(0);
  });
});
