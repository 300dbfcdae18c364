/**
 * Secrets never leave, not even through `.cause`: a wrong Redis password, a Postgres URL with a
 * password, and HubSpot/Salesforce error pages that echo the request's token in their body and
 * headers. Every error (printed whole with util.inspect), outcome, CLI output, report and raw
 * ledger row (SQLite, Postgres, Redis) is searched for the secret.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotAdapter } from '../../adapters/hubspot/index.js';
import { salesforceAdapter } from '../../adapters/salesforce/index.js';
import { CrmError, LedgerError, sanitizeCause } from '../../src/errors.js';
import { createSync, openLedger, type Outcome } from '../../src/index.js';
import type { LedgerBackend } from '../../src/ledger/types.js';
import { unlimitedRateBudget } from '../../src/rate-budget.js';
import { fakeHubSpot, fakeSalesforce, type FakeHubSpot, type FakeSalesforce } from '../../adapters/testing/index.js';
import { ensureBuilt, HUBSPOT_OBJECTS, runCli, tempDir, writeHubSpotConfig } from '../cli/helpers.js';
import { memoryCrm } from '../helpers/memory-crm.js';
import { postgresUrl, redisUrl, runId } from '../helpers/services.js';

const REDIS_PASSWORD = 'sekret-XYZ';
const PG_PASSWORD = 'pg-sekret-Q7';
const HS_TOKEN = 'hs-tok-SEKRET-4242';
const SF_TOKEN = 'sf-tok-SEKRET-4343';
const SECRETS = [REDIS_PASSWORD, PG_PASSWORD, HS_TOKEN, SF_TOKEN];

const deep = (value: unknown) => inspect(value, { depth: Infinity, showHidden: true, getters: false });
const expectClean = (text: string) => {
  for (const s of SECRETS) expect(text).not.toContain(s);
};
const caught = async (p: Promise<unknown>): Promise<unknown> => p.then(() => expect.fail('expected a rejection'), (e: unknown) => e);

const contact = (n: string) => ({ source: 'test', eventId: `sec-${n}`, op: 'upsert', object: 'contact', externalId: `sec-${n}`, fields: { email: `${n}@example.test` } });

/** Make every request to a fake answer with an error page echoing the request's Authorization header in its body and headers. */
function echoAuthorization(fake: FakeHubSpot | FakeSalesforce, status: number, body: (auth: string) => unknown): void {
  fake.core.dispatch = async (req) => {
    const auth = req.headers.authorization ?? '';
    return { kind: 'respond', response: { status, headers: { 'content-type': 'application/json', 'x-echo-authorization': auth, 'x-echo-token': auth.replace(/^Bearer /, '') }, body: body(auth) } };
  };
}

describe('sanitizeCause', () => {
  it('keeps name, message, codes and a body summary; drops command args, headers and config; follows causes and cycles', () => {
    const reply = Object.assign(new Error('WRONGPASS invalid username-password pair'), { name: 'ReplyError', command: { name: 'auth', args: ['user', REDIS_PASSWORD] } });
    const api = Object.assign(new Error(`HTTP-Code: 401\nMessage: nope\nBody: {}\nHeaders: {"authorization":"${HS_TOKEN}"}`), {
      code: 401, body: { message: `bad token ${HS_TOKEN}`, category: 'INVALID_AUTHENTICATION' }, headers: { 'x-echo': HS_TOKEN }, config: { headers: { Authorization: `Bearer ${HS_TOKEN}` } }, cause: reply,
    });
    const cyclic: Error & { cause?: unknown } = new Error('loop');
    cyclic.cause = cyclic;
    const hostile = Object.defineProperty(new Error('hostile'), 'code', { get: () => { throw new Error('getter'); } });
    const err = new CrmError('failed', { vendor: 'hubspot', kind: 'auth', status: 401, cause: Object.assign(api, { errors: [cyclic, hostile] }) });

    const cause = err.cause as Error & Record<string, unknown>;
    expect(cause).toBeInstanceOf(Error);
    expect(cause).toMatchObject({ name: 'Error', code: 401 });
    expect(cause.message).toContain('Headers: [omitted]');
    expect(cause.body).toContain('INVALID_AUTHENTICATION');
    expect(cause.headers).toBeUndefined();
    expect(cause.config).toBeUndefined();
    expect(cause.cause).toMatchObject({ name: 'ReplyError', message: 'WRONGPASS invalid username-password pair' });
    expect((cause.cause as Record<string, unknown>).command).toBeUndefined();
    const [loop] = cause.errors as (Error & { cause: unknown })[];
    expect(loop!.cause).toBe(loop);
    // Registered by the test below too; here the adapter never saw them, so only the structure protects.
    expect(deep(err)).not.toContain(REDIS_PASSWORD);
    expect(deep(err)).not.toContain('x-echo');
    expect(sanitizeCause('Authorization: Bearer abc.def')).toBe('Authorization: [redacted]');
  });
});

describe('secrets through real services and the vendor clients', () => {
  let pgUrl: string | undefined;
  let redis: string | undefined;
  let pool: pg.Pool | undefined;
  let redisClient: Redis | undefined;
  const run = runId();
  const tables: string[] = [];

  beforeAll(async () => {
    [pgUrl, redis] = await Promise.all([postgresUrl(), redisUrl()]);
    if (pgUrl) pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
    if (redis) redisClient = new Redis(redis);
  });
  afterAll(async () => {
    if (pool) {
      for (const p of tables) await pool.query(['entries', 'marks', 'windows', 'meta', 'schema_version'].map((t) => `DROP TABLE IF EXISTS "${p}${t}";`).join(''));
      await pool.end();
    }
    if (redisClient) {
      const keys = await redisClient.keys(`{${run}}*`);
      if (keys.length > 0) await redisClient.del(...keys);
      await redisClient.quit();
    }
  });

  /** Every raw value stored under the Redis prefix, whatever its type. */
  async function redisDump(prefix: string): Promise<string> {
    const out: unknown[] = [];
    for (const key of await redisClient!.keys(`${prefix}*`)) {
      const type = await redisClient!.type(key);
      if (type === 'hash') out.push(key, await redisClient!.hgetall(key));
      else if (type === 'string') out.push(key, await redisClient!.get(key));
      else if (type === 'zset') out.push(key, await redisClient!.zrange(key, 0, -1, 'WITHSCORES'));
      else if (type === 'set') out.push(key, await redisClient!.smembers(key));
      else if (type === 'list') out.push(key, await redisClient!.lrange(key, 0, -1));
    }
    expect(out.length).toBeGreaterThan(0);
    return JSON.stringify(out);
  }

  const pgPasswordUrl = (db?: string) => {
    const u = new URL(pgUrl!);
    u.password = PG_PASSWORD;
    if (db) u.pathname = `/${db}`;
    return u.toString();
  };

  it('a wrong Redis password: the thrown LedgerError and its causes never show it', async ({ skip }) => {
    if (!redis) skip();
    const u = new URL(redis!);
    u.username = 'crm-upsert-nobody';
    u.password = REDIS_PASSWORD;
    const sync = createSync({ adapter: memoryCrm().adapter, ledger: openLedger(u.toString(), { keyPrefix: `{${run}}:wrong:` }) });
    const err = await caught(sync.applyMany([contact('r1')]));
    expect(err).toBeInstanceOf(LedgerError);
    expect(deep(err)).toMatch(/WRONGPASS/);
    expectClean(deep(err));
    await sync.close().catch(() => undefined);

    // No user name: this Redis has no password, so ioredis drops AUTH and the ledger works; its rows stay clean.
    const noUser = new URL(redis!);
    noUser.password = REDIS_PASSWORD;
    const ok = createSync({ adapter: memoryCrm().adapter, ledger: openLedger(noUser.toString(), { keyPrefix: `{${run}}:nouser:` }) });
    expect((await ok.applyMany([contact('r2')]))[0]!.status).toBe('created');
    await ok.close();
    expectClean(await redisDump(`{${run}}:nouser:`));
  });

  it('a Postgres URL with a password: errors and rows never show it', async ({ skip }) => {
    if (!pgUrl) skip();
    const bad = createSync({ adapter: memoryCrm().adapter, ledger: openLedger(pgPasswordUrl(`no_such_db_${run}`), { tablePrefix: `${run}_x_` }) });
    const err = await caught(bad.applyMany([contact('p1')]));
    expect(err).toBeInstanceOf(LedgerError);
    expect(deep(err)).toMatch(/does not exist/);
    expectClean(deep(err));
    await bad.close().catch(() => undefined);
  });

  it('HubSpot and Salesforce error pages echoing the token: thrown errors, outcomes and every ledger backend stay clean', async () => {
    const hs = fakeHubSpot();
    const hsFront = await hs.open('loopback');
    echoAuthorization(hs, 400, (auth) => ({ status: 'error', message: `Invalid input (you sent ${auth})`, category: 'VALIDATION_ERROR', correlationId: 'corr-1', context: { token: [auth.replace(/^Bearer /, '')] } }));
    const sf = fakeSalesforce({ accessToken: SF_TOKEN });
    const sfFront = await sf.open('loopback', 'https://secrets.my.salesforce.com');
    echoAuthorization(sf, 400, (auth) => [{ errorCode: 'INVALID_FIELD', message: `bad request with ${auth}`, fields: [auth] }]);
    const hsAdapter = () => hubspotAdapter({ accessToken: HS_TOKEN, basePath: hsFront.url, objects: HUBSPOT_OBJECTS as never, rateBudget: unlimitedRateBudget });
    const sfAdapter = () => salesforceAdapter({ instanceUrl: sfFront.url, accessToken: SF_TOKEN, objects: { contact: { kind: 'record', sobject: 'Contact', externalIdField: 'AI_External_Id__c', fields: ['Email'] } } });
    try {
      // The vendor errors as the adapters classify them (the CrmError the engine acts on), printed whole.
      const hs1 = hsAdapter();
      const hsErr = hs1.classifyError(await caught(hs1.upsertRecords('contact', [{ key: 'k1', object: 'contact', externalId: 'x1', fields: { email: 'a@b.c' } }])));
      expect(hsErr).toBeInstanceOf(CrmError);
      expect(deep(hsErr)).toMatch(/VALIDATION_ERROR/);
      const sf1 = sfAdapter();
      const sfErr = sf1.classifyError(await caught(sf1.upsertRecords('contact', [{ key: 'k2', object: 'contact', externalId: 'x2', fields: { Email: 'a@b.c' } }])));
      expect(sfErr).toBeInstanceOf(CrmError);
      expect(deep(sfErr)).toMatch(/INVALID_FIELD/);
      expectClean(deep(hsErr) + deep(sfErr));
      // What the adapters throw to a caller of their own methods (writes and reads alike) is already classified and clean.
      const thrown = [
        await caught(hs1.upsertRecords('contact', [{ key: 'k3', object: 'contact', externalId: 'x3', fields: { email: 'a@b.c' } }])),
        await caught(hs1.findActivities('note', [{ key: 'k4', object: 'note', parent: { object: 'contact', externalId: 'x4' }, fields: {} }])),
        await caught(sf1.upsertRecords('contact', [{ key: 'k5', object: 'contact', externalId: 'x5', fields: { Email: 'a@b.c' } }])),
      ];
      for (const err of thrown) expect(err).toBeInstanceOf(CrmError);
      expectClean(thrown.map((e) => deep(e)).join('\n'));

      // Failed outcomes stored by every backend.
      const dir = tempDir('crm-upsert-secrets-');
      const ledgers: [string, () => LedgerBackend, () => Promise<string>][] = [
        ['sqlite', () => openLedger(`sqlite:${join(dir, 'ledger.db')}`), async () => {
          const db = new Database(join(dir, 'ledger.db'), { readonly: true });
          try {
            return JSON.stringify(db.prepare("SELECT * FROM entries").all()) + JSON.stringify(db.prepare("SELECT * FROM marks").all());
          } finally {
            db.close();
          }
        }],
      ];
      if (pgUrl) {
        const prefix = `${run}_ok_`;
        tables.push(prefix);
        ledgers.push(['postgres', () => openLedger(pgPasswordUrl(), { tablePrefix: prefix }), async () => {
          const rows = await pool!.query(`SELECT * FROM "${prefix}entries"`);
          return JSON.stringify(rows.rows);
        }]);
      }
      if (redis) ledgers.push(['redis', () => openLedger(redis!, { keyPrefix: `{${run}}:ok:` }), () => redisDump(`{${run}}:ok:`)]);

      for (const [name, open, rows] of ledgers) {
        const outcomes: Outcome[] = [];
        for (const adapter of [hsAdapter(), sfAdapter()]) {
          const sync = createSync({ adapter, ledger: open(), retry: { retries: 0 } });
          const action = contact(`${name}-${adapter.name}`);
          outcomes.push(...(await sync.applyMany([adapter.name === 'salesforce' ? { ...action, fields: { Email: action.fields.email } } : action])));
          await sync.close();
        }
        expect(outcomes.map((o) => o.status), name).toEqual(['failed', 'failed']);
        const stored = await rows();
        expect(stored, name).toMatch(/failed/);
        expectClean(JSON.stringify(outcomes) + deep(outcomes) + stored);
      }
    } finally {
      await hsFront.stop();
      await sfFront.stop();
    }
  });
});

describe('secrets through the CLI', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  beforeAll(async () => {
    ensureBuilt();
    fake = fakeHubSpot();
    server = await fake.listen();
    echoAuthorization(fake, 401, (auth) => ({ status: 'error', message: `Authentication failed for ${auth}`, category: 'INVALID_AUTHENTICATION', correlationId: 'corr-2' }));
  });
  afterAll(async () => server?.close());

  it('prints and stores no token or password: stdout, stderr, the report and the ledger file', async () => {
    const dir = tempDir('crm-upsert-secrets-cli-');
    const config = writeHubSpotConfig(dir, server.basePath);
    const file = join(dir, 'in.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, `${JSON.stringify(contact('cli-1'))}\n`);
    const report = join(dir, 'report.json');
    const env = { HUBSPOT_ACCESS_TOKEN: HS_TOKEN };

    const result = await runCli(['sync', file, '--config', config, '--report', report], { env });
    expect(result.code).not.toBe(0);
    const reportText = readFileSync(report, 'utf8');
    expect(reportText).toMatch(/INVALID_AUTHENTICATION|Authentication failed/);
    const db = new Database(join(dir, 'ledger.db'), { readonly: true });
    const rows = JSON.stringify(db.prepare('SELECT * FROM entries').all());
    db.close();
    expectClean(result.stdout + result.stderr + reportText + rows);

    const outputs: string[] = [];
    const pgBase = await postgresUrl();
    const ledgerUrls = [`redis://crm-upsert-nobody:${REDIS_PASSWORD}@127.0.0.1:6379`];
    if (pgBase) {
      const u = new URL(pgBase);
      u.password = PG_PASSWORD;
      u.pathname = `/no_such_db_${runId()}`;
      ledgerUrls.push(u.toString());
    }
    for (const ledger of ledgerUrls) {
      const r = await runCli(['sync', file, '--config', config, '--ledger', ledger], { env });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/ledger/i);
      outputs.push(r.stdout + r.stderr);
    }
    expectClean(outputs.join('\n'));
  });
});
