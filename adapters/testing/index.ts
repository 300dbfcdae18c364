export * from './fake-http.js';
export { fakeHubSpot, FakeHubSpotState, HubSpotFault, type FakeHubSpot, type FakeHubSpotAssociation, type FakeHubSpotOptions, type FakeHubSpotRecord, type FakePipeline, type FakePropertyDefinition } from '../hubspot/fake/hubspot-fake.js';
export { BulkJobState, fakeSalesforce, type FakeBulkJob, type FakeBulkOptions, type FakeBulkUsage, type FakeSalesforce, type FakeSalesforceOptions, type FakeFieldOptions, type FakeFieldType, type FakePicklistValue, type FakeRecord, type SalesforceFault } from '../salesforce/fake/salesforce-fake.js';
export {
  fakePipedrive,
  FakePipedriveState,
  PipedriveFault,
  type FakePipedrive,
  type FakePipedriveOptions,
  type FakeActivity as FakePipedriveActivity,
  type FakeEntity as FakePipedriveEntity,
  type FakeNote as FakePipedriveNote,
  type FakeRecord as FakePipedriveRecord,
} from '../pipedrive/fake/pipedrive-fake.js';
export {
  adapterConformance,
  type AdapterHarness,
  type ConformanceAssertion,
  type ConformanceFault,
  type ConformanceTestApi,
} from './adapter-conformance.js';
export { ledgerConformance, type LedgerConformanceOptions, type TestFramework } from '../../src/ledger/conformance/index.js';
