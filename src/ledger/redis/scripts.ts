/**
 * The Lua scripts of the Redis ledger, one per batch operation. Each gets KEYS[1] the key index,
 * ARGV[1] the key prefix, ARGV[2] now and ARGV[3] the requests as JSON (list and prune: a scan
 * window instead). Entry replies list the fields in the codec's column order (kit/codec.ts).
 */

/**
 * The hash fields of an entry, in the codec's column order after the key: fp fingerprint,
 * st status, tok token, lease, att attempts, res/err JSON, ca/ua/exp times, own owner.
 */
export const ENTRY_FIELDS = ['fp', 'st', 'tok', 'lease', 'att', 'res', 'err', 'ca', 'ua', 'exp', 'own'] as const;
const LUA_FIELDS = `local FIELDS = {${ENTRY_FIELDS.map((f) => `'${f}'`).join(', ')}}`;

const PRELUDE = `
local P = ARGV[1]
local now = tonumber(ARGV[2])
local reqs = cjson.decode(ARGV[3])
local idx = KEYS[1]
local out = {}
local function fmt(n) return string.format('%.0f', n) end
-- now, and now + a duration, as stored: formatted once per script (a batch repeats them)
local NOW = fmt(now)
local laters = {}
local function later(ms)
  local s = laters[ms]
  if not s then s = fmt(now + ms) laters[ms] = s end
  return s
end
${LUA_FIELDS}
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

/**
 * decideClaim in Lua, branch for branch; the conformance suite's decideClaim table holds it to it.
 * A fresh entry is not read back: its reply is {'fresh', token, now, leaseUntil, mark}, the rest
 * being the request's own. A request is {key, fingerprint, leaseMs, retryFailed, markId, owner,
 * holds}, false for an absent one. The floor is read once per batch (a claim never raises it) and the
 * index gets every fresh key in one ZADD. Otherwise a reply is {outcome, the entry's fields, mark},
 * false for none. Both end with the holder the holds mark named before a taken claim moved it
 * ({key, status, lease}, false for none). Answers one JSON text, as GET_MANY does.
 */
const CLAIM = `${PRELUDE}
local top
local added = {}
for i, r in ipairs(reqs) do
  local key, fp, lease, owner = r[1], r[2], r[3], r[6]
  local ek = P .. 'e:' .. key
  local e = entry(ek)
  local outcome
  local exp = tonumber(e[10])
  if not e[1] or (e[2] ~= 'in_progress' and exp and exp <= now) then
    -- new, or past its retention: the key starts over, its token above the floor
    if top == nil then top = floor() end
    local token, at, till = fmt(math.max(tonumber(e[3]) or 0, top) + 1), NOW, later(lease)
    local stale = false
    for f = 1, #FIELDS do if e[f] then stale = true break end end
    if stale then redis.call('DEL', ek) end
    if owner then
      redis.call('HSET', ek, 'fp', fp, 'st', 'in_progress', 'tok', token, 'lease', till, 'att', '1', 'ca', at, 'ua', at, 'own', owner)
    else
      redis.call('HSET', ek, 'fp', fp, 'st', 'in_progress', 'tok', token, 'lease', till, 'att', '1', 'ca', at, 'ua', at)
    end
    added[#added + 1] = 0
    added[#added + 1] = key
    if #added >= 1000 then
      redis.call('ZADD', idx, unpack(added))
      added = {}
    end
    -- the rest of a fresh entry is the request's own (fingerprint, owner) or empty
    outcome = 'fresh'
    e = {token, at, till}
  elseif e[1] ~= fp then
    outcome = 'conflict'
  elseif (e[2] == 'in_progress' and (tonumber(e[4]) or 0) <= now) or (e[2] == 'failed' and r[4]) then
    redis.call('HSET', ek, 'st', 'in_progress', 'tok', fmt(tonumber(e[3]) + 1), 'lease', later(lease),
      'att', fmt(tonumber(e[5]) + 1), 'ua', NOW)
    redis.call('HDEL', ek, 'exp')
    if owner then redis.call('HSET', ek, 'own', owner) else redis.call('HDEL', ek, 'own') end
    redis.call('PERSIST', ek)
    e = entry(ek)
    outcome = 'claimed'
  else
    outcome = e[2]
  end
  local mark = false
  if r[5] then mark = redis.call('GET', P .. 'm:' .. r[5]) end
  -- after the mark was read: a claim reports the marks as they were before it, and the claim
  -- the holds mark named before it moves ({key, status, lease}, false for none)
  local holder = false
  if r[7] and (outcome == 'fresh' or outcome == 'claimed') then
    local hk = redis.call('GET', P .. 'm:' .. r[7])
    if hk and hk ~= key then
      local he = redis.call('HMGET', P .. 'e:' .. hk, 'st', 'lease')
      if he[1] then holder = {hk, he[1], he[2] or false} end
    end
    redis.call('SET', P .. 'm:' .. r[7], key)
  end
  if outcome == 'fresh' then
    out[i] = {outcome, e[1], e[2], e[3], mark, holder}
  else
    out[i] = {outcome, e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11], mark, holder}
  end
end
if #added > 0 then redis.call('ZADD', idx, unpack(added)) end
return cjson.encode(out)`;

/**
 * A fenced batch script: for each request {key, token, ...}, run `body` when the entry is in
 * progress with that token (and `also` holds), answering 1, else 0.
 */
const fencedScript = (body: string, { head = '', also = '', tail = '' }: { head?: string; also?: string; tail?: string } = {}) => `${PRELUDE}
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
${tail}
return out`;

const COMPLETE = fencedScript(`    if r[4] then
      redis.call('HSET', ek, 'st', 'completed', 'res', r[3], 'ua', NOW, 'exp', later(r[4]))
      redis.call('HDEL', ek, 'err', 'lease')
      -- relative expiry: the same instant as expiresAt on a real clock, and harmless on a test clock
      if r[4] > 0 then redis.call('PEXPIRE', ek, r[4]) end
      -- the entry and its token vanish together: a later claim of the key must start above it
      if r[2] > top then top = r[2] end
    else
      redis.call('HSET', ek, 'st', 'completed', 'res', r[3], 'ua', NOW)
      redis.call('HDEL', ek, 'err', 'lease', 'exp')
    end
    if r[5] then redis.call('SET', P .. 'm:' .. r[5], r[6]) end`, {
  head: 'local top = 0',
  tail: 'if top > 0 then raiseFloor(top) end',
});

const FAIL = fencedScript(`    redis.call('HSET', ek, 'st', 'failed', 'err', r[3], 'ua', NOW)
    redis.call('HDEL', ek, 'lease')
    if r[4] then redis.call('SET', P .. 'm:' .. r[4], r[5]) end`);

const RELEASE = fencedScript(`    redis.call('HSET', ek, 'lease', NOW, 'ua', NOW)`);

const RENEW = fencedScript(`    redis.call('HSET', ek, 'lease', later(leaseMs), 'ua', NOW)`, {
  head: 'local leaseMs = tonumber(ARGV[4])',
  also: " and (tonumber(redis.call('HGET', ek, 'lease')) or 0) > now",
});

// A takeover keeps 'res' (the claim script rewrites only the claim's fields): the next holder reads the note.
const NOTE = fencedScript(`    redis.call('HSET', ek, 'res', r[3], 'ua', NOW)`);

/** decideWindow in Lua. */
const WINDOW_ACQUIRE = `${PRELUDE}
for i, r in ipairs(reqs) do
  local wk = P .. 'w:' .. r[1]
  local w = redis.call('HMGET', wk, 'o', 'c', 'x')
  if w[1] and tonumber(w[3]) > now and (w[1] ~= r[2] or w[2] == '1') then
    out[i] = {w[1] == r[2] and 1 or 0, w[1], w[2], w[3]}
  else
    -- absent, expired, or this owner's pending hold: (re)start it; a probe (ttl 0) stores nothing
    if r[3] > 0 then
      redis.call('HSET', wk, 'o', r[2], 'c', '0', 'x', later(r[3]))
      redis.call('PEXPIRE', wk, r[3])
    elseif w[1] then
      redis.call('DEL', wk)
    end
    out[i] = {1, r[2], '0', later(r[3])}
  end
end
return out`;

const WINDOW_SETTLE = `${PRELUDE}
for _, r in ipairs(reqs) do
  local wk = P .. 'w:' .. r[1]
  if redis.call('HGET', wk, 'o') == r[2] then
    if r[3] and r[3] > 0 then
      redis.call('HSET', wk, 'c', '1', 'x', later(r[3]))
      redis.call('PEXPIRE', wk, r[3])
    else
      redis.call('DEL', wk)
    end
  end
end
return 0`;

/**
 * Reads the entries of ARGV[2] (a JSON array of keys), writing nothing. Answers one JSON text (an
 * array: the fields of each entry, false for an absent key): one bulk reply parses far faster
 * than eleven per entry.
 */
const GET_MANY = `
${LUA_FIELDS}
local P = ARGV[1]
local out = {}
for i, key in ipairs(cjson.decode(ARGV[2])) do
  local e = redis.call('HMGET', P .. 'e:' .. key, unpack(FIELDS))
  if e[1] then out[i] = e else out[i] = false end
end
return cjson.encode(out)`;

/**
 * For each mark id of ARGV[2] (a JSON array), the entry of the key that mark names, writing
 * nothing; answers one JSON text as GET_MANY does ({key, fields...}, false for none).
 */
const HELD_BY = `
${LUA_FIELDS}
local P = ARGV[1]
local out = {}
for i, id in ipairs(cjson.decode(ARGV[2])) do
  local key = redis.call('GET', P .. 'm:' .. id)
  local e = key and redis.call('HMGET', P .. 'e:' .. key, unpack(FIELDS))
  if e and e[1] then
    local row = {key}
    for f = 1, #FIELDS do row[f + 1] = e[f] end
    out[i] = row
  else
    out[i] = false
  end
end
return cjson.encode(out)`;

/** For each mark id of ARGV[2] (a JSON array), its value, false for none; one JSON text. */
const READ_MARKS = `
local P = ARGV[1]
local out = {}
for i, id in ipairs(cjson.decode(ARGV[2])) do
  out[i] = redis.call('GET', P .. 'm:' .. id)
end
return cjson.encode(out)`;

/**
 * Scans up to ARGV[3] index members after ARGV[2]; returns {lastScanned, matches...}. Drops index
 * members of vanished entries unless ARGV[6] (read-only) is '1'.
 */
const LIST = `
${LUA_FIELDS}
local P, after, count, status, limit = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local idx = KEYS[1]
local keys = redis.call('ZRANGEBYLEX', idx, after == '' and '-' or ('(' .. after), '+', 'LIMIT', 0, count)
local out = {keys[#keys] or false}
for _, k in ipairs(keys) do
  local e = redis.call('HMGET', P .. 'e:' .. k, unpack(FIELDS))
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

/** The ledger's birth: sets ARGV[2] (Redis TIME, read by the caller) if absent; returns the stored value. */
const BORN_AT = `
local born = ARGV[1] .. 'born'
redis.call('SET', born, ARGV[2], 'NX')
return redis.call('GET', born)`;

export const SCRIPTS = {
  crmUpsertLedgerClaim: CLAIM,
  crmUpsertLedgerComplete: COMPLETE,
  crmUpsertLedgerFail: FAIL,
  crmUpsertLedgerRelease: RELEASE,
  crmUpsertLedgerRenew: RENEW,
  crmUpsertLedgerNote: NOTE,
  crmUpsertLedgerWindowAcquire: WINDOW_ACQUIRE,
  crmUpsertLedgerWindowSettle: WINDOW_SETTLE,
  crmUpsertLedgerGetMany: GET_MANY,
  crmUpsertLedgerHeldBy: HELD_BY,
  crmUpsertLedgerReadMarks: READ_MARKS,
  crmUpsertLedgerList: LIST,
  crmUpsertLedgerPrune: PRUNE,
  crmUpsertLedgerBornAt: BORN_AT,
} as const;
export type ScriptName = keyof typeof SCRIPTS;
