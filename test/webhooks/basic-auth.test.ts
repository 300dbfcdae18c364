/**
 * The `basic` verifier (HTTP basic authentication, how Pipedrive's webhooks authenticate), against
 * credentials encoded here from the scheme's definition, and built from a config section.
 */
import { describe, expect, it } from 'vitest';
import { basicAuthVerifier, verifierFromConfig, type WebhookRequest } from '../../src/webhooks/index.js';
import { webhooksConfigSchema } from '../../schemas/webhooks.js';

const enc = (s: string) => new TextEncoder().encode(s);
const body = JSON.stringify({ meta: { id: '5c8b9f0a-1111-4a2b-9c3d-0e1f2a3b4c5d', action: 'change', entity: 'deal', timestamp: '2026-12-01T12:00:00.000Z' }, data: { id: 7 } });
const request = (authorization?: string, payload = body): WebhookRequest => ({
  method: 'POST', url: 'https://hooks.example.com/hooks/pipedrive', headers: { 'content-type': 'application/json', ...(authorization ? { Authorization: authorization } : {}) }, body: enc(payload),
});
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('basic', () => {
  const verify = basicAuthVerifier({ username: 'pipedrive', password: ['old-pass-1', 'new-pass-2'], eventIdPointer: '/meta/id', occurredAtPointer: '/meta/timestamp' });

  it('accepts the configured credentials (any password in rotation) and keys the event by the pointer', () => {
    for (const password of ['old-pass-1', 'new-pass-2']) {
      const result = verify(request(basic('pipedrive', password)));
      expect(result).toEqual({ ok: true, events: [{ eventId: '5c8b9f0a-1111-4a2b-9c3d-0e1f2a3b4c5d', occurredAt: '2026-12-01T12:00:00.000Z', payload: JSON.parse(body) }] });
    }
  });

  it.each([
    ['no Authorization', undefined],
    ['a wrong password', basic('pipedrive', 'guess')],
    ['a wrong user', basic('someone', 'new-pass-2')],
    ['a Bearer token', 'Bearer new-pass-2'],
    ['garbage', 'Basic %%%'],
  ])('refuses %s with 401', (_name, authorization) => {
    expect(verify(request(authorization))).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses a body that is not JSON with 400', () => {
    expect(verify(request(basic('pipedrive', 'new-pass-2'), 'not json'))).toMatchObject({ ok: false, status: 400 });
  });

  it('is built from a config section, the password from the environment', () => {
    const config = webhooksConfigSchema.parse({ sources: { pipedrive: { verify: { kind: 'basic', username: 'pipedrive', secretEnv: 'PD_HOOK_PASSWORD', eventIdPointer: '/meta/id' }, handler: './h.js' } } });
    const built = verifierFromConfig(config.sources.pipedrive!.verify, 'webhooks.sources.pipedrive.verify', { PD_HOOK_PASSWORD: 'hook-secret-77' });
    expect(built(request(basic('pipedrive', 'hook-secret-77')))).toMatchObject({ ok: true });
    expect(built(request(basic('pipedrive', 'other')))).toMatchObject({ ok: false, status: 401 });
    expect(() => verifierFromConfig(config.sources.pipedrive!.verify, 'webhooks.sources.pipedrive.verify', {})).toThrow(/PD_HOOK_PASSWORD is not set/);
  });
});
