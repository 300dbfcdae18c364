export * from './fake-http.js';
export { fakeHubSpot, FakeHubSpotState, type FakeHubSpot, type FakeHubSpotOptions, type FakeHubSpotRecord, type FakePropertyDefinition } from '../../adapters/hubspot/hubspot-fake.js';
