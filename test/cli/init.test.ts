/**
 * Trying the CLI without a CRM, end to end through the built bin: `init` writes a config and
 * actions, `fake-server` serves the CRM's fake in its own process, `sync` writes the actions
 * into it and a second `sync` of the same file makes 0 API calls, `check-setup` passes, and
 * the fake stops on SIGTERM.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempDir, type SpawnedCli } from './helpers.js';

interface Summary { actions: number; counts: Record<string, number>; apiCalls: number; problems: number; exitCode: number }

const summaryOf = (stdout: string): Summary => JSON.parse(stdout.trim().split('\n').pop()!) as Summary;

/** Spawn `fake-server --crm crm` and resolve with its first stdout line, parsed. */
async function startFakeServer(crm: string, cwd: string, extra: string[] = []): Promise<{ server: SpawnedCli; url: string; banner: () => string }> {
  const server = spawnCli(['fake-server', '--crm', crm, ...extra], { cwd });
  let out = '';
  const first = await new Promise<string>((resolveLine, reject) => {
    server.child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolveLine(out.slice(0, nl));
    });
    void server.done.then((r) => reject(new Error(`fake-server exited ${r.code}: ${r.stderr}`)));
  });
  const line = JSON.parse(first) as { url: string; crm: string };
  expect(line.crm).toBe(crm);
  expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return { server, url: line.url, banner: () => out };
}

describe('crm-upsert init and fake-server', () => {
  const servers: SpawnedCli[] = [];
  beforeAll(() => ensureBuilt());
  afterEach(async () => {
    for (const s of servers.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.done;
    }
  });

  it('HubSpot: init, fake-server, sync, sync again with 0 API calls, check-setup, SIGTERM', async () => {
    const dir = tempDir();
    const init = await runCli(['init'], { cwd: dir });
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('wrote crm-upsert.config.json');
    expect(init.stdout).toContain('wrote actions.jsonl');
    expect(init.stdout).toContain('crm-upsert fake-server --crm hubspot');
    const lines = readFileSync(join(dir, 'actions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { eventId?: string; occurredAt?: string });
    expect(lines.every((a) => a.eventId !== undefined || a.occurredAt !== undefined)).toBe(true);
    expect(new Set(lines.map((l) => JSON.stringify(l))).size).toBe(lines.length - 1);

    const { server, url, banner } = await startFakeServer('hubspot', dir);
    servers.push(server);
    await expect.poll(banner).toContain('HUBSPOT_ACCESS_TOKEN=');
    expect(banner()).toContain(`"hubspot": { "basePath": "${url}"`);

    const configPath = join(dir, 'crm-upsert.config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { ledger: string; hubspot: Record<string, unknown> };
    expect(config.ledger).toBe('sqlite:.crm-upsert/ledger.db');
    writeFileSync(configPath, JSON.stringify({ ...config, hubspot: { ...config.hubspot, basePath: url } }, null, 2));
    const env = { HUBSPOT_ACCESS_TOKEN: 'any-token' };

    const first = await runCli(['sync', 'actions.jsonl'], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    const s1 = summaryOf(first.stdout);
    expect(s1).toMatchObject({ actions: lines.length, problems: 0, exitCode: 0, counts: { created: lines.length - 1, replayed: 1 } });
    expect(s1.apiCalls).toBeGreaterThan(0);

    const second = await runCli(['sync', 'actions.jsonl'], { cwd: dir, env });
    expect(second.code, second.stderr).toBe(0);
    const s2 = summaryOf(second.stdout);
    expect(s2).toMatchObject({ actions: lines.length, apiCalls: 0, problems: 0 });
    expect((s2.counts.replayed ?? 0) + (s2.counts.suppressed ?? 0)).toBe(lines.length);

    const setup = await runCli(['check-setup'], { cwd: dir, env });
    expect(setup.code, setup.stdout + setup.stderr).toBe(0);
    expect(setup.stdout).toMatch(/^all \d+ checks passed$/m);

    server.child.kill('SIGTERM');
    const stopped = await server.done;
    expect(stopped.code).toBe(143);
    expect(stopped.stderr).toMatch(/SIGTERM: fake HubSpot stopped after \d+ requests/);
  });

  it('Salesforce: init, then sync against fake-server through SF_INSTANCE_URL', async () => {
    const dir = tempDir();
    const init = await runCli(['init', '--crm', 'salesforce', '--dir', 'proj'], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('cd proj');
    const cwd = join(dir, 'proj');

    const { server, url, banner } = await startFakeServer('salesforce', cwd);
    servers.push(server);
    await expect.poll(banner).toContain('SF_ACCESS_TOKEN=');
    expect(banner()).toContain(`"instanceUrl": "${url}"`);
    expect(banner()).toContain(`SF_INSTANCE_URL=${url}`);
    const env = { SF_INSTANCE_URL: url, SF_ACCESS_TOKEN: 'any-token' };

    const first = await runCli(['sync', 'actions.jsonl'], { cwd, env });
    expect(first.code, first.stderr).toBe(0);
    expect(summaryOf(first.stdout)).toMatchObject({ problems: 0, counts: { created: 5, replayed: 1 } });
    const second = await runCli(['sync', 'actions.jsonl'], { cwd, env });
    expect(summaryOf(second.stdout)).toMatchObject({ apiCalls: 0, problems: 0 });
    expect((await runCli(['check-setup'], { cwd, env })).code).toBe(0);

    server.child.kill('SIGINT');
    expect((await server.done).code).toBe(130);
  });

  it.each([
    ['hubspot', (url: string) => ({ HUBSPOT_ACCESS_TOKEN: 'any-token', url })],
    ['salesforce', (url: string) => ({ SF_INSTANCE_URL: url, SF_ACCESS_TOKEN: 'any-token' })],
  ] as const)('%s --template sales: the whole call graph once, again with 0 API calls, check-setup passes the links', async (crm, envOf) => {
    const dir = tempDir();
    const init = await runCli(['init', '--crm', crm, '--template', 'sales'], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('objects company, contact, deal, note, task');
    expect(init.stdout).toContain(`crm-upsert fake-server --crm ${crm} --template sales`);
    const lines = readFileSync(join(dir, 'actions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { links?: unknown[] });
    expect(lines.filter((l) => l.links !== undefined).length).toBeGreaterThanOrEqual(3);

    const { server, url, banner } = await startFakeServer(crm, dir, ['--template', 'sales']);
    servers.push(server);
    await expect.poll(banner).toContain('export ');
    // The banner's section is the starter's, objects and links included, pointed at the fake.
    const shown = banner().slice(banner().indexOf('the sales starter\'s section):\n') + 'the sales starter\'s section):\n'.length);
    const section = (JSON.parse(`{${shown.slice(0, shown.indexOf('\n\n'))}}`) as Record<string, { objects: Record<string, { links?: object }> }>)[crm]!;
    expect(section.objects.contact!.links).toBeDefined();
    const configPath = join(dir, 'crm-upsert.config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(configPath, JSON.stringify({ ...config, [crm]: section }, null, 2));
    const { url: _url, ...env } = envOf(url) as Record<string, string>;

    const first = await runCli(['sync', 'actions.jsonl'], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(summaryOf(first.stdout)).toMatchObject({ actions: lines.length, problems: 0, counts: { created: lines.length - 1, replayed: 1 } });
    const second = await runCli(['sync', 'actions.jsonl'], { cwd: dir, env });
    expect(summaryOf(second.stdout)).toMatchObject({ apiCalls: 0, problems: 0 });
    const setup = await runCli(['check-setup'], { cwd: dir, env });
    expect(setup.code, setup.stdout + setup.stderr).toBe(0);
  });

  it('hubspot --template sales: contacts are read by email, so `get contact <email> --by email` finds the one the call wrote', async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--template', 'sales'], { cwd: dir })).code).toBe(0);
    const configPath = join(dir, 'crm-upsert.config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { hubspot: { objects: Record<string, { lookupBy?: string[] }> } };
    expect(config.hubspot.objects.contact!.lookupBy).toEqual(['email']);
    const { server, url } = await startFakeServer('hubspot', dir, ['--template', 'sales']);
    servers.push(server);
    writeFileSync(configPath, JSON.stringify({ ...config, hubspot: { ...config.hubspot, basePath: url } }, null, 2));
    const env = { HUBSPOT_ACCESS_TOKEN: 'any-token' };
    expect((await runCli(['sync', 'actions.jsonl'], { cwd: dir, env })).code).toBe(0);

    const byEmail = await runCli(['get', 'contact', 'chloe.martin@fabrikam.example', '--by', 'email'], { cwd: dir, env });
    expect(byEmail.code, byEmail.stderr).toBe(0);
    expect(JSON.parse(byEmail.stdout)).toMatchObject({ id: 'chloe.martin@fabrikam.example', found: true, externalId: 'gong-7731', fields: { email: 'chloe.martin@fabrikam.example', firstname: 'Chloé' } });
    const unknown = await runCli(['get', 'contact', 'ann@acme.io', '--by', 'email'], { cwd: dir, env });
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toEqual({ id: 'ann@acme.io', found: false });
    const setup = await runCli(['check-setup'], { cwd: dir, env });
    expect(setup.stdout).toMatch(/ok\s+contact -> contacts\.email \(lookupBy: unique\)/);
  });

  it('refuses to overwrite the config or the actions, naming the file', async () => {
    const dir = tempDir();
    expect((await runCli(['init'], { cwd: dir })).code).toBe(0);
    const config = readFileSync(join(dir, 'crm-upsert.config.json'), 'utf8');
    const again = await runCli(['init', '--crm', 'salesforce'], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('crm-upsert.config.json already exists');
    expect(readFileSync(join(dir, 'crm-upsert.config.json'), 'utf8')).toBe(config);

    const other = tempDir();
    writeFileSync(join(other, 'actions.jsonl'), 'mine\n');
    const refused = await runCli(['init'], { cwd: other });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('actions.jsonl already exists');
    expect(readFileSync(join(other, 'actions.jsonl'), 'utf8')).toBe('mine\n');
    expect(() => readFileSync(join(other, 'crm-upsert.config.json'))).toThrow();
  });

  it.each([
    ['{bad', /--faults is not valid JSON/],
    ['{"lostResponse":0.1,"sed":7}', /sed: is not a known property/],
    ['{"reset":2}', /reset: must be at most 1 \(it is 2\)/],
  ])('fake-server --faults %s exits 2 naming the problem', async (faults, message) => {
    const result = await runCli(['fake-server', '--crm', 'hubspot', '--faults', faults]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('fake-server needs --crm and takes seeded faults', async () => {
    expect((await runCli(['fake-server'])).code).toBe(2);
    const { server, banner } = await startFakeServer('hubspot', tempDir(), ['--faults', '{"lostResponse":0.1,"seed":7}']);
    servers.push(server);
    await expect.poll(banner).toContain('Ctrl-C');
    expect(banner()).toContain('with faults {"seed":7,"lostResponse":0.1}');
    server.child.kill('SIGTERM');
    expect((await server.done).code).toBe(143);
  });
});
