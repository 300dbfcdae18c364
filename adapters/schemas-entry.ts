/**
 * `crm-upsert-sync/schemas`: the zod schemas (schemas/, which import nothing of ours), the config of
 * the built-in CRMs, and `parseWith`, which throws this package's ValidationError.
 */
export * from '../schemas/index.js';
export * from './config-schema.js';
export { parseWith } from '../src/parse-with.js';
