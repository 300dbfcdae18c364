/**
 * crm-upsert-sync/salesforce: the Salesforce adapter (jsforce 3.10.16). Loading this entry loads
 * jsforce, an optional peer (`npm install jsforce@~3.10.16`); without it, importing this entry
 * throws one ConfigError naming the package and its range. The package root and /testing do not need it.
 */
export { salesforceAdapter, type SalesforceAdapter } from './salesforce-adapter.js';
export {
  resolveSalesforceOptions,
  type SalesforceAdapterOptions,
  type SalesforceConnection,
  type SalesforceHttpRequest,
  type SalesforceObjectConfig,
  type BulkProgress,
} from './salesforce-options.js';
export { classifySalesforceError, dailyLimitStop, recordError, type ClassifyContext, type SalesforceRecordError } from './salesforce-errors.js';
export { soqlIn, soqlQuote } from './soql.js';
export {
  parseSfError,
  salesforceBulk,
  type BulkJobInfo,
  type BulkResults,
  type BulkRowOutcome,
  type BulkSend,
  type BulkUpsertInput,
  type BulkUpsertResult,
  type SalesforceBulk,
  type SalesforceBulkOptions,
} from './salesforce-bulk.js';
export { CSV_NULL, csvCell, CsvSyntaxError, parseCsv, parseCsvTable, toCsv, type CsvTable, type CsvValue } from './salesforce-csv.js';
