/**
 * Exit codes of `crm-upsert` (DESIGN.md, CLI): the contract scripts and schedulers rely on.
 */
import { ConfigError, LedgerError } from '../errors.js';

export const ExitCode = {
  /** Every action completed, replayed, unchanged, superseded or suppressed. */
  ok: 0,
  /** Some action was rejected, failed or left in flight (each is in the report). */
  problems: 1,
  /** Usage, configuration or auth error (the message names the flag, field or token). */
  usage: 2,
  /** Another run of the same --job holds the lock. */
  locked: 3,
  /** Stopped by an infrastructure fault (ledger or CRM unreachable); the summary and report say what was done. */
  infra: 4,
  /**
   * The reader of stdout went away (`| head`) while a command that only prints was printing:
   * 128 + SIGPIPE, what a Unix tool killed by SIGPIPE ends with.
   */
  outputClosed: 141,
  /** Stopped by SIGINT / SIGTERM after finishing the batch in flight. */
  sigint: 130,
  sigterm: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit codes as `--help` and docs/cli.md list them. */
export const EXIT_CODES_HELP = `Exit codes:
  0        every action completed, replayed, unchanged, superseded or suppressed
  1        some action rejected, failed or in flight (each in the report)
  2        usage, config or auth error (checked before the first write where possible)
  3        another run of the same --job holds the lock
  4        stopped by an infrastructure fault (ledger or CRM unreachable); the summary and report say what was done
  130/143  stopped by SIGINT / SIGTERM
  141      stdout closed by its reader (e.g. | head) while a command that only prints was printing`;

export { plainMessage } from '../errors.js';

/** A usage or configuration problem: printed without a stack, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Socket-level failures: the store or the CRM could not be reached or dropped the connection. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET']);
/** What ioredis and pg throw when their connection is gone (they carry no errno code). */
const CONNECTION_MESSAGES = /connection is closed|connection terminated|max retries per request|stream isn't writeable|client has encountered a connection error/i;

/**
 * True when `err` means the run could not go on for reasons outside the input and the config:
 * a ledger error, or a driver's connection error anywhere down the cause chain. Exit 4.
 */
export function isInfrastructureFault(err: unknown): boolean {
  if (err instanceof ConfigError) return false;
  if (err instanceof LedgerError) return true;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth += 1) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (e.name === 'MaxRetriesPerRequestError' || CONNECTION_MESSAGES.test(e.message)) return true;
  }
  return false;
}
