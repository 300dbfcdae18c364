/** The Postgres ledger under its former module path; the entry is ./postgres/index.ts. */
export * from './postgres/index.js';
