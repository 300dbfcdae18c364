import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { ensureBuilt, runCli, setupFakes, tempDir, writeHubSpotConfig } from './helpers.js';

const HS_TOKEN = 'pat-na1-drift-token';
const SF_TOKEN = '00Ddrift!setup.token';
const HS_ENV = { HUBSPOT_ACCESS_TOKEN: HS_TOKEN };
const SF_ENV = { SF_ACCESS_TOKEN: SF_TOKEN };

const opts = (...values: string[]) => values.map((value) => ({ value, label: value }));
/** A line of the report: its mark, `object -> target (role)`, then its detail. */
const line = (mark: string, target: string, detail: string) => new RegExp(`${mark}\\s+\\S+ -> ${target.replace(/\./g, '\\.')} \\(field definitions\\): [^\\n]*${detail}`);

describe('crm-upsert check-setup: field definitions drift, lookupBy and readFields', () => {
  const { hubspot, salesforce, stopAll } = setupFakes({ hubspot: HS_TOKEN, salesforce: SF_TOKEN });
  beforeAll(() => ensureBuilt());
  afterEach(() => stopAll());

  function writeFields(dir: string, file: Omit<FieldDefinitionsFile, 'pulledAt'>): string {
    const path = join(dir, 'fields.json');
    writeFileSync(path, JSON.stringify({ pulledAt: '2026-11-01', ...file }));
    return path;
  }

  const HS_OBJECTS = {
    contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'lifecyclestage', 'ai_tier', 'ai_score', 'favorite_color', 'jobtitle'] },
    deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealname', 'dealstage', 'amount'] },
  };

  it('lists each HubSpot drift by object and field, problems failing the check (exit 1), in one properties read per object type and one pipelines read', async () => {
    const { fake, basePath } = await hubspot();
    fake.defineProperty('contacts', 'lifecyclestage', { type: 'enumeration', fieldType: 'radio', options: [...opts('lead', 'customer', 'evangelist', 'other'), { value: 'subscriber', label: 'Subscriber', hidden: true }] });
    fake.defineProperty('contacts', 'ai_tier', { type: 'enumeration', options: ['gold', 'silver'] });
    fake.defineProperty('contacts', 'ai_score', { type: 'number', calculated: true });
    const dir = tempDir();
    const fields = writeFields(dir, {
      crm: 'hubspot', apiVersion: 'crm/v3',
      objects: {
        contact: {
          email: { type: 'string' },
          lifecyclestage: { type: 'enumeration', options: opts('subscriber', 'lead', 'customer', 'partner') },
          ai_tier: { type: 'string' },
          ai_score: { type: 'number' },
          favorite_color: { type: 'string' },
        },
        deal: {
          dealname: { type: 'string' }, amount: { type: 'number' },
          dealstage: { type: 'enumeration', options: opts('appointmentscheduled', 'qualifiedtobuy', 'presentationscheduled', 'decisionmakerboughtin', 'contractsent', 'closedwon', 'closedlost', 'legacy_stage') },
        },
      },
    });
    const config = writeHubSpotConfig(dir, basePath, { fieldDefinitions: fields }, { objects: HS_OBJECTS });

    const result = await runCli(['check-setup', '--config', config], { env: HS_ENV });

    expect(result.code).toBe(1);
    const out = result.stdout;
    expect(out).toMatch(line('PROBLEM', 'contacts.lifecyclestage', '1 option removed in the CRM: partner: the file still allows it, the CRM refuses it'));
    expect(out).toMatch(line('WARNING', 'contacts.lifecyclestage', '1 option now hidden or inactive in the CRM: subscriber \\(the CRM still accepts it in a write\\)'));
    expect(out).toMatch(line('WARNING', 'contacts.lifecyclestage', '2 options added in the CRM: evangelist, other: the file refuses them'));
    expect(out).toMatch(line('PROBLEM', 'contacts.ai_tier', 'type changed from string \\(file\\) to enumeration \\(CRM\\)'));
    expect(out).toMatch(line('PROBLEM', 'contacts.ai_score', 'read-only now'));
    expect(out).toMatch(line('PROBLEM', 'contacts.favorite_color', 'the CRM no longer has it'));
    expect(out).toMatch(line('WARNING', 'contacts.jobtitle', 'the CRM has it \\(string\\), the file does not'));
    expect(out).toMatch(line('PROBLEM', 'deals.dealstage', '1 option removed in the CRM: legacy_stage'));
    expect(out).toMatch(line('WARNING', 'deals.dealstage', 'its stages now keep their pipeline \\(pipeline\\)'));
    expect(out).toMatch(line('WARNING', 'contacts.email', 'typed email now \\(the file says string\\)'));
    expect(out).not.toMatch(/deals\.(dealname|amount) \(field definitions\)/);
    expect(out).toContain(`Fix: run \`crm-upsert schema pull --out ${fields}\` to refresh the file, then review and commit it`);
    expect(result.stderr).toMatch(/checks failed \(5 warnings\)/);
    expect(fake.counts()).toEqual({ 'GET /crm/v3/properties/contacts': 1, 'GET /crm/v3/properties/deals': 1, 'GET /crm/v3/pipelines/deals': 1 });
  });

  it('passes with warnings only (exit 0) when the file is narrower than HubSpot, and reads no pipelines when no stage is allowlisted', async () => {
    const { fake, basePath } = await hubspot();
    const dir = tempDir();
    const fields = writeFields(dir, {
      crm: 'hubspot', apiVersion: 'crm/v3',
      objects: { contact: { email: { type: 'email' }, lifecyclestage: { type: 'enumeration', options: opts('lead', 'customer') } } },
    });
    const objects = { contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email', 'lifecyclestage'] } };
    const config = writeHubSpotConfig(dir, basePath, { fieldDefinitions: fields }, { objects });

    const result = await runCli(['check-setup', '--config', config], { env: HS_ENV });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(line('WARNING', 'contacts.lifecyclestage', '6 options added in the CRM: subscriber, marketingqualifiedlead, salesqualifiedlead, opportunity, evangelist, other'));
    expect(result.stdout).toContain('all 4 checks passed (1 warning)');
    expect(fake.counts()).toEqual({ 'GET /crm/v3/properties/contacts': 1 });
  });

  it('finds no drift in the file schema pull just wrote (exit 0), and says when no file is configured', async () => {
    const { basePath } = await hubspot();
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, basePath, {}, { objects: HS_OBJECTS });
    const withFile = writeHubSpotConfig(tempDir(), basePath, { fieldDefinitions: 'crm-upsert.fields.json' }, { objects: { ...HS_OBJECTS, contact: { ...HS_OBJECTS.contact, fields: ['email', 'lifecyclestage', 'jobtitle'] } } });

    const pull = await runCli(['schema', 'pull', '--config', withFile], { env: HS_ENV, cwd: dir });
    const clean = await runCli(['check-setup', '--config', withFile], { env: HS_ENV, cwd: dir });
    const none = await runCli(['check-setup', '--config', config], { env: HS_ENV, cwd: dir });

    expect(pull.code).toBe(0);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/ok\s+fieldDefinitions -> crm-upsert\.fields\.json \(field definitions\): pulled \d{4}-\d{2}-\d{2}; every configured object's allowlisted fields match HubSpot now/);
    expect(clean.stdout).not.toMatch(/WARNING|PROBLEM/);
    expect(clean.stdout).toContain('all 9 checks passed\n');
    expect(none.stdout).toMatch(/info\s+fieldDefinitions -> \(none\) \(field definitions\): no field definitions file in the config, so no drift check/);
    expect(none.stdout).not.toContain('Fix: run `crm-upsert schema pull');
  });

  it('reports a failed pipelines read as a drift problem, the other checks still made', async () => {
    const { fake, basePath } = await hubspot();
    const dir = tempDir();
    const fields = writeFields(dir, { crm: 'hubspot', apiVersion: 'crm/v3', objects: { deal: { dealstage: { type: 'enumeration', options: opts('closedwon') } } } });
    const objects = { deal: { kind: 'record', objectType: 'deals', idProperty: 'ai_external_id', fields: ['dealstage'] } };
    const config = writeHubSpotConfig(dir, basePath, { fieldDefinitions: fields }, { objects });
    fake.failNext('server_error', { endpoint: '/crm/v3/pipelines/deals' });

    const result = await runCli(['check-setup', '--config', config], { env: HS_ENV });

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/ok\s+deal -> deals\.dealstage \(allowlisted\)/);
    expect(result.stdout).toMatch(/PROBLEM\s+fieldDefinitions -> the CRM's field definitions \(field definitions\): reading them to compare with the file failed: the CRM answered HTTP 503\. Fix: run check-setup again/);
    expect(result.stderr).toContain('1 of 3 checks failed');
  });

  it('reports a field definitions file that cannot be loaded as a problem naming it', async () => {
    const { basePath } = await hubspot();
    const dir = tempDir();
    const config = writeHubSpotConfig(dir, basePath, { fieldDefinitions: join(dir, 'missing.json') });

    const result = await runCli(['check-setup', '--config', config], { env: HS_ENV });

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/PROBLEM\s+fieldDefinitions -> \S+missing\.json \(field definitions\): no such file \(crm-upsert schema pull writes it\)\. Fix: run `crm-upsert schema pull --out \S+missing\.json`/);
  });

  it('checks HubSpot lookupBy fields are unique (contacts email is) and readFields exist, from the same property reads', async () => {
    const { fake, basePath } = await hubspot();
    fake.defineProperty('companies', 'ai_vat_number');
    fake.defineProperty('companies', 'ai_registry_id', { unique: true });
    const objects = {
      contact: { kind: 'record', objectType: 'contacts', idProperty: 'ai_external_id', fields: ['email'], lookupBy: ['email'], readFields: ['hubspot_owner_id', 'ai_nickname'] },
      company: { kind: 'record', objectType: 'companies', idProperty: 'ai_external_id', fields: ['name'], lookupBy: ['ai_registry_id', 'ai_vat_number', 'ai_duns'] },
    };
    const config = writeHubSpotConfig(tempDir(), basePath, {}, { objects });

    const result = await runCli(['check-setup', '--config', config], { env: HS_ENV });

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/ok\s+contact -> contacts\.email \(lookupBy: unique\): HubSpot keeps one contact per email address and reads contacts by it/);
    expect(result.stdout).toMatch(/ok\s+company -> companies\.ai_registry_id \(lookupBy: unique\)\n/);
    expect(result.stdout).toMatch(/PROBLEM\s+company -> companies\.ai_vat_number \(lookupBy: unique\): companies\.ai_vat_number does not require unique values, so HubSpot refuses to read by it\. Fix: HubSpot cannot make an existing property unique/);
    expect(result.stdout).toMatch(/MISSING\s+company -> companies\.ai_duns \(lookupBy: unique\): property companies\.ai_duns does not exist/);
    expect(result.stdout).toMatch(/ok\s+contact -> contacts\.hubspot_owner_id \(readFields\)/);
    expect(result.stdout).toMatch(/MISSING\s+contact -> contacts\.ai_nickname \(readFields\): property contacts\.ai_nickname does not exist, so a read cannot answer it\. Fix: remove it from objects\.contact\.readFields/);
    expect(result.stderr).toContain('3 of 10 checks failed: contacts.ai_nickname, companies.ai_vat_number, companies.ai_duns');
    expect(fake.counts()).toEqual({ 'GET /crm/v3/properties/contacts': 1, 'GET /crm/v3/properties/companies': 1 });
  });

  const SF_OBJECTS = {
    contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'FirstName', 'LastName', 'Level__c', 'Region__c', 'Tier__c', 'Score__c', 'Fax__c', 'Phone'] },
  };

  it('lists each Salesforce drift by object and field in the one describe check-setup reads', async () => {
    const dir = tempDir();
    const { fake, path } = await salesforce(SF_OBJECTS, { fieldDefinitions: join(dir, 'fields.json') }, dir);
    fake.defineField('Contact', 'FirstName', { type: 'string', length: 20 });
    fake.defineField('Contact', 'LastName', { type: 'string', length: 120, required: true });
    fake.defineField('Contact', 'Level__c', { type: 'picklist', restrictedPicklist: true, picklistValues: [{ value: 'Primary' }, { value: 'Secondary', active: false }, { value: 'Tertiary' }, { value: 'Quaternary' }] });
    fake.defineField('Contact', 'Region__c', { type: 'picklist', restrictedPicklist: true, picklistValues: [{ value: 'EMEA' }, { value: 'APAC' }] });
    fake.defineField('Contact', 'Tier__c', { type: 'double' });
    fake.defineField('Contact', 'Score__c', { type: 'double', createable: false, updateable: false });
    writeFields(dir, {
      crm: 'salesforce', apiVersion: '60.0',
      objects: {
        contact: {
          Email: { type: 'email', maxLength: 80 },
          FirstName: { type: 'string', maxLength: 40 },
          LastName: { type: 'string', maxLength: 80 },
          Level__c: { type: 'enumeration', restricted: true, options: opts('Primary', 'Secondary', 'Tertiary', 'Obsolete') },
          Region__c: { type: 'enumeration', restricted: false, options: opts('EMEA', 'APAC') },
          Tier__c: { type: 'string', maxLength: 10 },
          Score__c: { type: 'number' },
          Fax__c: { type: 'phone', maxLength: 40 },
        },
      },
    });

    const result = await runCli(['check-setup', '--config', path], { env: SF_ENV });

    expect(result.code).toBe(1);
    const out = result.stdout;
    expect(out).toMatch(line('PROBLEM', 'Contact.FirstName', 'length changed from 40 to 20 characters: longer values the file allows are refused'));
    expect(out).toMatch(line('WARNING', 'Contact.LastName', 'length changed from 80 to 120 characters'));
    expect(out).toMatch(line('PROBLEM', 'Contact.Level__c', '1 option removed in the CRM: Obsolete'));
    expect(out).toMatch(line('PROBLEM', 'Contact.Level__c', '1 option now hidden or inactive in the CRM: Secondary: the file still allows it, the CRM refuses it'));
    expect(out).toMatch(line('WARNING', 'Contact.Level__c', '1 option added in the CRM: Quaternary'));
    expect(out).toMatch(line('PROBLEM', 'Contact.Region__c', 'restricted now: values outside its options are refused'));
    expect(out).toMatch(line('PROBLEM', 'Contact.Tier__c', 'type changed from string \\(file\\) to number \\(CRM\\)'));
    expect(out).toMatch(line('PROBLEM', 'Contact.Score__c', 'read-only now'));
    expect(out).toMatch(line('PROBLEM', 'Contact.Fax__c', 'the CRM no longer has it'));
    expect(out).toMatch(line('WARNING', 'Contact.Phone', 'the CRM has it \\(phone\\), the file does not'));
    expect(out).not.toMatch(/Contact\.Email \(field definitions\)/);
    expect(fake.counts()).toEqual({ 'GET /sobjects/Contact/describe': 1 });
  });

  it('warns that a Salesforce lookupBy field that is not Unique (Contact Email) may match several records, passing the check (exit 0); a readFields field that does not exist fails it', async () => {
    const objects = (readFields: string[]) => ({
      contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['LastName'], lookupBy: ['Email', 'AI_External_Id__c'], readFields },
    });
    const ok = await salesforce(objects(['Birthdate']));
    const missing = await salesforce(objects(['Birthdate', 'Nickname__c']));

    const warned = await runCli(['check-setup', '--config', ok.path], { env: SF_ENV });
    const failed = await runCli(['check-setup', '--config', missing.path], { env: SF_ENV });

    expect(warned.code).toBe(0);
    expect(warned.stdout).toMatch(/WARNING\s+contact -> Contact\.Email \(lookupBy: unique\): Contact\.Email is not Unique: a read by it may match several records, and then answers that value as not found with `matches`/);
    expect(warned.stdout).toMatch(/ok\s+contact -> Contact\.AI_External_Id__c \(lookupBy: unique\)\n/);
    expect(warned.stdout).toMatch(/ok\s+contact -> Contact\.Birthdate \(readFields\)/);
    expect(warned.stdout).toContain('all 5 checks passed (1 warning)');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/MISSING\s+contact -> Contact\.Nickname__c \(readFields\): field Contact\.Nickname__c does not exist \(or this user cannot see it\), so a read cannot answer it/);
    expect(failed.stderr).toContain('1 of 6 checks failed (1 warning): Contact.Nickname__c');
    expect(ok.fake.counts()).toEqual({ 'GET /sobjects/Contact/describe': 1 });
  });
});
