/**
 * The CRMs the CLI speaks: config `crm` value -> its VendorCli (adapters/<vendor>/<vendor>-cli.ts).
 * The only place in src/cli that names a CRM; adding one is one line here. Loading an entry
 * loads no SDK: each VendorCli imports its client when it first builds an adapter. The SDKs are
 * optional peers, so a config naming a CRM whose SDK is not installed fails there, before any
 * write, with the message naming the package and the range to install (exit 2).
 */
import type { VendorCli } from '../../adapters/kit/vendor-cli.js';
import { hubspotCli } from '../../adapters/hubspot/hubspot-cli.js';
import { salesforceCli } from '../../adapters/salesforce/salesforce-cli.js';
import { pipedriveCli } from '../../adapters/pipedrive/pipedrive-cli.js';

export const VENDORS = {
  hubspot: hubspotCli,
  salesforce: salesforceCli,
  pipedrive: pipedriveCli,
} as const satisfies Record<string, VendorCli<unknown>>;

export type VendorName = keyof typeof VENDORS;

/** The `crm` values, in registry order (the first is the demo's default). */
export const VENDOR_NAMES = Object.keys(VENDORS) as [VendorName, ...VendorName[]];

/** The VendorCli of a config's `crm` (validated against VENDOR_NAMES when the config was parsed). */
export function vendorOf(crm: string): VendorCli<unknown> {
  const vendor = (VENDORS as Record<string, VendorCli<unknown>>)[crm];
  if (!vendor) throw new Error(`unknown crm "${crm}"; known: ${VENDOR_NAMES.join(', ')}`);
  return vendor;
}
