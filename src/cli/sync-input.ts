/** What `crm-upsert sync` is given: its flags and its input (a file or stdin). */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { BulkMode } from '../engine/types.js';
import { UsageError } from './exit.js';

/** `--bulk`: whether large upserts go through the adapter's bulk lane (a Bulk API 2.0 job), where it has one. */
export const BULK_MODES = ['auto', 'always', 'never'] as const satisfies readonly BulkMode[];

export interface SyncFlags {
  config: string;
  ledger?: string;
  job?: string;
  concurrency?: number;
  batchSize?: number;
  dryRun?: boolean;
  report?: string;
  maxLineBytes?: number;
  /**
   * `auto` (default): an object's upserts in one call go through a bulk job once they reach the
   * lane's `minRecords`; `always`: every upsert the lane accepts; `never`: none.
   */
  bulk?: BulkMode;
  /** Off a terminal, print only the summary line: no list of problems on stderr. */
  quiet?: boolean;
}

/** Open an input: a file path, or `-` for stdin. A missing file is a usage error. */
export async function openInput(file: string): Promise<Readable> {
  if (file === '-') return process.stdin;
  try {
    const s = await stat(file);
    if (!s.isFile()) throw new UsageError(`input ${file} is not a file`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`input file ${file} not found`);
  }
  return createReadStream(file, { highWaterMark: 256 * 1024 });
}
