/** What the backends share: the entry codec, owned-or-borrowed connections, the errors they raise. */
export * from './codec.js';
export * from './connection.js';
export * from './failures.js';
