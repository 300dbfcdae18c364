import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { redisLedger } from '../../../src/ledger/redis/index.js';
import { redisUrl, runId } from '../../helpers/services.js';

const url = await redisUrl();
const client = url ? new Redis(url) : undefined;
const run = runId();
let n = 0;
const prefix = () => `{${run}}:${n++}:`;
const LEASE = 30_000;

afterAll(async () => {
  if (!client) return;
  const keys = await client.keys(`{${run}}*`);
  if (keys.length > 0) await client.del(...keys);
  await client.quit();
});

describe.skipIf(!client)('redisLedger', () => {
  it('refuses stale tokens after Redis expired the entry by itself (PEXPIRE)', async () => {
    const p = prefix();
    const ledger = redisLedger({ client: client!, prefix: p });
    const now = Date.now();
    const claim = async (at: number) => (await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: LEASE }], at))[0]!;
    expect((await claim(now)).token).toBe(1);
    expect((await claim(now + LEASE)).token).toBe(2);
    expect(await ledger.complete([{ key: 'k', token: 2, result: 'B', retentionMs: 40 }], now + LEASE)).toEqual([true]);
    await sleep(150);
    expect(await client!.exists(`${p}e:k`)).toBe(0);

    const next = await claim(now + LEASE + 150);
    expect(next).toMatchObject({ outcome: 'claimed', entry: { attempts: 1 } });
    expect(next.token!).toBeGreaterThan(2);
    for (const token of [1, 2]) {
      expect(await ledger.complete([{ key: 'k', token, result: 'stale' }], now + LEASE + 151)).toEqual([false]);
      expect(await ledger.fail([{ key: 'k', token, error: 'stale' }], now + LEASE + 151)).toEqual([false]);
      expect(await ledger.renew([{ key: 'k', token }], LEASE, now + LEASE + 151)).toEqual([false]);
    }
    expect(await ledger.complete([{ key: 'k', token: next.token!, result: 'C' }], now + LEASE + 152)).toEqual([true]);
  });

  it('starts every key a completion batch let vanish above the highest token in that batch', async () => {
    const p = prefix();
    const ledger = redisLedger({ client: client!, prefix: p });
    const now = Date.now();
    const claim = async (key: string, at: number) => (await ledger.claim([{ key, fingerprint: 'f', leaseMs: LEASE }], at))[0]!;
    for (let i = 0; i < 3; i++) await claim('hi', now + i * LEASE);
    expect((await claim('lo', now)).token).toBe(1);
    // The higher token first: the floor is the batch's highest token, not its last one.
    expect(await ledger.complete([
      { key: 'hi', token: 3, result: 'H', retentionMs: 40 },
      { key: 'lo', token: 1, result: 'L', retentionMs: 40 },
    ], now + 2 * LEASE)).toEqual([true, true]);
    await sleep(150);
    expect(await client!.exists(`${p}e:hi`, `${p}e:lo`)).toBe(0);
    const next = await claim('lo', now + 2 * LEASE + 150);
    expect(next).toMatchObject({ outcome: 'claimed', entry: { attempts: 1 } });
    expect(next.token!).toBeGreaterThan(3);
  });

  it('answers a batch of fresh claims with the entries as stored, one index member per key', async () => {
    const p = prefix();
    const ledger = redisLedger({ client: client!, prefix: p });
    // Past 1,000 keys the index is written in more than one ZADD.
    const keys = Array.from({ length: 2_345 }, (_, i) => `fresh-${i}`);
    const claimed = await ledger.claim(keys.map((key, i) => ({ key, fingerprint: `f${i}`, leaseMs: LEASE, ...(i % 2 ? { owner: 'host-a 7 99' } : {}) })), 1_000);
    expect(claimed.every((r) => r.outcome === 'claimed' && r.token === 1)).toBe(true);
    expect(await ledger.getMany!(keys)).toEqual(claimed.map((r) => r.entry));
    expect(claimed[1]!.entry).toEqual({
      key: 'fresh-1', fingerprint: 'f1', status: 'in_progress', token: 1, leaseUntil: 1_000 + LEASE, attempts: 1,
      result: null, error: null, createdAt: 1_000, updatedAt: 1_000, expiresAt: null, owner: 'host-a 7 99',
    });
    expect(await client!.zcard(`${p}idx`)).toBe(keys.length);
    expect((await ledger.list()).length).toBe(keys.length);
  });

  it('starts a key over from nothing when its hash holds leftovers but no fingerprint', async () => {
    const p = prefix();
    const ledger = redisLedger({ client: client!, prefix: p });
    await client!.hset(`${p}e:k`, 'tok', '4', 'res', '"old"', 'exp', '5');
    const [r] = await ledger.claim([{ key: 'k', fingerprint: 'f', leaseMs: LEASE }], 1_000);
    expect(r).toMatchObject({ outcome: 'claimed', token: 5, entry: { result: null, expiresAt: null } });
    expect(await ledger.get('k')).toEqual(r!.entry);
  });

  it('leaves no window slot behind after a probe', async () => {
    const p = prefix();
    const ledger = redisLedger({ client: client!, prefix: p });
    await ledger.windowAcquire([{ id: 'absent', owner: 'k1', ttlMs: 0 }], 1000);
    await ledger.windowAcquire([{ id: 'mine', owner: 'k1', ttlMs: LEASE }], 1000);
    expect(await client!.exists(`${p}w:mine`)).toBe(1);
    await ledger.windowAcquire([{ id: 'mine', owner: 'k1', ttlMs: 0 }], 1001);
    expect(await client!.keys(`${p}w:*`)).toEqual([]);
  });

  it('answers isDurable from this server, asking it once', async () => {
    const [, aof] = (await client!.config('GET', 'appendonly')) as string[];
    const [, policy] = (await client!.config('GET', 'maxmemory-policy')) as string[];
    const info = vi.spyOn(client!, 'info');
    try {
      const ledger = redisLedger({ client: client!, prefix: prefix() });
      // Without AOF (as on a default local Redis) a restart forgets completed keys: not durable.
      expect(await ledger.isDurable!()).toBe(aof === 'yes' && policy === 'noeviction');
      expect(await ledger.isDurable!()).toBe(aof === 'yes' && policy === 'noeviction');
      expect(info.mock.calls.map((c) => c[0])).toEqual(['persistence', 'memory']);
    } finally {
      info.mockRestore();
    }
  });

  it('answers isDurable from the durable option without asking the server', async () => {
    const unreachable = redisLedger({ url: 'redis://127.0.0.1:1', durable: true });
    expect(await unreachable.isDurable!()).toBe(true);
    await unreachable.close();
    expect(await redisLedger({ client: client!, durable: false }).isDurable!()).toBe(false);
  });
});

/** A client answering INFO with the given lines, or refusing it. */
const infoClient = (persistence: string, memory: string | Error) => ({
  options: {},
  defineCommand: () => undefined,
  info: async (section: string) => {
    if (memory instanceof Error) throw memory;
    return section === 'persistence' ? `# Persistence\r\n${persistence}\r\n` : `# Memory\r\n${memory}\r\n`;
  },
}) as unknown as Redis;

describe('redisLedger isDurable', () => {
  it.each([
    ['aof_enabled:1', 'maxmemory_policy:noeviction', true],
    ['aof_enabled:1', 'maxmemory_policy:allkeys-lru', false],
    ['aof_enabled:0', 'maxmemory_policy:noeviction', false],
    ['aof_enabled:1', new Error("ERR unknown command 'info'"), false],
  ])('answers %s with %s: %s', async (persistence, memory, durable) => {
    expect(await redisLedger({ client: infoClient(persistence, memory) }).isDurable!()).toBe(durable);
  });
});
