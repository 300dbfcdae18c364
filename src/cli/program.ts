/**
 * The `crm-upsert` program (commander 14): one subcommand per file, every command returns its
 * exit code; a usage or config error exits 2 with a message naming the flag or field, and a
 * ledger or connection fault that escapes a command exits 4.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../errors.js';
import { checkSetupCommand } from './check-setup.js';
import { DEFAULT_CONFIG_PATH, registerEnvSecrets } from './config.js';
import { demoCommand } from './demo.js';
import { fakeServerCommand } from './fake-server.js';
import { getCommand, type GetFlags } from './get.js';
import { initCommand, TEMPLATES, type Template } from './init.js';
import { MCP_TOKEN_ENV, mcpCommand, parsePort, type McpFlags } from './mcp.js';
import { EXIT_CODES_HELP, ExitCode, isInfrastructureFault, plainMessage, UsageError } from './exit.js';
import { DEFAULT_MAX_LINE_BYTES } from './jsonl.js';
import { ledgerJobsCommand, ledgerListCommand, ledgerMigrateCommand, ledgerPruneCommand, ledgerShowCommand } from './ledger.js';
import { queueFailedCommand, queuePart, queueRemoveCommand, queueRetryCommand, queueStatsCommand } from './queue.js';
import { retryFailedCommand } from './retry-failed.js';
import { DEFAULT_FIELDS_FILE, schemaCommand, schemaPullCommand } from './schema.js';
import { SCHEMA_DIALECTS, type SchemaDialect } from '../tool-schema.js';
import { serveCommand } from './serve.js';
import { DEFAULT_BATCH_SIZE, syncCommand } from './sync.js';
import { BULK_MODES } from './sync-input.js';
import { VENDOR_NAMES } from './vendors.js';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer.');
  return n;
};

/**
 * The --config of a subcommand whose parent takes --config too (`schema pull`): commander lets the
 * parent parse it on either side of the subcommand's name, so the value given is on whichever
 * command parsed it; the default otherwise.
 */
function givenConfig(command: Command): string {
  for (let c: Command | null = command; c; c = c.parent) {
    if (c.getOptionValueSource('config') === 'cli') return c.getOptionValue('config') as string;
  }
  return command.getOptionValue('config') as string;
}

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('crm-upsert')
    .description('Make AI-generated CRM writes safe to repeat: the second run does nothing, costs nothing, and says so.')
    .version(version())
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `\n${EXIT_CODES_HELP}\n`);

  const configOption = () => new Option('--config <path>', 'config file').default(DEFAULT_CONFIG_PATH);
  const ledgerOption = () => new Option('--ledger <url>', 'ledger URL (memory:, sqlite:PATH, postgres://, redis://); default: the config\'s ledger, else .crm-upsert/ledger.db next to the config file');

  program
    .command('demo')
    .description('the main job on embedded defaults: a fake CRM on loopback, examples/ synced twice; the second pass makes 0 API calls')
    .addOption(new Option('--crm <crm>', 'which fake CRM').choices(VENDOR_NAMES).default(VENDOR_NAMES[0]))
    .action(async (opts: { crm: string }) => setExit(await demoCommand(opts)));

  program
    .command('init')
    .description('write a starter crm-upsert.config.json and an example actions.jsonl (never overwrites either)')
    .addOption(new Option('--crm <crm>', 'which CRM the config is for').choices(VENDOR_NAMES).default(VENDOR_NAMES[0]))
    .option('--dir <dir>', 'write into this folder (default: the current one)')
    .addOption(new Option('--template <name>', 'basic: contacts, notes and tasks; sales: contact, company and deal linked, notes and tasks on any of them').choices(TEMPLATES).default('basic'))
    .action(async (opts: { crm: string; dir?: string; template: Template }) => setExit(await initCommand(opts)));

  program
    .command('fake-server')
    .description('serve a fake CRM on 127.0.0.1 until stopped; prints its URL, the config line and the variables pointing at it')
    .addOption(new Option('--crm <crm>', 'which fake CRM').choices(VENDOR_NAMES).makeOptionMandatory())
    .addOption(new Option('--port <n>', 'listen on this port (default: a free one)').argParser(positiveInt))
    .option('--faults <json>', 'seeded faults, e.g. \'{"lostResponse":0.1,"seed":7}\'')
    .addOption(new Option('--template <name>', 'print the whole config section of this starter, objects included (default: only the section\'s first line)').choices(TEMPLATES))
    .action(async (opts: { crm: string; port?: number; faults?: string; template?: Template }) => setExit(await fakeServerCommand(opts)));

  program
    .command('mcp')
    .description('MCP server: upsert_<object> / create_<object> tools safe to call twice, and get_outcome; stdio, or Streamable HTTP with --http')
    .addOption(configOption())
    .addOption(ledgerOption())
    .addOption(new Option('--http <port>', 'serve Streamable HTTP on this port (0: a free one) instead of stdio').argParser(parsePort))
    .option('--host <host>', `with --http: the address to bind (default 127.0.0.1; any other needs ${MCP_TOKEN_ENV})`)
    .action(async (opts: McpFlags) => setExit(await mcpCommand(opts)));

  program
    .command('sync')
    .description('the scheduled job: stream JSONL actions, batch, write, report')
    .argument('<file>', 'JSONL file of actions, or - for stdin')
    .addOption(configOption())
    .addOption(ledgerOption())
    .option('--job <name>', 'hold a lock for this job name: a second overlapping run exits 3')
    .addOption(new Option('--concurrency <n>', 'batches written in parallel').argParser(positiveInt).default(1))
    .addOption(new Option('--batch-size <n>', 'lines looked up at a time, and actions that need a write per call').argParser(positiveInt).default(DEFAULT_BATCH_SIZE))
    .addOption(new Option('--bulk <mode>', 'large upserts through the CRM\'s bulk jobs where it has them (Bulk API 2.0): auto once an object\'s upserts in a call reach the section\'s bulk.minRecords (default 2,000), always, or never').choices(BULK_MODES).default('auto'))
    .option('--dry-run', 'print what each action would do and the payload it would send; no CRM requests, no ledger writes')
    .option('--report <path>', 'write the JSON report here')
    .option('--quiet', 'off a terminal, print only the JSON summary line (no list of problems on stderr)')
    .addOption(new Option('--max-line-bytes <n>', 'reject longer lines without buffering them').argParser(positiveInt).default(DEFAULT_MAX_LINE_BYTES))
    .option('--queue <url>', 'enqueue the file in chunks on this Redis (BullMQ) for `crm-upsert worker`s instead of writing it here')
    .option('--wait', 'with --queue: wait for the workers, then print the summary and write the report')
    .addHelpText('after', `\n${EXIT_CODES_HELP}\n`)
    .action(async (file: string, opts) =>
      setExit(opts.queue ? await (await queuePart('crm-upsert sync --queue', () => import('./sync-queue.js'))).syncQueueCommand(file, opts) : await syncCommand(file, opts)));

  program
    .command('serve')
    .description('receive webhooks: verify each delivery, enqueue its events to the queue, acknowledge; `worker` runs them')
    .addOption(configOption())
    .option('--host <host>', 'listen on this interface (default: webhooks.host, 127.0.0.1)')
    .addOption(new Option('--port <n>', 'listen on this port (default: webhooks.port, 8787; 0 = a free one)').argParser(parsePort))
    .addHelpText('after', `\n${EXIT_CODES_HELP}\n`)
    .action(async (opts) => setExit(await serveCommand(opts)));

  program
    .command('retry-failed')
    .description('re-apply the actions whose last attempt failed')
    .addOption(configOption())
    .addOption(ledgerOption())
    .option('--report <path>', 'write the JSON report here')
    .action(async (opts) => setExit(await retryFailedCommand(opts)));

  program
    .command('worker')
    .description('consume the queue: event jobs through their source\'s handler, chunk jobs of sync --queue; SIGTERM drains')
    .addOption(configOption())
    .addOption(ledgerOption())
    .option('--concurrency <n>', 'jobs run at the same time (default: queue.concurrency, 10)', positiveInt)
    .action(async (opts) => setExit(await (await queuePart('crm-upsert worker', () => import('./worker.js'))).workerCommand(opts)));

  const queue = program.command('queue').description('the queue\'s failed set and counts (BullMQ)');
  const queueUrlOption = () => new Option('--queue <url>', 'Redis URL of the queue (default: the config\'s queue.url)');
  queue
    .command('failed')
    .description('list the failed jobs with their reasons, one JSON line each, newest first')
    .option('--limit <n>', 'at most this many (default 100)', positiveInt)
    .addOption(configOption())
    .addOption(queueUrlOption())
    .action(async (opts) => setExit(await queueFailedCommand(opts)));
  queue
    .command('retry')
    .description('move failed jobs back to wait, attempts reset: all of them, or the ids given')
    .argument('[ids...]', 'job ids (default: every failed job)')
    .addOption(configOption())
    .addOption(queueUrlOption())
    .action(async (ids: string[], opts) => setExit(await queueRetryCommand(ids, opts)));
  queue
    .command('remove')
    .description('remove failed jobs for good (only failed ones): the ids given, or every failed job with --all')
    .argument('[ids...]', 'job ids')
    .option('--all', 'every job in the failed set', false)
    .addOption(configOption())
    .addOption(queueUrlOption())
    .action(async (ids: string[], opts) => setExit(await queueRemoveCommand(ids, opts)));
  queue
    .command('stats')
    .description('jobs per state')
    .addOption(configOption())
    .addOption(queueUrlOption())
    .action(async (opts) => setExit(await queueStatsCommand(opts)));

  const ledger = program.command('ledger').description('inspect and maintain the ledger');
  ledger
    .command('show')
    .description('print one entry as JSON')
    .argument('<key>', 'the idempotency key')
    .addOption(configOption())
    .addOption(ledgerOption())
    .action(async (key: string, opts) => setExit(await ledgerShowCommand(key, opts)));
  ledger
    .command('list')
    .description('print entries as JSON lines, in key order (job locks are listed by `ledger jobs`)')
    .addOption(new Option('--status <status>', 'only this status').choices(['in_progress', 'completed', 'failed']))
    .addOption(new Option('--limit <n>', 'at most this many').argParser(positiveInt).default(100))
    .option('--after <key>', 'keys after this one (paging)')
    .addOption(configOption())
    .addOption(ledgerOption())
    .action(async (opts) => setExit(await ledgerListCommand(opts)));
  ledger
    .command('jobs')
    .description('print each --job lock as a JSON line: running (with its holder and lease) or free (with the last holder)')
    .addOption(configOption())
    .addOption(ledgerOption())
    .action(async (opts) => setExit(await ledgerJobsCommand(opts)));
  ledger
    .command('prune')
    .description('delete expired entries and completed/failed entries older than a duration')
    .requiredOption('--older-than <duration>', 'e.g. 30d, 12h, 15m')
    .addOption(configOption())
    .addOption(ledgerOption())
    .action(async (opts) => setExit(await ledgerPruneCommand(opts)));
  ledger
    .command('migrate')
    .description('create or upgrade the ledger tables')
    .addOption(configOption())
    .addOption(ledgerOption())
    .action(async (opts) => setExit(await ledgerMigrateCommand(opts)));

  program
    .command('get')
    .description('read records by external id (or --by a lookupBy field) and print one JSON line per id; writes nothing')
    .argument('<object>', 'a configured record object')
    .argument('<ids...>', 'external ids (or values of the --by field)')
    .option('--by <field>', 'match the ids on this lookupBy field of the object, e.g. email (default: the external id)')
    .option('--fields <list>', 'comma-separated fields to print (default: the allowlist and readFields)')
    .option('--links', 'also print the records each one is linked to')
    .addOption(configOption())
    .action(async (object: string, ids: string[], opts: GetFlags) => setExit(await getCommand(object, ids, opts)));

  program
    .command('check-setup')
    .description('verify (or --create) the external-id and key fields in the CRM')
    .option('--create', 'create the missing id and key fields where the CRM API allows it (or print their definitions)')
    .addOption(configOption())
    .action(async (opts) => setExit(await checkSetupCommand(opts)));

  const schema = program
    .command('schema')
    .description('print the action JSON Schema, or with --object one object\'s strict tool schema; `schema pull` reads the field definitions from the CRM')
    .option('--object <name>', 'a configured object: its tool schema from the config\'s allowlist, links and field definitions (default: the generic action schema)')
    .addOption(new Option('--for <dialect>', 'keep to this provider\'s strict-schema rules (with --object)').choices(SCHEMA_DIALECTS).default('json-schema'))
    .addOption(configOption())
    .action(async (opts: { object?: string; for: SchemaDialect; config: string }) => setExit(await schemaCommand(opts)));
  schema
    .command('pull')
    .description('read the configured objects\' field definitions from the CRM into crm-upsert.fields.json (commit it; the config\'s "fieldDefinitions" loads it)')
    .addOption(configOption())
    .option('--out <file>', `where to write them (default ${DEFAULT_FIELDS_FILE})`)
    .action(async (opts: { config: string; out?: string }, command: Command) => setExit(await schemaPullCommand({ ...opts, config: givenConfig(command) })));

  return program;
}

/**
 * True for a command whose only effect is what it prints to stdout: when the reader of stdout goes
 * away it can stop at once (closed-output.ts). Anything that writes to the CRM, the ledger, a queue
 * or a file (a --report too) finishes instead.
 */
export function printsOnly(command: Command): boolean {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  const opts = command.opts<{ dryRun?: boolean; queue?: string; report?: string; create?: boolean }>();
  switch (names.join(' ')) {
    case 'sync':
      return Boolean(opts.dryRun) && opts.queue === undefined && opts.report === undefined;
    case 'check-setup':
      return !opts.create;
    case 'get':
    case 'schema':
    case 'ledger show':
    case 'ledger list':
    case 'ledger jobs':
    case 'queue failed':
    case 'queue stats':
      return true;
    default:
      return false;
  }
}

export interface MainHooks {
  /** Called as a command's action starts, with `printsOnly(command)`. */
  onAction?: (printsOnly: boolean) => void;
}

/** Run the CLI; resolves to the exit code. */
export async function main(argv: readonly string[], hooks: MainHooks = {}): Promise<number> {
  registerEnvSecrets();
  let code: number = ExitCode.ok;
  const program = buildProgram((c) => (code = c));
  if (hooks.onAction) program.hook('preAction', (_program, command) => hooks.onAction!(printsOnly(command)));
  try {
    await program.parseAsync([...argv]);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`crm-upsert: ${plainMessage(err)}\n`);
      return ExitCode.usage;
    }
    if (isInfrastructureFault(err)) {
      process.stderr.write(`crm-upsert: stopped by an infrastructure fault: ${plainMessage(err)}\n`);
      return ExitCode.infra;
    }
    process.stderr.write(`crm-upsert: ${plainMessage(err)}\n`);
    return ExitCode.problems;
  }
}
