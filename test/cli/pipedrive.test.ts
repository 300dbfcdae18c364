/**
 * Pipedrive through the built CLI: `init --crm pipedrive --template sales`, `fake-server --crm
 * pipedrive`, `sync` writing the call graph once and again with 0 API calls, `check-setup`, and
 * `demo --crm pipedrive` with 0 duplicates.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempDir, type SpawnedCli } from './helpers.js';

interface Summary { actions: number; counts: Record<string, number>; apiCalls: number; problems: number; exitCode: number }
const summaryOf = (stdout: string): Summary => JSON.parse(stdout.trim().split('\n').pop()!) as Summary;

describe('crm-upsert with crm: pipedrive', () => {
  const servers: SpawnedCli[] = [];
  beforeAll(() => ensureBuilt());
  afterEach(async () => {
    for (const s of servers.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.done;
    }
  });

  it('init --template sales, fake-server, sync: the call graph once, again with 0 API calls; check-setup passes', async () => {
    const dir = tempDir();
    const init = await runCli(['init', '--crm', 'pipedrive', '--template', 'sales'], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('objects company, contact, deal, note, task');
    const lines = readFileSync(join(dir, 'actions.jsonl'), 'utf8').trim().split('\n');

    const server = spawnCli(['fake-server', '--crm', 'pipedrive'], { cwd: dir });
    servers.push(server);
    let out = '';
    const first = await new Promise<string>((resolveLine, reject) => {
      server.child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolveLine(out.slice(0, nl));
      });
      void server.done.then((r) => reject(new Error(`fake-server exited ${r.code}: ${r.stderr}`)));
    });
    const { url, crm } = JSON.parse(first) as { url: string; crm: string };
    expect(crm).toBe('pipedrive');
    await expect.poll(() => out).toContain('PIPEDRIVE_API_TOKEN=');

    const configPath = join(dir, 'crm-upsert.config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { pipedrive: Record<string, unknown> };
    const { companyDomain: _domain, ...section } = config.pipedrive;
    writeFileSync(configPath, JSON.stringify({ ...config, pipedrive: { ...section, basePath: url } }, null, 2));
    const env = { PIPEDRIVE_API_TOKEN: 'any-token' };

    const run1 = await runCli(['sync', 'actions.jsonl'], { cwd: dir, env });
    expect(run1.code, run1.stderr).toBe(0);
    expect(summaryOf(run1.stdout)).toMatchObject({ actions: lines.length, problems: 0, counts: { created: lines.length - 1, replayed: 1 } });
    const run2 = await runCli(['sync', 'actions.jsonl'], { cwd: dir, env });
    expect(run2.code, run2.stderr).toBe(0);
    expect(summaryOf(run2.stdout)).toMatchObject({ apiCalls: 0, problems: 0 });

    const byEmail = await runCli(['get', 'contact', 'chloe.martin@fabrikam.example', '--by', 'email'], { cwd: dir, env });
    expect(byEmail.code, byEmail.stderr).toBe(0);
    expect(JSON.parse(byEmail.stdout)).toMatchObject({ found: true, externalId: 'gong-7731', fields: { name: 'Chloé Martin' } });

    const pull = await runCli(['schema', 'pull'], { cwd: dir, env });
    expect(pull.code, pull.stderr).toBe(0);
    const fields = JSON.parse(readFileSync(join(dir, 'crm-upsert.fields.json'), 'utf8')) as { crm: string; objects: Record<string, Record<string, { type: string }>> };
    expect(fields.crm).toBe('pipedrive');
    expect(fields.objects.contact!.email).toEqual({ type: 'email' });

    const setup = await runCli(['check-setup'], { cwd: dir, env });
    expect(setup.code, setup.stdout + setup.stderr).toBe(0);
    expect(setup.stdout).toMatch(/ok\s+contact -> person\.ai_external_id \(varchar id field\)/);
    expect(setup.stdout + setup.stderr).not.toContain('any-token');
  });

  it('demo --crm pipedrive: the second pass makes 0 API calls and the CRM holds 0 duplicates', async () => {
    const demo = await runCli(['demo', '--crm', 'pipedrive']);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain('the second pass made 0 API calls and the CRM holds 0 duplicates');
  });
});
