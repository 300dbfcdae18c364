import { describe, expect, it } from 'vitest';
import { createSync, type HandleContext } from '../../../src/engine/index.js';
import { memoryLedger } from '../../../src/ledger/memory.js';
import { memoryCrm } from '../../helpers/memory-crm.js';

const T0 = Date.parse('2026-11-29T10:00:00Z');

function setup(leaseMs = 60_000) {
  const crm = memoryCrm();
  const clock = { t: T0 };
  const ledger = memoryLedger();
  const sync = createSync({ adapter: crm.adapter, ledger, leaseMs, now: () => clock.t, sleep: async (ms) => void (clock.t += ms), retry: { minTimeoutMs: 1, maxTimeoutMs: 2 } });
  return { crm, sync, clock, ledger };
}

describe('handle', () => {
  it('pays for the model call once across three deliveries and a crash between the model call and the write', async () => {
    const { crm, sync, clock } = setup(30_000);
    let modelCalls = 0;
    let notifications = 0;
    let crashBeforeWrite = true;
    const handler = async (ctx: HandleContext) => {
      const summary = await ctx.once('summarize', async () => `summary #${++modelCalls}`);
      await ctx.once('notify-owner', async () => ++notifications);
      if (crashBeforeWrite) {
        crashBeforeWrite = false;
        throw new Error('worker killed');
      }
      return [
        { op: 'upsert' as const, object: 'contact', externalId: 'zd-42', fields: { email: 'ann@example.com' } },
        { op: 'create' as const, object: 'note', target: { object: 'contact', externalId: 'zd-42' }, fields: { body: summary } },
      ];
    };
    const event = { source: 'zendesk', eventId: 'evt_9', occurredAt: '2026-11-29T09:59:00Z' };
    await expect(sync.handle(event, handler)).rejects.toThrow('worker killed');
    const second = await sync.handle(event, handler);
    clock.t += 1_000;
    const third = await sync.handle(event, handler);
    const fourth = await sync.handle(event, handler);
    expect(second.status).toBe('completed');
    expect(second.outcomes.map((o) => o.status)).toEqual(['created', 'created']);
    expect([third.status, fourth.status]).toEqual(['replayed', 'replayed']);
    expect(third.outcomes.map((o) => o.recordId)).toEqual(second.outcomes.map((o) => o.recordId));
    expect(modelCalls).toBe(1);
    expect(notifications).toBe(1);
    expect(crm.activities('note').map((n) => n.fields.body)).toEqual(['summary #1']);
  });

  it('takes over an event whose worker died holding it, reusing the finished model call', async () => {
    const { crm, sync, clock, ledger } = setup(30_000);
    let modelCalls = 0;
    const event = { source: 'zendesk', eventId: 'evt_10' };
    // A worker claims the event, pays for the model, and dies without a word to the ledger.
    const dying = sync.handle(event, async (ctx) => {
      await ctx.once('summarize', async () => `summary #${++modelCalls}`);
      return new Promise<never>(() => undefined);
    });
    void dying;
    await new Promise((r) => setTimeout(r, 10));
    const busy = await sync.handle(event, async () => []);
    expect(busy.status).toBe('in_flight');
    clock.t += 30_001;
    const result = await sync.handle(event, async (ctx) => {
      const summary = await ctx.once('summarize', async () => `summary #${++modelCalls}`);
      return [
        { op: 'upsert', object: 'contact', externalId: 'zd-1', fields: { email: 'a@b.c' } },
        { op: 'create', object: 'note', target: { object: 'contact', externalId: 'zd-1' }, fields: { body: summary } },
      ];
    });
    expect(result.status).toBe('completed');
    expect(modelCalls).toBe(1);
    expect(crm.activities('note')).toHaveLength(1);
    expect((await ledger.list({ status: 'completed' })).length).toBeGreaterThanOrEqual(3);
  });

  it('gives returned actions the event source, id and time', async () => {
    const { sync } = setup();
    const result = await sync.handle({ source: 'gong', eventId: 'call-7', occurredAt: '2026-11-29T09:00:00Z' }, () => [
      { op: 'upsert', object: 'contact', externalId: 'g-7', fields: { email: 'a@b.c' } },
    ]);
    const direct = sync.prepare({ source: 'gong', eventId: 'call-7', occurredAt: '2026-11-29T09:00:00Z', op: 'upsert', object: 'contact', externalId: 'g-7', fields: {} });
    expect(direct.ok && result.outcomes[0]!.key === direct.key).toBe(true);
  });

  it('marks the event failed when an action is rejected, and completes it on a later good delivery', async () => {
    const { sync } = setup();
    const bad = await sync.handle({ source: 's', eventId: 'e' }, () => [{ op: 'upsert', object: 'contact', externalId: 'x', fields: { password: 'x' } }]);
    expect(bad.status).toBe('failed');
    expect(bad.outcomes[0]!.status).toBe('rejected');
    const good = await sync.handle({ source: 's', eventId: 'e' }, () => [{ op: 'upsert', object: 'contact', externalId: 'x', fields: { email: 'x@y.z' } }]);
    expect(good.status).toBe('completed');
  });
});

describe('handle with an unreadable action', () => {
  it('rejects only the action that throws when read; its neighbour is written', async () => {
    const { crm, sync } = setup();
    const poisoned = { op: 'upsert', object: 'contact', externalId: 'zd-7', get fields(): Record<string, string> { throw new Error('getter exploded'); } };
    const result = await sync.handle({ source: 'zendesk', eventId: 'evt-poison', occurredAt: '2026-11-29T09:59:00Z' }, async () => [
      { op: 'upsert' as const, object: 'contact', externalId: 'zd-6', fields: { email: 'six@example.com' } },
      poisoned as never,
    ]);
    expect(result.status).toBe('failed');
    expect(result.outcomes.map((o) => o.status)).toEqual(['created', 'rejected']);
    expect(crm.records('contact').map((r) => r.externalId)).toEqual(['zd-6']);
  });
});

describe('once', () => {
  it('runs a guarded side effect once per key and returns the stored value after', async () => {
    const { sync } = setup();
    let sent = 0;
    const send = async () => ({ messageId: `m${++sent}` });
    expect(await sync.once('welcome-email:ann', send)).toEqual({ messageId: 'm1' });
    expect(await sync.once('welcome-email:ann', send)).toEqual({ messageId: 'm1' });
    expect(await sync.once('welcome-email:bob', send)).toEqual({ messageId: 'm2' });
    expect(sent).toBe(2);
  });

  it('runs a failed side effect again on the next call', async () => {
    const { sync } = setup();
    let calls = 0;
    await expect(sync.once('k', async () => { calls++; throw new Error('smtp down'); })).rejects.toThrow('smtp down');
    expect(await sync.once('k', async () => ++calls)).toBe(2);
  });
});
