/** The Redis backend: each batch one Lua script (scripts.ts), run atomically by Redis. */
import type { Redis } from 'ioredis';
import { LedgerError } from '../../errors.js';
import { missingDriverMessage, PEERS, requireOptional } from '../../optional-package.js';
import { connect, encodeJson, encodeNotes, entryFromValues, ledgerFailure, readOnlyRefusal } from '../kit/index.js';
import type {
  ClaimHolder, ClaimRequest, ClaimResult, CompleteRequest, EntryStatus, FailRequest, LedgerBackend, LedgerEntry,
  ListOptions, NoteRequest, TokenRef, WindowAcquireRequest, WindowSettleRequest, WindowSlot,
} from '../types.js';
import { durabilityProbe } from './durability.js';
import type { RedisLedgerOptions } from './options.js';
import { ENTRY_FIELDS, SCRIPTS, type ScriptName } from './scripts.js';

// Required, not imported: importing this module without ioredis is then one message, and the entry stays require()-able.
const ioredis = requireOptional<typeof import('ioredis')>(PEERS.ioredis.name, missingDriverMessage('redis', PEERS.ioredis));

type Reply = string | number | null | Reply[];

/** Index members a list or prune script scans per call, so no one script blocks Redis for long. */
const SCAN_CHUNK = 500;
const num = (v: Reply | undefined): number => Number(v);
/** A field the script answered `false` for (absent) as the codec's null. */
const or = (v: string | false | undefined): string | null => (v === false || v === undefined ? null : v);

/** The holder a claim reply names ({key, status, lease}, false for none). */
function holderOf(v: unknown): { holder?: ClaimHolder } {
  if (!Array.isArray(v) || typeof v[0] !== 'string') return {};
  const lease = typeof v[2] === 'string' ? Number(v[2]) : null;
  return { holder: { key: v[0], status: String(v[1]) as EntryStatus, leaseUntil: lease } };
}

export function redisLedger(options: RedisLedgerOptions): LedgerBackend {
  const prefix = options.prefix ?? '{crm-upsert}:';
  const { client, release } = connect<Redis, Redis>({
    given: options.client,
    url: options.url,
    build: (url) => new ioredis.Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 }),
    end: (owned) => owned.quit().then(() => undefined, () => owned.disconnect()),
    missing: 'redisLedger needs a url or a client',
  });
  for (const [name, lua] of Object.entries(SCRIPTS)) client.defineCommand(name, { numberOfKeys: 1, lua });

  // Keys built inside the scripts must carry the client's own keyPrefix, as KEYS[1] does.
  const luaPrefix = `${client.options.keyPrefix ?? ''}${prefix}`;
  const idx = `${prefix}idx`;
  const call = async (what: string, name: ScriptName, ...args: (string | number)[]): Promise<Reply> => {
    try {
      const fn = (client as unknown as Record<ScriptName, (...a: (string | number)[]) => Promise<Reply>>)[name];
      return await fn.call(client, idx, luaPrefix, ...args);
    } catch (err) {
      const message = (err as Error).message;
      // A Redis-compatible store without Lua cannot make a claim atomic: refuse rather than degrade.
      if (/unknown command .*eval/i.test(message)) {
        throw new LedgerError('this Redis does not run Lua scripts (EVALSHA); the ledger needs them for atomic claims', { cause: err });
      }
      throw ledgerFailure('redis', what, err);
    }
  };
  const readOnly = options.createSchema === false;
  const batch = async (what: string, name: ScriptName, now: number, items: unknown[], ...extra: (string | number)[]) => {
    if (readOnly) throw readOnlyRefusal(`redis ledger ${prefix}`, what);
    return (await call(what, name, String(now), JSON.stringify(items), ...extra)) as Reply[];
  };
  const flags = (reply: Reply[]) => reply.map((v) => v === 1);
  const clock = async (): Promise<number> => {
    try {
      const [seconds, micros] = await client.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    } catch (err) {
      throw ledgerFailure('redis', 'clock', err);
    }
  };

  return {
    name: 'redis',

    claim: async (reqs: ClaimRequest[], now) => {
      if (reqs.length === 0) return [];
      const reply = JSON.parse(String(await batch('claim', 'crmUpsertLedgerClaim', now, reqs.map((r) => [
        r.key, r.fingerprint, Math.round(r.leaseMs), r.retryFailed === true, r.markId ?? false, r.owner ?? false, r.holds ?? false,
      ])))) as (string | false)[][];
      return reply.map((a, i): ClaimResult => {
        const r = reqs[i]!;
        if (a[0] === 'fresh') {
          const at = Number(a[2]);
          const entry: LedgerEntry = {
            key: r.key, fingerprint: String(r.fingerprint), status: 'in_progress', token: Number(a[1]), leaseUntil: Number(a[3]), attempts: 1,
            result: null, error: null, createdAt: at, updatedAt: at, owner: r.owner ?? null, expiresAt: null,
          };
          const fresh: ClaimResult = { key: r.key, outcome: 'claimed', entry, token: entry.token, ...holderOf(a[5]) };
          if (a[4] !== false && a[4] !== undefined) fresh.mark = a[4];
          return fresh;
        }
        const entry = entryFromValues([r.key, a[1], a[2], a[3], or(a[4]), a[5], or(a[6]), or(a[7]), a[8], a[9], or(a[10]), or(a[11])]);
        const result: ClaimResult = { key: r.key, outcome: a[0] as ClaimResult['outcome'], entry };
        if (result.outcome === 'claimed') Object.assign(result, { token: entry.token, ...holderOf(a[13]) });
        if (a[12] !== false && a[12] !== undefined) result.mark = a[12];
        return result;
      });
    },

    complete: async (reqs: CompleteRequest[], now) => (reqs.length === 0 ? [] : flags(await batch('complete', 'crmUpsertLedgerComplete', now,
      reqs.map((r) => [
        r.key, r.token, encodeJson(r.result),
        r.retentionMs === null || r.retentionMs === undefined ? false : Math.round(r.retentionMs),
        r.mark?.id ?? false, r.mark?.value ?? false,
      ])))),

    fail: async (reqs: FailRequest[], now) => (reqs.length === 0 ? [] : flags(await batch('fail', 'crmUpsertLedgerFail', now,
      reqs.map((r) => [r.key, r.token, encodeJson(r.error), r.mark?.id ?? false, r.mark?.value ?? false])))),

    release: async (reqs: TokenRef[], now) => (reqs.length === 0 ? [] : flags(await batch('release', 'crmUpsertLedgerRelease', now,
      reqs.map((r) => [r.key, r.token])))),

    renew: async (reqs: TokenRef[], leaseMs, now) => (reqs.length === 0 ? [] : flags(await batch('renew', 'crmUpsertLedgerRenew', now,
      reqs.map((r) => [r.key, r.token]), Math.round(leaseMs)))),

    note: async (reqs: NoteRequest[], now) => {
      const texts = encodeNotes(reqs);
      return reqs.length === 0 ? [] : flags(await batch('note', 'crmUpsertLedgerNote', now, reqs.map((r, i) => [r.key, r.token, texts[i]!])));
    },

    windowAcquire: async (reqs: WindowAcquireRequest[], now) => {
      if (reqs.length === 0) return [];
      const reply = await batch('windowAcquire', 'crmUpsertLedgerWindowAcquire', now, reqs.map((r) => [r.id, r.owner, Math.round(r.ttlMs)]));
      return reply.map((item): WindowSlot => {
        const a = item as Reply[];
        return { acquired: a[0] === 1, owner: String(a[1]), confirmed: a[2] === '1', expiresAt: num(a[3]) };
      });
    },

    windowSettle: async (reqs: WindowSettleRequest[], now) => {
      if (reqs.length === 0) return;
      await batch('windowSettle', 'crmUpsertLedgerWindowSettle', now, reqs.map((r) => [r.id, r.owner, r.ttlMs === null ? false : Math.round(r.ttlMs)]));
    },

    get: async (key) => {
      try {
        const a = await client.hmget(`${prefix}e:${key}`, ...ENTRY_FIELDS);
        return a[0] === null ? null : entryFromValues([key, ...a]);
      } catch (err) {
        throw ledgerFailure('redis', 'get', err);
      }
    },

    getMany: async (keys) => {
      if (keys.length === 0) return [];
      const reply = JSON.parse(String(await call('getMany', 'crmUpsertLedgerGetMany', JSON.stringify(keys)))) as (false | (string | false)[])[];
      return keys.map((key, i) => {
        const a = reply[i];
        return Array.isArray(a) ? entryFromValues([key, ...a.map((v) => (v === false ? null : v))]) : null;
      });
    },

    readMarks: async (ids) => {
      if (ids.length === 0) return [];
      const reply = JSON.parse(String(await call('readMarks', 'crmUpsertLedgerReadMarks', JSON.stringify(ids)))) as (string | false)[];
      return ids.map((_, i) => (typeof reply[i] === 'string' ? (reply[i] as string) : null));
    },

    heldBy: async (ids) => {
      if (ids.length === 0) return [];
      const reply = JSON.parse(String(await call('heldBy', 'crmUpsertLedgerHeldBy', JSON.stringify(ids)))) as (false | (string | false)[])[];
      return ids.map((_, i) => {
        const a = reply[i];
        return Array.isArray(a) ? entryFromValues(a.map((v) => (v === false ? null : v))) : null;
      });
    },

    list: async (opts: ListOptions = {}) => {
      const out: LedgerEntry[] = [];
      const limit = opts.limit === undefined ? -1 : Math.max(0, Math.floor(opts.limit));
      if (limit === 0) return out;
      let after = opts.after ?? '';
      // Chunked so a status filter over a large ledger never blocks Redis in one long script.
      for (;;) {
        const reply = (await call('list', 'crmUpsertLedgerList', after, SCAN_CHUNK, opts.status ?? '', limit < 0 ? -1 : limit - out.length, readOnly ? '1' : '0')) as Reply[];
        for (const item of reply.slice(1)) out.push(entryFromValues(item as Reply[]));
        if (reply[0] === null || (limit >= 0 && out.length >= limit)) return out;
        after = String(reply[0]);
      }
    },

    prune: async (now, olderThan) => {
      if (readOnly) throw readOnlyRefusal(`redis ledger ${prefix}`, 'prune');
      let after = '';
      let n = 0;
      for (;;) {
        const reply = (await call('prune', 'crmUpsertLedgerPrune', after, SCAN_CHUNK, now, olderThan ?? '')) as Reply[];
        n += num(reply[1]);
        if (reply[0] === null) return n;
        after = String(reply[0]);
      }
    },

    clock,

    isDurable: durabilityProbe(client, options.durable),

    bornAt: async () => {
      if (readOnly) {
        try {
          const born = await client.get(`${prefix}born`);
          return born === null ? null : Number(born);
        } catch (err) {
          throw ledgerFailure('redis', 'bornAt', err);
        }
      }
      return Number(await call('bornAt', 'crmUpsertLedgerBornAt', String(await clock())));
    },

    close: release,
  };
}
