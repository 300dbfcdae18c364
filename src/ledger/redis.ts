/** The Redis ledger under its former module path; the entry is ./redis/index.ts. */
export * from './redis/index.js';
