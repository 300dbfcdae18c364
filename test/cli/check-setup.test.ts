import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, setupFakes, tempDir, writeHubSpotConfig } from './helpers.js';

const HS_TOKEN = 'pat-na1-check-setup-token';
const SF_TOKEN = '00Dcheck!setup.token';

describe('crm-upsert check-setup', () => {
  const { hubspot, salesforce, stopAll } = setupFakes({ hubspot: HS_TOKEN, salesforce: SF_TOKEN });
  beforeAll(() => ensureBuilt());
  afterEach(() => stopAll());

  it('names a HubSpot allowlisted property that does not exist, a read-only one and a non-unique id property, each with its fix', async () => {
    const { fake, basePath } = await hubspot();
    fake.defineProperty('contacts', 'ai_score', { calculated: true });
    fake.defineProperty('companies', 'ai_company_id');
    const objects = {
      contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'favorite_color', 'ai_score'] },
      company: { kind: 'record', objectType: 'companies', idProperty: 'ai_company_id', fields: ['name'] },
      note: { kind: 'activity', objectType: 'notes', keyProperty: 'ai_note_key', fields: ['hs_note_body', 'hs_timestamp'], parents: { contact: 202 } },
    };
    const config = writeHubSpotConfig(tempDir(), basePath, {}, { objects });
    const env = { HUBSPOT_ACCESS_TOKEN: HS_TOKEN };

    const check = await runCli(['check-setup', '--config', config], { env });
    const create = await runCli(['check-setup', '--create', '--config', config], { env });

    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/ok\s+contact -> contacts\.ai_external_id \(unique\)/);
    expect(check.stdout).toMatch(/ok\s+contact -> contacts\.email \(allowlisted\)/);
    expect(check.stdout).toMatch(/MISSING\s+contact -> contacts\.favorite_color \(allowlisted\): property contacts\.favorite_color does not exist.*Fix: create it in HubSpot.*or remove it from objects\.contact\.fields/);
    expect(check.stdout).toMatch(/PROBLEM\s+contact -> contacts\.ai_score \(allowlisted\): contacts\.ai_score is calculated.*Fix: remove it from objects\.contact\.fields/);
    expect(check.stdout).toMatch(/PROBLEM\s+company -> companies\.ai_company_id \(unique\): .*does not require unique values.*Fix: HubSpot cannot make an existing property unique/);
    expect(check.stdout).toMatch(/MISSING\s+note -> notes\.ai_note_key \(key\)/);
    expect(check.stderr).toContain('4 of 9 checks failed');
    expect(create.code).toBe(1);
    expect(create.stdout).toMatch(/created\s+note -> notes\.ai_note_key/);
    expect(create.stdout).toMatch(/PROBLEM\s+company -> companies\.ai_company_id.*--create does not change existing properties/);
    expect(create.stderr).toContain('3 of 9 checks failed');
  });

  it('reports a refused HubSpot token as an auth failure naming its variable (exit 2)', async () => {
    const { basePath } = await hubspot();
    const config = writeHubSpotConfig(tempDir(), basePath);

    const result = await runCli(['check-setup', '--config', config], { env: { HUBSPOT_ACCESS_TOKEN: 'pat-na1-revoked' } });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('auth failed: the token in HUBSPOT_ACCESS_TOKEN was refused');
    expect(result.stderr).not.toContain('checks failed');
    expect(result.stdout).toBe('');
  });

  it('requires Salesforce external ids to be External ID, Unique and case-sensitive, and allowlisted fields to exist and be writable', async () => {
    const { fake, path } = await salesforce({
      contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName', 'Score__c', 'Nickname__c'] },
      account: { kind: 'record', sobject: 'Account', externalIdField: 'AI_External_Id__c', fields: ['Name'] },
      task: { kind: 'activity', sobject: 'Task', externalIdField: 'AI_Idempotency_Key__c', fields: ['Subject'], parents: { contact: 'WhoId' } },
    });
    fake.defineField('Contact', 'AI_External_Id__c', { externalId: true, unique: true, caseSensitive: false });
    fake.defineField('Account', 'AI_External_Id__c', { externalId: true, unique: false });
    fake.defineField('Contact', 'Score__c', { createable: false, updateable: false });

    const result = await runCli(['check-setup', '--create', '--config', path], { env: { SF_ACCESS_TOKEN: SF_TOKEN } });

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/PROBLEM\s+contact -> Contact\.AI_External_Id__c .*is case-insensitive.*Fix: --create cannot change an existing field: in Setup > Object Manager > Contact > Fields & Relationships > AI_External_Id__c > Edit, choose 'Treat "ABC" and "abc" as different values \(case sensitive\)'/);
    expect(result.stdout).toMatch(/PROBLEM\s+account -> Account\.AI_External_Id__c .*is not Unique.*Fix: .*tick Unique/);
    expect(result.stdout).toMatch(/PROBLEM\s+contact -> Contact\.Score__c \(allowlisted\): .*read-only for this user \(cannot create or update it\).*field-level security/);
    expect(result.stdout).toMatch(/MISSING\s+contact -> Contact\.Nickname__c \(allowlisted\): field Contact\.Nickname__c does not exist.*remove it from objects\.contact\.fields/);
    expect(result.stdout).toMatch(/ok\s+task -> Task\.AI_Idempotency_Key__c/);
    expect(result.stdout).toMatch(/ok\s+task -> Task\.WhoId \(allowlisted\)/);
    expect(result.stderr).toContain('4 of 10 checks failed');
  });

  it('reports a refused Salesforce token as an auth failure naming its variable (exit 2)', async () => {
    const { path } = await salesforce({ contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email'] } });

    const result = await runCli(['check-setup', '--config', path], { env: { SF_ACCESS_TOKEN: 'expired' } });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('auth failed: the token in SF_ACCESS_TOKEN was refused');
    expect(result.stderr).not.toContain('checks failed');
  });
});
