/**
 * Exit codes of `crm-upsert` (DESIGN.md, CLI): the contract scripts and schedulers rely on.
 */
export const ExitCode = {
  /** Every action completed, replayed, unchanged or suppressed. */
  ok: 0,
  /** Some action was rejected, failed or left in flight (each is in the report). */
  problems: 1,
  /** Usage or configuration error (the message names the flag or field). */
  usage: 2,
  /** Another run of the same --job holds the lock. */
  locked: 3,
  /** Stopped by SIGINT / SIGTERM after finishing the batch in flight. */
  sigint: 130,
  sigterm: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A usage or configuration problem: printed without a stack, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
