/**
 * Loading a vendor SDK, which is an optional peer dependency: a user installs only the client of
 * the CRM they use. An entry whose SDK is missing fails on import with one message naming the
 * package, the supported range and the install command; the CLI prints it and exits 2.
 *
 * The SDKs are CommonJS and the adapter factories are synchronous, so the SDK is required
 * synchronously (no top-level await, which would keep the entries from being `require()`d).
 */
import { createRequire } from 'node:module';
import { isMissingPackage, missingPeerMessage, requireOptional, type OptionalPeer } from '../../src/optional-package.js';

export { isMissingPackage };

export interface VendorSdk extends OptionalPeer {
  /** The package entry that needs it: `crm-upsert-sync/hubspot`. */
  entry: string;
}

export const HUBSPOT_SDK: VendorSdk = { entry: 'crm-upsert-sync/hubspot', name: '@hubspot/api-client', range: '>=13.5.0 <15', install: '@hubspot/api-client@^13.5' };
export const SALESFORCE_SDK: VendorSdk = { entry: 'crm-upsert-sync/salesforce', name: 'jsforce', range: '>=3.10.16 <4', install: 'jsforce@~3.10.16' };

/** `crm-upsert-sync/hubspot needs @hubspot/api-client (>=13.5.0 <15): npm install @hubspot/api-client@^13.5` */
export function missingSdkMessage(sdk: VendorSdk): string {
  return missingPeerMessage(sdk.entry, sdk);
}

/** The SDK's module, or a ConfigError with `missingSdkMessage` when it is not installed. */
export function loadVendorSdk<T>(sdk: VendorSdk, require: (id: string) => unknown = createRequire(import.meta.url)): T {
  return requireOptional<T>(sdk.name, missingSdkMessage(sdk), require);
}
