/**
 * The verifiers, against signatures computed here with node:crypto from each scheme's
 * definition (never with the code under test).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  hmacSha256Verifier, hubspotSignatureUri, hubspotV3Verifier, isLoopbackHost, noVerification, sourcesFromConfig, standardWebhooksVerifier, verifierFromConfig,
  type WebhookRequest,
} from '../../src/webhooks/index.js';
import { ConfigError, redact } from '../../src/errors.js';
import { webhooksConfigSchema } from '../../schemas/webhooks.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const enc = (s: string) => new TextEncoder().encode(s);
const hmac = (key: string | Buffer, data: string, digest: 'base64' | 'hex') => createHmac('sha256', key).update(data, 'utf8').digest(digest);

describe('hubspot-v3', () => {
  const secret = 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy';
  const body = JSON.stringify([{ eventId: 101, occurredAt: NOW - 1000, subscriptionType: 'contact.creation', objectId: 7 }, { eventId: 102, objectId: 8 }]);
  const url = 'https://hooks.example.com/hooks/hubspot';
  const signed = (o: { url?: string; signedUri?: string; ts?: number; key?: string; method?: string; payload?: string } = {}): WebhookRequest => {
    const ts = String(o.ts ?? NOW);
    const payload = o.payload ?? body;
    const sig = hmac(o.key ?? secret, `${o.method ?? 'POST'}${o.signedUri ?? o.url ?? url}${payload}${ts}`, 'base64');
    return { method: 'POST', url: o.url ?? url, headers: { 'X-HubSpot-Signature-v3': sig, 'X-HubSpot-Request-Timestamp': ts, 'content-type': 'application/json' }, body: enc(payload) };
  };
  const verify = hubspotV3Verifier({ secret });

  it('accepts a correctly signed batch and yields each event keyed by its eventId', () => {
    const r = verify(signed(), NOW);
    expect(r).toEqual({
      ok: true,
      events: [
        { eventId: '101', occurredAt: new Date(NOW - 1000).toISOString(), payload: JSON.parse(body)[0] },
        { eventId: '102', payload: JSON.parse(body)[1] },
      ],
    });
  });

  it('reads headers from a fetch Headers object as well', () => {
    const req = signed();
    const r = verify({ ...req, headers: new Headers(req.headers as Record<string, string>) }, NOW);
    expect(r.ok).toBe(true);
  });

  it('rejects a wrong secret, a changed body, a changed URL or method, and a missing header with 401', () => {
    expect(verify(signed({ key: 'other-secret' }), NOW)).toMatchObject({ ok: false, status: 401 });
    const tampered = signed();
    tampered.body = enc(body.replace('101', '109'));
    expect(verify(tampered, NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify({ ...signed(), url: 'http://hooks.example.com/hooks/hubspot' }, NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify({ ...signed({ method: 'PUT' }) }, NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify({ ...signed(), headers: { 'x-hubspot-request-timestamp': String(NOW) } }, NOW)).toMatchObject({ ok: false, status: 401 });
  });

  it('rejects a timestamp more than 5 minutes old or ahead, accepts one just inside', () => {
    expect(verify(signed({ ts: NOW - 300_001 }), NOW)).toMatchObject({ ok: false, status: 401, reason: expect.stringContaining('5-minute') });
    expect(verify(signed({ ts: NOW + 300_001 }), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(signed({ ts: NOW - 299_000 }), NOW).ok).toBe(true);
    expect(verify(signed({ ts: NOW + 299_000 }), NOW).ok).toBe(true);
  });

  it('decodes exactly the twelve listed percent-encodings in the URI before signing', () => {
    const raw = 'https://hooks.example.com/hooks/hubspot?email=a%40b.com&path=%2Fx%2Fy&list=%28a%2Cb%29%3Bc%21%24%27%2A%3A%3F&space=%20&amp=%26&eq=%3D&lower=%3a';
    const decoded = "https://hooks.example.com/hooks/hubspot?email=a@b.com&path=/x/y&list=(a,b);c!$'*:?&space=%20&amp=%26&eq=%3D&lower=:";
    expect(hubspotSignatureUri(raw)).toBe(decoded);
    expect(verify(signed({ url: raw, signedUri: decoded }), NOW).ok).toBe(true);
    // A sender that signed the still-encoded URI does not match: HubSpot signs the decoded form.
    expect(verify(signed({ url: raw, signedUri: raw }), NOW)).toMatchObject({ ok: false, status: 401 });
  });

  it('signs publicUrl plus the query string when the receiver sits behind a proxy', () => {
    const behind = hubspotV3Verifier({ secret, publicUrl: 'https://public.example.com/crm/hubspot' });
    const req = signed({ url: 'http://10.0.0.5:8787/hooks/hubspot?portal=1', signedUri: 'https://public.example.com/crm/hubspot?portal=1' });
    expect(behind(req, NOW).ok).toBe(true);
    expect(verify(req, NOW)).toMatchObject({ ok: false, status: 401 });
  });

  it('accepts any secret in rotation', () => {
    const rotating = hubspotV3Verifier({ secret: ['old-secret', secret] });
    expect(rotating(signed(), NOW).ok).toBe(true);
    expect(rotating(signed({ key: 'old-secret' }), NOW).ok).toBe(true);
    expect(rotating(signed({ key: 'third' }), NOW).ok).toBe(false);
  });

  it('answers 400 for a signed body that is not JSON or has an event without eventId', () => {
    expect(verify(signed({ payload: '[{"eventId":1' }), NOW)).toMatchObject({ ok: false, status: 400 });
    expect(verify(signed({ payload: '[{"eventId":1},{"objectId":2}]' }), NOW)).toMatchObject({ ok: false, status: 400, reason: 'event 1 has no eventId' });
    expect(verify(signed({ payload: '[]' }), NOW)).toMatchObject({ ok: false, status: 400 });
  });
});

describe('standard-webhooks', () => {
  const key = randomBytes(24);
  const secret = `whsec_${key.toString('base64')}`;
  const otherKey = randomBytes(24);
  const body = JSON.stringify({ type: 'ticket.created', timestamp: '2026-12-01T11:59:00Z', data: { id: 't-1' } });
  const sign = (k: Buffer, id: string, ts: number, payload = body) => `v1,${hmac(k, `${id}.${ts}.${payload}`, 'base64')}`;
  const req = (signatures: string, o: { id?: string; ts?: number } = {}): WebhookRequest => ({
    method: 'POST', url: 'http://127.0.0.1/hooks/z',
    headers: { 'webhook-id': o.id ?? 'msg_1', 'webhook-timestamp': String(o.ts ?? NOW / 1000), 'webhook-signature': signatures },
    body: enc(body),
  });
  const ts = NOW / 1000;

  it('accepts a correct signature; webhook-id keys the event, the body timestamp dates it', () => {
    const r = standardWebhooksVerifier({ secret })(req(sign(key, 'msg_1', ts)), NOW);
    expect(r).toEqual({ ok: true, events: [{ eventId: 'msg_1', occurredAt: '2026-12-01T11:59:00.000Z', payload: JSON.parse(body) }] });
  });

  it('accepts any of several v1 signatures (the sender rotating) and any of several secrets (the receiver rotating)', () => {
    const verify = standardWebhooksVerifier({ secret });
    expect(verify(req(`v1,${Buffer.alloc(32).toString('base64')} v2,abc ${sign(key, 'msg_1', ts)}`), NOW).ok).toBe(true);
    const both = standardWebhooksVerifier({ secret: [`whsec_${otherKey.toString('base64')}`, secret] });
    expect(both(req(sign(otherKey, 'msg_1', ts)), NOW).ok).toBe(true);
    expect(both(req(sign(key, 'msg_1', ts)), NOW).ok).toBe(true);
  });

  it('rejects a wrong key, another id, a non-v1 scheme and missing headers with 401', () => {
    const verify = standardWebhooksVerifier({ secret });
    expect(verify(req(sign(otherKey, 'msg_1', ts)), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(req(sign(key, 'msg_1', ts), { id: 'msg_2' }), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(req(sign(key, 'msg_1', ts).replace('v1,', 'v2,')), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify({ ...req(''), headers: { 'webhook-id': 'msg_1' } }, NOW)).toMatchObject({ ok: false, status: 401 });
  });

  it('rejects a timestamp more than 5 minutes old or ahead', () => {
    const verify = standardWebhooksVerifier({ secret });
    for (const t of [ts - 301, ts + 301]) expect(verify(req(sign(key, 'msg_1', t), { ts: t }), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(req(sign(key, 'msg_1', ts - 290), { ts: ts - 290 }), NOW).ok).toBe(true);
  });
});

describe('hmac-sha256', () => {
  const secret = 'generic-shared-secret';
  const body = JSON.stringify({ data: { event_id: 'evt-9', at: NOW - 5000 } });
  const req = (header: string, value: string): WebhookRequest => ({ method: 'POST', url: 'http://x/hooks/g', headers: { [header]: value }, body: enc(body) });

  it.each([
    { encoding: 'hex' as const, prefix: 'sha256=', value: `sha256=${hmac(secret, body, 'hex')}` },
    { encoding: 'hex' as const, prefix: 'sha256=', value: `SHA256=${hmac(secret, body, 'hex').toUpperCase()}` },
    { encoding: 'hex' as const, prefix: '', value: hmac(secret, body, 'hex') },
    { encoding: 'base64' as const, prefix: '', value: hmac(secret, body, 'base64') },
  ])('accepts $encoding with prefix "$prefix" ($value)', ({ encoding, prefix, value }) => {
    const verify = hmacSha256Verifier({ secret, header: 'X-Hub-Signature-256', encoding, prefix, eventIdPointer: '/data/event_id', occurredAtPointer: '/data/at' });
    expect(verify(req('x-hub-signature-256', value), NOW)).toEqual({ ok: true, events: [{ eventId: 'evt-9', occurredAt: new Date(NOW - 5000).toISOString(), payload: JSON.parse(body) }] });
  });

  it('rejects a wrong secret, a missing prefix, the wrong encoding and a truncated digest with 401', () => {
    const verify = hmacSha256Verifier({ secret, header: 'x-sig', encoding: 'hex', prefix: 'sha256=', eventIdPointer: '/data/event_id' });
    expect(verify(req('x-sig', `sha256=${hmac('nope', body, 'hex')}`), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(req('x-sig', hmac(secret, body, 'hex')), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(req('x-sig', `sha256=${hmac(secret, body, 'base64')}`), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(req('x-sig', `sha256=${hmac(secret, body, 'hex').slice(0, 62)}`), NOW)).toMatchObject({ ok: false, status: 401 });
    expect(verify(req('x-other', `sha256=${hmac(secret, body, 'hex')}`), NOW)).toMatchObject({ ok: false, status: 401 });
  });

  it('answers 400 when the pointer finds no id', () => {
    const verify = hmacSha256Verifier({ secret, eventIdPointer: '/data/missing' });
    expect(verify(req('x-signature', hmac(secret, body, 'hex')), NOW)).toMatchObject({ ok: false, status: 400 });
  });
});

describe('none, and sources from the config', () => {
  it('takes the id from the pointer (with ~1 escapes) and refuses bodies without it', () => {
    const verify = noVerification({ eventIdPointer: '/meta/a~1b' });
    const r = verify({ method: 'POST', url: 'http://127.0.0.1/hooks/n', headers: {}, body: enc('{"meta":{"a/b":42}}') });
    expect(r).toMatchObject({ ok: true, events: [{ eventId: '42' }] });
    expect(verify({ method: 'POST', url: 'http://127.0.0.1/hooks/n', headers: {}, body: enc('{"meta":{}}') })).toMatchObject({ ok: false, status: 400 });
  });

  it('knows loopback hosts', () => {
    expect(['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.1', 'example.com'].some(isLoopbackHost)).toBe(false);
  });

  const config = (host: string) => webhooksConfigSchema.parse({
    host,
    sources: {
      hubspot: { verify: { kind: 'hubspot-v3', secretEnv: 'HS_APP_SECRET' }, handler: './h.js' },
      local: { verify: { kind: 'none', eventIdPointer: '/id' }, handler: './l.js', maxBodyBytes: 100 },
    },
  });

  it('refuses none on a non-loopback host, naming the field', () => {
    expect(() => sourcesFromConfig(config('0.0.0.0'), { env: { HS_APP_SECRET: 's3cr3t-value' } })).toThrow(/webhooks\.sources\.local\.verify\.kind "none" .* refused on host 0\.0\.0\.0/);
  });

  it('names a missing secret variable, and registers present secrets for redaction', () => {
    expect(() => sourcesFromConfig(config('127.0.0.1'), { env: {} })).toThrow(ConfigError);
    expect(() => sourcesFromConfig(config('127.0.0.1'), { env: {} })).toThrow('environment variable HS_APP_SECRET is not set (named by webhooks.sources.hubspot.verify.secretEnv)');
    const sources = sourcesFromConfig(config('127.0.0.1'), { env: { HS_APP_SECRET: 'hs-secret-for-redaction-test' } });
    expect(Object.keys(sources)).toEqual(['hubspot', 'local']);
    expect(sources.local!.maxBodyBytes).toBe(100);
    expect(sources.hubspot!.maxBodyBytes).toBe(1_048_576);
    expect(redact('oops hs-secret-for-redaction-test leaked')).not.toContain('hs-secret-for-redaction-test');
  });

  it('refuses a Standard Webhooks secret that is not whsec_<base64>, naming the variable', () => {
    const verify = { kind: 'standard-webhooks' as const, secretEnv: 'SW_SECRET' };
    expect(() => verifierFromConfig(verify, 'webhooks.sources.z.verify', { SW_SECRET: 'plain-text-secret' })).toThrow('SW_SECRET must hold whsec_<base64> secrets (named by webhooks.sources.z.verify.secretEnv)');
    expect(verifierFromConfig(verify, 'webhooks.sources.z.verify', { SW_SECRET: `whsec_${randomBytes(24).toString('base64')} whsec_${randomBytes(24).toString('base64')}` })).toBeTypeOf('function');
  });

  it('validates publicUrl', () => {
    const parse = (publicUrl: string) => webhooksConfigSchema.safeParse({ sources: { h: { verify: { kind: 'hubspot-v3', secretEnv: 'S', publicUrl }, handler: 'x' } } }).success;
    expect(parse('https://hooks.example.com/hubspot')).toBe(true);
    expect(parse('https://hooks.example.com/hubspot?x=1')).toBe(false);
    expect(parse('ftp://hooks.example.com/')).toBe(false);
  });
});
