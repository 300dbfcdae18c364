/**
 * `crm-upsert sync` on a terminal, run under a pseudo-terminal (python3's pty module) against the
 * fake HubSpot: the bar, the line saying what a wait is for, lines held by another run not
 * counted as failures, the summary table instead of JSON, and Ctrl-C's message on its own line;
 * against the fake Salesforce, a Bulk job's line above the bar.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeHubSpot, fakeSalesforce, type FakeHubSpot } from '../../adapters/testing/index.js';
import { deriveKey, fingerprintOf, openLedger } from '../../src/index.js';
import { BIN, cliEnv, contactLine, ensureBuilt, tempDir, writeHubSpotConfig } from './helpers.js';

// Runs argv[1..] on a pty 120 columns wide; writes Ctrl-C once the output contains INTERRUPT_ON.
const PTY = `
import base64, fcntl, json, os, pty, select, struct, sys, termios
trigger = os.environ.get('INTERRUPT_ON', '').encode()
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 30, 120, 0, 0))
    os.execvp(sys.argv[1], sys.argv[1:])
out, sent = b'', False
while True:
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        out += data
    if trigger and not sent and trigger in out:
        os.write(fd, b'\\x03')
        sent = True
_, status = os.waitpid(pid, 0)
print(json.dumps({'output': base64.b64encode(out).decode(), 'code': os.waitstatus_to_exitcode(status)}))
`;

function runOnPty(args: string[], env: Record<string, string>, interruptOn?: string): Promise<{ output: string; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PTY, process.execPath, BIN, ...args], { env: cliEnv({ ...env, ...(interruptOn ? { INTERRUPT_ON: interruptOn } : {}) }) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      try {
        const r = JSON.parse(stdout) as { output: string; code: number };
        resolve({ output: Buffer.from(r.output, 'base64').toString('utf8'), code: r.code });
      } catch {
        reject(new Error(`pty runner failed: ${stderr}`));
      }
    });
  });
}

const ESC = String.fromCharCode(27);
const ESCAPE = new RegExp(`^${ESC}(?:\\[([?\\d;]*)([A-Za-z])|[78])`);
const CLEAR = new RegExp(`${ESC}\\[[\\d;]*K`, 'g');

/** What a terminal shows after `raw`: carriage returns, line clears and overwrites applied. */
function screen(raw: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  const put = (ch: string) => {
    const line = lines[row]!.padEnd(col);
    lines[row] = line.slice(0, col) + ch + line.slice(col + 1);
    col += 1;
  };
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '\x1b') {
      const m = ESCAPE.exec(raw.slice(i));
      if (!m) continue;
      i += m[0].length - 1;
      if (m[2] === 'K') lines[row] = m[1] === '2' ? '' : lines[row]!.slice(0, col);
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row += 1;
      lines[row] ??= '';
    } else put(ch);
  }
  return lines.map((l) => l.trimEnd());
}

/** Every state of the bar line that was drawn (each redraw starts with a carriage return). */
const frames = (raw: string) => raw.split('\r').map((f) => f.replace(CLEAR, '').trim()).filter((f) => /^sync .* lines \| /.test(f));

describe('crm-upsert sync on a terminal', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot({ faults: { retryAfterSeconds: 2 } });
    server = await fake.listen();
  });
  afterAll(() => server.close());

  it('draws the bar, says what it waits for, keeps lines in flight elsewhere out of the failures, and ends with a table', async () => {
    const dir = tempDir('crm-upsert-tty-');
    // Two requests per second: the third waits for the budget.
    const config = writeHubSpotConfig(dir, server.basePath, {}, { rateLimit: { points: 2, durationMs: 1_000 } });
    const held = JSON.parse(contactLine(104)) as Parameters<typeof deriveKey>[0];
    const ledger = openLedger(`sqlite:${join(dir, 'ledger.db')}`);
    // Another run holds this line's key with a live lease: it is in flight there, not failed here.
    await ledger.claim([{ key: deriveKey(held), fingerprint: fingerprintOf(held), leaseMs: 600_000 }], Date.now());
    await ledger.close();
    const input = join(dir, 'actions.jsonl');
    const bad = JSON.stringify({ ...JSON.parse(contactLine(105)), fields: { not_allowed: 'x' } });
    writeFileSync(input, [contactLine(100), contactLine(101), contactLine(102), contactLine(103), contactLine(104), bad].join('\n') + '\n');
    const before = fake.count();
    fake.failNext('rate_limit', { endpoint: 'batch/upsert' });

    const { output, code } = await runOnPty(['sync', input, '--config', config, '--batch-size', '1'], { HUBSPOT_ACCESS_TOKEN: 'test-token' });

    expect(code).toBe(1);
    const drawn = frames(output);
    expect(drawn.some((f) => /^sync [█░]{24} [1-5]\/6 lines \| \d+\/s \| ETA /.test(f))).toBe(true);
    expect(drawn.some((f) => /^sync [█░]{24} 0\/6 lines \| waiting 2 s: Retry-After from hubspot \| failures 0$/.test(f))).toBe(true);
    expect(drawn.some((f) => / lines \| waiting [12] s: HubSpot rate limit \| failures 0$/.test(f))).toBe(true);
    expect(drawn.every((f) => !/failures [2-9]/.test(f))).toBe(true);
    expect(drawn.at(-1)).toMatch(/^sync █{24} 6\/6 lines \| \d+\/s \| failures 1 \| in flight elsewhere 1$/);

    const shown = screen(output).join('\n');
    expect(output).not.toContain('{"command"');
    const calls = fake.count() - before;
    expect(calls).toBe(5);
    expect(shown).toMatch(new RegExp([
      String.raw`sync ${input.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`,
      String.raw`  status\s+lines`, String.raw`  created\s+4`, String.raw`  in_flight\s+1`, String.raw`  rejected\s+1`, String.raw`  total\s+6`,
      '', String.raw`  API calls\s+${calls}`, String.raw`  time\s+\d+\.\d s`, String.raw`  exit code\s+1`,
    ].join('\n')));
  }, 30_000);

  it('prints the Ctrl-C message on a line of its own, then stops after the batch in flight', async () => {
    const dir = tempDir('crm-upsert-tty-');
    const config = writeHubSpotConfig(dir, server.basePath, {}, { rateLimit: { points: 1, durationMs: 1_000 } });
    const input = join(dir, 'actions.jsonl');
    writeFileSync(input, Array.from({ length: 10 }, (_, i) => contactLine(200 + i)).join('\n') + '\n');

    const { output, code } = await runOnPty(['sync', input, '--config', config, '--batch-size', '1'], { HUBSPOT_ACCESS_TOKEN: 'test-token' }, 'waiting');

    expect(code).toBe(130);
    const lines = screen(output);
    expect(lines).toContain('crm-upsert: SIGINT: finishing the batch in flight, then stopping (send again to exit now)');
    const at = lines.indexOf('crm-upsert: SIGINT: finishing the batch in flight, then stopping (send again to exit now)');
    // The bar goes on below the message, and the run ends with the table saying why it stopped.
    expect(lines[at + 1]).toMatch(/^sync [█░]{24} \d+\/10 lines \| /);
    expect(lines.join('\n')).toMatch(/ {2}stopped\s+SIGINT/);
    expect(lines.join('\n')).toMatch(/ {2}exit code\s+130/);
  }, 30_000);
});

describe('crm-upsert sync --bulk on a terminal', () => {
  it('shows each Bulk job on a line of its own as it moves, above the bar, ended when the job is', async () => {
    ensureBuilt();
    const fake = fakeSalesforce({ accessToken: 'sf-tty-token', bulk: { pollsToComplete: 3 } });
    const server = await fake.listen();
    try {
      const dir = tempDir('crm-upsert-tty-bulk-');
      const config = join(dir, 'crm-upsert.config.json');
      const objects = { contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email', 'LastName'] } };
      writeFileSync(config, JSON.stringify({ crm: 'salesforce', ledger: `sqlite:${join(dir, 'ledger.db')}`, salesforce: { instanceUrl: server.instanceUrl, objects, bulk: { pollIntervalMs: 1, maxPollIntervalMs: 1 } } }));
      const input = join(dir, 'actions.jsonl');
      const line = (i: number) => JSON.stringify({ source: 'test', eventId: `tty-bulk-${i}`, op: 'upsert', object: 'contact', externalId: `c-${i}`, fields: { Email: `u${i}@example.com`, LastName: `U${i}` } });
      writeFileSync(input, `${[0, 1, 2, 3, 4, 5].map(line).join('\n')}\n`);

      const { output, code } = await runOnPty(['sync', input, '--config', config, '--bulk', 'always'], { SF_ACCESS_TOKEN: 'sf-tty-token' });

      expect(code).toBe(0);
      const [job] = fake.bulkJobs();
      expect(job).toMatchObject({ state: 'JobComplete', rows: 6 });
      // Redrawn in place while Salesforce processes it (the fake processes a third per poll).
      expect(output).toContain(`contact job ${job!.id}: uploaded 6, processed 2, failed 0 (InProgress)`);
      const lines = screen(output);
      const at = lines.indexOf(`contact job ${job!.id}: uploaded 6, processed 6, failed 0 (JobComplete)`);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(lines[at + 1]).toMatch(/^sync █{24} 6\/6 lines \| /);
      expect(lines.filter((l) => l.includes(' job '))).toHaveLength(1);
      expect(lines.join('\n')).toMatch(/ {2}created\s+6/);
    } finally {
      await server.close();
    }
  }, 30_000);
});
