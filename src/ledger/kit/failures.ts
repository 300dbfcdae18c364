/** The LedgerErrors every backend raises, worded once. */
import { LedgerError } from '../../errors.js';

/** A backend call that failed: `<backend> ledger <what> failed: <driver message>`, the cause kept. */
export const ledgerFailure = (backend: string, what: string, err: unknown): LedgerError =>
  new LedgerError(`${backend} ledger ${what} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });

/** A write to a ledger opened with createSchema: false. `store` names it: `sqlite ledger at PATH`. */
export const readOnlyRefusal = (store: string, what: string): LedgerError =>
  new LedgerError(`${store} is opened read-only (createSchema: false): ${what} refused`);
