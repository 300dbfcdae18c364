/**
 * `crm-upsert fake-server --crm C [--port N] [--faults JSON] [--template basic|sales]`: the CRM's fake (the same state
 * machine the tests and the demo use) served on 127.0.0.1 until SIGINT / SIGTERM, so `sync` and
 * `check-setup` can be tried without a CRM. The first stdout line is machine-readable
 * (`{"url": "...", "crm": "..."}`); then the config line and environment variables pointing a
 * run at it. On a signal it closes the server and exits 130 / 143; the fake keeps nothing.
 */
import { z } from 'zod';
import { formatZodIssues } from '../../schemas/parse.js';
import type { FakeServerFaults } from '../../adapters/kit/vendor-cli.js';
import { ExitCode, UsageError } from './exit.js';
import { starterOf, type Template } from './init.js';
import { vendorOf } from './vendors.js';

export interface FakeServerFlags {
  crm: string;
  port?: number;
  faults?: string;
  /** Print this starter's whole section (objects included), pointed at the fake. */
  template?: Template;
}

const probability = z.number().min(0).max(1);

/** The seeded fault options, as JSON: probabilities per request, a seed, latency. */
const faultsSchema = z.strictObject({
  seed: z.number().int(),
  rateLimit: probability,
  serverError: probability,
  reset: probability,
  lostResponse: probability,
  missingResult: probability,
  htmlError: probability,
  retryAfterSeconds: z.number().min(0),
  latencyMs: z.union([z.number().min(0), z.tuple([z.number().min(0), z.number().min(0)])]),
}).partial();

/** Parse `--faults`; invalid JSON or an unknown key is a usage error naming it. */
export function parseFaults(text: string): FakeServerFaults {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--faults is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = faultsSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error, { input: raw }).map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    throw new UsageError(`invalid --faults (known: ${Object.keys(faultsSchema.shape).join(', ')}):\n${issues.join('\n')}`);
  }
  return parsed.data as FakeServerFaults;
}

export async function fakeServerCommand(flags: FakeServerFlags): Promise<number> {
  const vendor = vendorOf(flags.crm);
  const faults = flags.faults === undefined ? undefined : parseFaults(flags.faults);
  const signal = new Promise<NodeJS.Signals>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal('SIGINT'));
    process.once('SIGTERM', () => resolveSignal('SIGTERM'));
  });
  let fake: Awaited<ReturnType<typeof vendor.fakeServer.start>>;
  try {
    fake = await vendor.fakeServer.start({ port: flags.port ?? 0, ...(faults ? { faults } : {}) });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') throw new UsageError(`--port ${flags.port}: cannot listen on 127.0.0.1:${flags.port} (${code}): pick another port, or leave --port out for a free one`);
    throw err;
  }
  const out = process.stdout;
  out.write(`${JSON.stringify({ url: fake.url, crm: flags.crm })}\n`);
  out.write(`fake ${vendor.label} listening at ${fake.url}${faults ? ` with faults ${JSON.stringify(faults)}` : ''} (in memory: nothing is kept after it stops)\n\n`);
  if (flags.template) {
    // The whole section: a config with "crm" and this section runs the starter's actions against the fake.
    const section = { ...vendor.fakeServer.configAt(fake.url), ...(starterOf(flags.crm, flags.template).section as object) };
    const shown = JSON.stringify({ [flags.crm]: section }, null, 2).split('\n').slice(1, -1).join('\n');
    out.write(`in crm-upsert.config.json (the ${flags.template} starter's section):\n${shown}\n\n`);
  } else {
    const lines = Object.entries(vendor.fakeServer.configAt(fake.url)).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    out.write(`in crm-upsert.config.json:\n  ${JSON.stringify(flags.crm)}: { ${lines.join(', ')}, "objects": { ... } }\n\n`);
  }
  out.write(`in the shell (any token is accepted):\n${Object.entries(vendor.fakeServer.env(fake.url)).map(([k, v]) => `  export ${k}=${v}\n`).join('')}\n`);
  out.write('then: crm-upsert check-setup && crm-upsert sync actions.jsonl (Ctrl-C stops the fake)\n');
  const received = await signal;
  await fake.close();
  process.stderr.write(`crm-upsert: ${received}: fake ${vendor.label} stopped after ${fake.requests()} requests\n`);
  return received === 'SIGINT' ? ExitCode.sigint : ExitCode.sigterm;
}
