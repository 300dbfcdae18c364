/**
 * fakeSalesforce(): an in-memory Salesforce org speaking the REST wire format jsforce 3.10.16
 * uses (CRM-API.md §2), on the shared FakeHttpCore (seeded faults, request counts, nock and
 * loopback fronts). It enforces what a real org does to a sync: External ID uniqueness,
 * 200-record collections, unknown fields rejected, required fields (Opportunity Name, StageName,
 * CloseDate), lookups that must point at a real record of the right sObject (Task WhoId: Contact
 * or Lead; WhatId: Account, Opportunity, Case), parents named by External ID
 * (`Account: { AI_External_Id__c: 'acme' }`), per-record errors inside an HTTP 200, field values
 * (restricted picklists, lengths, unreadable dates failing the whole request) and the daily API
 * allocation, and Bulk API 2.0 ingest jobs (salesforce-fake-bulk.ts: processed over several
 * job-info reads, rows written by the same rules, result rows out of upload order, the daily
 * record and batch allowances). The sales
 * objects and lookup rules live in salesforce-fake-references.ts, the value rules in
 * salesforce-fake-values.ts.
 *
 * The org itself lives in salesforce-fake-state.ts; this file only puts it behind the fronts.
 */
import { FakeHttpCore, fakeCrmBase, type FakeCrmBase, interceptWithNock, listenLoopback, type FakeRequest, type FaultKind } from '../../testing/fake-http.js';
import { BulkJobState, type FakeBulkJob, type FakeBulkOptions, type FakeBulkUsage } from './salesforce-fake-bulk.js';
import { FakeSalesforceState, type FakeFieldOptions, type FakeFieldType, type FakePicklistValue, type FakeRecord, type FakeSalesforceOptions, type SalesforceFault } from './salesforce-fake-state.js';

export { BulkJobState, type FakeBulkJob, type FakeBulkOptions, type FakeBulkUsage };
export { FakeSalesforceState, type FakeFieldOptions, type FakeFieldType, type FakePicklistValue, type FakeRecord, type FakeSalesforceOptions, type SalesforceFault };

export interface FakeSalesforce extends FakeCrmBase<FaultKind | SalesforceFault> {
  /** Serve on loopback; `instanceUrl` is `http://127.0.0.1:PORT`. */
  listen(port?: number): Promise<{ instanceUrl: string; close(): Promise<void> }>;
  /** Intercept `origin` with nock. */
  intercept(origin?: string): Promise<{ instanceUrl: string; stop(): void }>;
  /** Copies of the records of one sObject, in creation order. */
  records(sobject: string): FakeRecord[];
  defineField(sobject: string, name: string, options?: FakeFieldOptions): void;
  /** Remove a field (the org does not have it). */
  removeField(sobject: string, name: string): void;
  /** Delete a record as a user does (see `FakeSalesforceState.delete`): a lookup to its Id is then ENTITY_IS_DELETED. */
  delete(sobject: string, id: string): boolean;
  /** Merge one or two records into `masterId` as Salesforce's merge does (see `FakeSalesforceState.merge`): the master keeps its Id, the others are deleted with MasterRecordId. */
  merge(sobject: string, masterId: string, ...mergedIds: string[]): void;
  /** Copies of the records merged away (`IsDeleted`, `MasterRecordId`), as queryAll answers them. */
  mergedRecords(sobject: string): FakeRecord[];
  setApiUsage(used: number, limit?: number): void;
  apiUsage(): { used: number; limit: number };
  /** The next `n` records written fail with UNABLE_TO_LOCK_ROW (nothing committed for them). */
  lockRowNext(n?: number): void;
  /** A validation rule: records for which `test` is true fail with FIELD_CUSTOM_VALIDATION_EXCEPTION. */
  addValidationRule(sobject: string, test: (record: FakeRecord) => boolean, message: string): void;
  /** A duplicate rule on `field`: creating a record matching another on it fails with DUPLICATES_DETECTED unless allowSave. */
  addDuplicateRule(sobject: string, field: string): void;
  /**
   * The Bulk API 2.0 ingest jobs created (deleted ones left out), oldest first: object, operation,
   * state, rows uploaded, processed and failed, and the error message of a job failed whole.
   */
  bulkJobs(): FakeBulkJob[];
  /** What ingest jobs used of the daily Bulk API allowances (records, batches) in the current window, and the allowances. */
  bulkUsage(): FakeBulkUsage;
  /** Set the Bulk API usage (and, given, the allowances): `{ records: 0, batches: 0 }` is the 24-hour window moving on. */
  setBulkUsage(used: { records?: number; batches?: number }, limits?: { dailyRecords?: number; dailyBatches?: number }): void;
  /** Every request received (Authorization removed), for wire-level assertions. */
  requests: FakeRequest[];
}

export function fakeSalesforce(options: FakeSalesforceOptions = {}): FakeSalesforce {
  return fakeSalesforceFromState(new FakeSalesforceState(options));
}

/** fakeSalesforce over an org built (and perhaps seeded) beforehand; faults come from its options. */
export function fakeSalesforceFromState(state: FakeSalesforceState): FakeSalesforce {
  const core = new FakeHttpCore(state, state.faultOptions);
  return {
    ...fakeCrmBase<FaultKind | SalesforceFault>(core, 'https://fake.my.salesforce.com'),
    requests: state.requests,
    async listen(port = 0) {
      const server = await listenLoopback(core, port);
      return { instanceUrl: server.url, close: () => server.close() };
    },
    async intercept(origin = 'https://fake.my.salesforce.com') {
      const front = await interceptWithNock(core, origin);
      return { instanceUrl: origin, stop: () => front.stop() };
    },
    records: (sobject) => state.records(sobject),
    defineField: (sobject, name, o) => state.defineField(sobject, name, o),
    removeField: (sobject, name) => state.removeField(sobject, name),
    delete: (sobject, id) => state.delete(sobject, id),
    merge: (sobject, masterId, ...mergedIds) => state.merge(sobject, masterId, ...mergedIds),
    mergedRecords: (sobject) => state.mergedRecords(sobject),
    setApiUsage: (used, limit) => state.setApiUsage(used, limit),
    apiUsage: () => state.apiUsage(),
    lockRowNext: (n) => state.lockRowNext(n),
    addValidationRule: (sobject, test, message) => state.addValidationRule(sobject, test, message),
    addDuplicateRule: (sobject, field) => state.addDuplicateRule(sobject, field),
    bulkJobs: () => state.bulk.list(),
    bulkUsage: () => state.bulk.bulkUsage(),
    setBulkUsage: (used, limits) => state.bulk.setBulkUsage(used, limits),
  };
}
