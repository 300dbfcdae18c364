/**
 * The Redis ledger (`crm-upsert-sync/ledger/redis`) on ioredis 5. Each batch is one Lua script
 * (EVALSHA), which Redis runs atomically. Scripts take time from the caller's `now` (which the
 * engine derives from `clock()`, Redis TIME). Durability needs AOF and no eviction: see docs/ledger.md.
 *
 * Layout under `prefix` (default `{crm-upsert}:`; the braces keep every key in one Cluster slot):
 *   e:<key> hash per entry · m:<id> mark string · w:<id> window slot hash · idx sorted set of keys ·
 *   floor: above every token of an entry that was pruned or can expire
 */
import { Redis } from 'ioredis';
import { ConfigError, LedgerError, registerSecret } from '../errors.js';
import type {
  ClaimRequest, ClaimResult, CompleteRequest, EntryStatus, FailRequest, Json, LedgerBackend, LedgerEntry,
  ListOptions, TokenRef, WindowAcquireRequest, WindowSettleRequest, WindowSlot,
} from './types.js';

export interface RedisLedgerOptions {
  /** `redis://[:password@]host:6379[/db]` or `rediss://…`; the ledger owns (and quits) the client it builds. */
  url?: string;
  /** Or an existing ioredis client; the caller keeps ownership (close() does not quit it). */
  client?: Redis;
  /** Prefix of every key the ledger writes. Default `{crm-upsert}:`. */
  prefix?: string;
  /** False opens the ledger read-only: reads work, writes throw (Redis has no schema to create). Default true. */
  createSchema?: boolean;
  /**
   * What `isDurable()` answers, without asking the server. Default: ask it once (AOF on and
   * `maxmemory-policy noeviction`, from INFO).
   */
  durable?: boolean;
}

/** Keys and entry fields: st status, tok token, lease, att attempts, res/err JSON, ca/ua/exp times, own owner. */
const PRELUDE = `
local P = ARGV[1]
local now = tonumber(ARGV[2])
local reqs = cjson.decode(ARGV[3])
local idx = KEYS[1]
local out = {}
local function fmt(n) return string.format('%.0f', n) end
local FIELDS = {'fp', 'st', 'tok', 'lease', 'att', 'res', 'err', 'ca', 'ua', 'exp', 'own'}
local function entry(ek) return redis.call('HMGET', ek, unpack(FIELDS)) end
local function fenced(ek, token)
  local e = redis.call('HMGET', ek, 'st', 'tok')
  return e[1] == 'in_progress' and tonumber(e[2]) == token
end
local function floor() return tonumber(redis.call('GET', P .. 'floor')) or 0 end
local function raiseFloor(token)
  if token > floor() then redis.call('SET', P .. 'floor', fmt(token)) end
end
`;

/** decideClaim in Lua, branch for branch; the conformance suite's decideClaim table holds it to it. */
const CLAIM = `${PRELUDE}
for i, r in ipairs(reqs) do
  local key, fp, lease, owner = r[1], r[2], r[3], r[6]
  local ek = P .. 'e:' .. key
  local e = entry(ek)
  local outcome
  local exp = tonumber(e[10])
  if not e[1] or (e[2] ~= 'in_progress' and exp and exp <= now) then
    -- new, or past its retention: the key starts over, its token above the floor
    local token = math.max(tonumber(e[3]) or 0, floor()) + 1
    redis.call('DEL', ek)
    redis.call('HSET', ek, 'fp', fp, 'st', 'in_progress', 'tok', fmt(token), 'lease', fmt(now + lease),
      'att', '1', 'ca', fmt(now), 'ua', fmt(now))
    if owner then redis.call('HSET', ek, 'own', owner) end
    redis.call('ZADD', idx, 0, key)
    outcome = 'claimed'
  elseif e[1] ~= fp then
    outcome = 'conflict'
  elseif (e[2] == 'in_progress' and (tonumber(e[4]) or 0) <= now) or (e[2] == 'failed' and r[4]) then
    redis.call('HSET', ek, 'st', 'in_progress', 'tok', fmt(tonumber(e[3]) + 1), 'lease', fmt(now + lease),
      'att', fmt(tonumber(e[5]) + 1), 'ua', fmt(now))
    redis.call('HDEL', ek, 'exp')
    if owner then redis.call('HSET', ek, 'own', owner) else redis.call('HDEL', ek, 'own') end
    redis.call('PERSIST', ek)
    outcome = 'claimed'
  else
    outcome = e[2]
  end
  if outcome == 'claimed' then e = entry(ek) end
  local mark = false
  if r[5] then mark = redis.call('GET', P .. 'm:' .. r[5]) end
  out[i] = {outcome, e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11], mark}
end
return out`;

/**
 * A fenced batch script: for each request {key, token, ...}, run `body` when the entry is in
 * progress with that token (and `also` holds), answering 1, else 0.
 */
const fencedScript = (body: string, { head = '', also = '' }: { head?: string; also?: string } = {}) => `${PRELUDE}
${head}
for i, r in ipairs(reqs) do
  local ek = P .. 'e:' .. r[1]
  if fenced(ek, r[2])${also} then
${body}
    out[i] = 1
  else
    out[i] = 0
  end
end
return out`;

const COMPLETE = fencedScript(`    redis.call('HSET', ek, 'st', 'completed', 'res', r[3], 'ua', fmt(now))
    redis.call('HDEL', ek, 'err', 'lease')
    if r[4] then
      redis.call('HSET', ek, 'exp', fmt(now + r[4]))
      -- relative expiry: the same instant as expiresAt on a real clock, and harmless on a test clock
      if r[4] > 0 then redis.call('PEXPIRE', ek, r[4]) end
      -- the entry and its token vanish together: a later claim of the key must start above it
      raiseFloor(r[2])
    else
      redis.call('HDEL', ek, 'exp')
    end
    if r[5] then redis.call('SET', P .. 'm:' .. r[5], r[6]) end`);

const FAIL = fencedScript(`    redis.call('HSET', ek, 'st', 'failed', 'err', r[3], 'ua', fmt(now))
    redis.call('HDEL', ek, 'lease')
    if r[4] then redis.call('SET', P .. 'm:' .. r[4], r[5]) end`);

const RELEASE = fencedScript(`    redis.call('HSET', ek, 'lease', fmt(now), 'ua', fmt(now))`);

const RENEW = fencedScript(`    redis.call('HSET', ek, 'lease', fmt(now + leaseMs), 'ua', fmt(now))`, {
  head: 'local leaseMs = tonumber(ARGV[4])',
  also: " and (tonumber(redis.call('HGET', ek, 'lease')) or 0) > now",
});

const WINDOW_ACQUIRE = `${PRELUDE}
for i, r in ipairs(reqs) do
  local wk = P .. 'w:' .. r[1]
  local w = redis.call('HMGET', wk, 'o', 'c', 'x')
  if w[1] and tonumber(w[3]) > now and (w[1] ~= r[2] or w[2] == '1') then
    out[i] = {w[1] == r[2] and 1 or 0, w[1], w[2], w[3]}
  else
    -- absent, expired, or this owner's pending hold: (re)start it; a probe (ttl 0) stores nothing
    if r[3] > 0 then
      redis.call('HSET', wk, 'o', r[2], 'c', '0', 'x', fmt(now + r[3]))
      redis.call('PEXPIRE', wk, r[3])
    elseif w[1] then
      redis.call('DEL', wk)
    end
    out[i] = {1, r[2], '0', fmt(now + r[3])}
  end
end
return out`;

const WINDOW_SETTLE = `${PRELUDE}
for _, r in ipairs(reqs) do
  local wk = P .. 'w:' .. r[1]
  if redis.call('HGET', wk, 'o') == r[2] then
    if r[3] and r[3] > 0 then
      redis.call('HSET', wk, 'c', '1', 'x', fmt(now + r[3]))
      redis.call('PEXPIRE', wk, r[3])
    else
      redis.call('DEL', wk)
    end
  end
end
return 0`;

/**
 * Scans up to ARGV[3] index members after ARGV[2]; returns {lastScanned, matches...}. Drops index
 * members of vanished entries unless ARGV[6] (read-only) is '1'.
 */
const LIST = `
local P, after, count, status, limit = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local idx = KEYS[1]
local keys = redis.call('ZRANGEBYLEX', idx, after == '' and '-' or ('(' .. after), '+', 'LIMIT', 0, count)
local out = {keys[#keys] or false}
for _, k in ipairs(keys) do
  local e = redis.call('HMGET', P .. 'e:' .. k, 'fp', 'st', 'tok', 'lease', 'att', 'res', 'err', 'ca', 'ua', 'exp', 'own')
  if not e[1] then
    if ARGV[6] ~= '1' then redis.call('ZREM', idx, k) end
  elseif status == '' or e[2] == status then
    out[#out + 1] = {k, e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11]}
    if limit >= 0 and #out - 1 >= limit then
      out[1] = k
      return out
    end
  end
end
return out`;

/** Scans up to ARGV[3] index members after ARGV[2]; deletes the expired and the old; returns {lastScanned, deleted}. */
const PRUNE = `
local P, after, count, now, older = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local idx = KEYS[1]
local keys = redis.call('ZRANGEBYLEX', idx, after == '' and '-' or ('(' .. after), '+', 'LIMIT', 0, count)
local n, top = 0, 0
for _, k in ipairs(keys) do
  local ek = P .. 'e:' .. k
  local e = redis.call('HMGET', ek, 'st', 'ua', 'exp', 'tok')
  local exp = tonumber(e[3])
  local gone = not e[1]
    or (exp and exp <= now)
    or (older and e[1] ~= 'in_progress' and tonumber(e[2]) < older)
  if gone then
    top = math.max(top, tonumber(e[4]) or 0)
    redis.call('DEL', ek)
    redis.call('ZREM', idx, k)
    n = n + 1
  end
end
local floorKey = P .. 'floor'
if top > (tonumber(redis.call('GET', floorKey)) or 0) then redis.call('SET', floorKey, string.format('%.0f', top)) end
return {keys[#keys] or false, n}`;

const SCRIPTS = {
  crmUpsertLedgerClaim: CLAIM,
  crmUpsertLedgerComplete: COMPLETE,
  crmUpsertLedgerFail: FAIL,
  crmUpsertLedgerRelease: RELEASE,
  crmUpsertLedgerRenew: RENEW,
  crmUpsertLedgerWindowAcquire: WINDOW_ACQUIRE,
  crmUpsertLedgerWindowSettle: WINDOW_SETTLE,
  crmUpsertLedgerList: LIST,
  crmUpsertLedgerPrune: PRUNE,
} as const;
type ScriptName = keyof typeof SCRIPTS;
type Reply = string | number | null | Reply[];

const SCAN_CHUNK = 500;
const num = (v: Reply | undefined): number => Number(v);
const numOrNull = (v: Reply | undefined): number | null => (v === null || v === undefined ? null : Number(v));
const json = (v: Reply | undefined): Json | null => (v === null || v === undefined ? null : (JSON.parse(String(v)) as Json));

/** [key, fp, st, tok, lease, att, res, err, ca, ua, exp, own] */
const toEntry = (a: Reply[]): LedgerEntry => ({
  key: String(a[0]),
  fingerprint: String(a[1]),
  status: String(a[2]) as EntryStatus,
  token: num(a[3]),
  leaseUntil: numOrNull(a[4]),
  attempts: num(a[5]),
  result: json(a[6]),
  error: json(a[7]),
  createdAt: num(a[8]),
  updatedAt: num(a[9]),
  owner: a[11] === null || a[11] === undefined ? null : String(a[11]),
  expiresAt: numOrNull(a[10]),
});

/** INFO fields that make a completed entry survive a restart (AOF) and memory pressure (no eviction). */
const isDurableInfo = (persistence: string, memory: string): boolean =>
  /^aof_enabled:1\r?$/m.test(persistence) && /^maxmemory_policy:noeviction\r?$/m.test(memory);

/** The ledger on Redis: one Lua script per batch. */
export function redisLedger(options: RedisLedgerOptions): LedgerBackend {
  const prefix = options.prefix ?? '{crm-upsert}:';
  let client: Redis;
  let owned = false;
  if (options.client) {
    client = options.client;
  } else if (options.url) {
    try {
      registerSecret(decodeURIComponent(new URL(options.url).password));
    } catch {
      // not a URL: ioredis reports it on connect
    }
    client = new Redis(options.url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    // Connection errors surface on the commands that fail; the event alone must not crash the process.
    client.on('error', () => undefined);
    owned = true;
  } else {
    throw new ConfigError('redisLedger needs a url or a client');
  }
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
      throw new LedgerError(`redis ledger ${what} failed: ${message}`, { cause: err });
    }
  };
  const readOnly = options.createSchema === false;
  const batch = async (what: string, name: ScriptName, now: number, items: unknown[], ...extra: (string | number)[]) => {
    if (readOnly) throw new LedgerError(`redis ledger ${prefix} is opened read-only (createSchema: false): ${what} refused`);
    return (await call(what, name, String(now), JSON.stringify(items), ...extra)) as Reply[];
  };
  const flags = (reply: Reply[]) => reply.map((v) => v === 1);
  let durable = options.durable === undefined ? undefined : Promise.resolve(options.durable);

  return {
    name: 'redis',

    claim: async (reqs: ClaimRequest[], now) => {
      if (reqs.length === 0) return [];
      const reply = await batch('claim', 'crmUpsertLedgerClaim', now, reqs.map((r) => [
        r.key, r.fingerprint, Math.round(r.leaseMs), r.retryFailed === true, r.markId ?? false, r.owner ?? false,
      ]));
      return reply.map((item, i): ClaimResult => {
        const a = item as Reply[];
        const entry = toEntry([reqs[i]!.key, ...a.slice(1, 12)]);
        const result: ClaimResult = { key: reqs[i]!.key, outcome: String(a[0]) as ClaimResult['outcome'], entry };
        if (result.outcome === 'claimed') result.token = entry.token;
        if (a[12] !== null && a[12] !== undefined) result.mark = String(a[12]);
        return result;
      });
    },

    complete: async (reqs: CompleteRequest[], now) => (reqs.length === 0 ? [] : flags(await batch('complete', 'crmUpsertLedgerComplete', now,
      reqs.map((r) => [
        r.key, r.token, JSON.stringify(r.result),
        r.retentionMs === null || r.retentionMs === undefined ? false : Math.round(r.retentionMs),
        r.mark?.id ?? false, r.mark?.value ?? false,
      ])))),

    fail: async (reqs: FailRequest[], now) => (reqs.length === 0 ? [] : flags(await batch('fail', 'crmUpsertLedgerFail', now,
      reqs.map((r) => [r.key, r.token, JSON.stringify(r.error), r.mark?.id ?? false, r.mark?.value ?? false])))),

    release: async (reqs: TokenRef[], now) => (reqs.length === 0 ? [] : flags(await batch('release', 'crmUpsertLedgerRelease', now,
      reqs.map((r) => [r.key, r.token])))),

    renew: async (reqs: TokenRef[], leaseMs, now) => (reqs.length === 0 ? [] : flags(await batch('renew', 'crmUpsertLedgerRenew', now,
      reqs.map((r) => [r.key, r.token]), Math.round(leaseMs)))),

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
        const a = await client.hmget(`${prefix}e:${key}`, 'fp', 'st', 'tok', 'lease', 'att', 'res', 'err', 'ca', 'ua', 'exp', 'own');
        return a[0] === null ? null : toEntry([key, ...a]);
      } catch (err) {
        throw new LedgerError(`redis ledger get failed: ${(err as Error).message}`, { cause: err });
      }
    },

    list: async (opts: ListOptions = {}) => {
      const out: LedgerEntry[] = [];
      const limit = opts.limit === undefined ? -1 : Math.max(0, Math.floor(opts.limit));
      if (limit === 0) return out;
      let after = opts.after ?? '';
      // Chunked so a status filter over a large ledger never blocks Redis in one long script.
      for (;;) {
        const reply = (await call('list', 'crmUpsertLedgerList', after, SCAN_CHUNK, opts.status ?? '', limit < 0 ? -1 : limit - out.length, readOnly ? '1' : '0')) as Reply[];
        for (const item of reply.slice(1)) out.push(toEntry(item as Reply[]));
        if (reply[0] === null || (limit >= 0 && out.length >= limit)) return out;
        after = String(reply[0]);
      }
    },

    prune: async (now, olderThan) => {
      if (readOnly) throw new LedgerError(`redis ledger ${prefix} is opened read-only (createSchema: false): prune refused`);
      let after = '';
      let n = 0;
      for (;;) {
        const reply = (await call('prune', 'crmUpsertLedgerPrune', after, SCAN_CHUNK, now, olderThan ?? '')) as Reply[];
        n += num(reply[1]);
        if (reply[0] === null) return n;
        after = String(reply[0]);
      }
    },

    clock: async () => {
      try {
        const [seconds, micros] = await client.time();
        return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      } catch (err) {
        throw new LedgerError(`redis ledger clock failed: ${(err as Error).message}`, { cause: err });
      }
    },

    isDurable: () => {
      durable ??= Promise.all([client.info('persistence'), client.info('memory')]).then(
        ([persistence, memory]) => isDurableInfo(persistence, memory),
        (err: unknown) => {
          // A server that refuses INFO cannot vouch for itself: not durable, and no point asking again.
          if (/unknown command|NOPERM|no permissions/i.test((err as Error).message)) return false;
          durable = undefined;
          throw new LedgerError(`redis ledger isDurable failed: ${(err as Error).message}`, { cause: err });
        },
      );
      return durable;
    },

    close: async () => {
      if (!owned) return;
      owned = false;
      await client.quit().catch(() => client.disconnect());
    },
  };
}
