/**
 * Verifiers built from the `webhooks` config section, secrets read from the environment
 * (`secretEnv`) and registered for redaction. Every problem is a ConfigError naming the field or
 * the variable, raised before the receiver listens.
 */
import type { WebhooksConfig, WebhookVerifyConfig } from '../../schemas/webhooks.js';
import { ConfigError, registerSecret } from '../errors.js';
import { basicAuthVerifier } from './basic-auth.js';
import { hmacSha256Verifier } from './hmac-sha256.js';
import { hubspotV3Verifier } from './hubspot-v3.js';
import { isLoopbackHost, noVerification } from './none.js';
import { standardWebhooksVerifier } from './standard-webhooks.js';
import type { Verifier } from './types.js';

/** A source as the app serves it. */
export interface WebhookSource {
  verify: Verifier;
  /** Largest body accepted, in bytes. Default: the app's `maxBodyBytes`. */
  maxBodyBytes?: number;
}

function secretOf(name: string, field: string, env: NodeJS.ProcessEnv): string[] {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new ConfigError(`environment variable ${name} is not set (named by ${field}.secretEnv)`);
  // Several secrets separated by whitespace: the ones in rotation.
  const secrets = value.trim().split(/\s+/);
  for (const s of secrets) registerSecret(s);
  registerSecret(value);
  return secrets;
}

/** The verifier one `verify` block describes. `field` names it in messages (`webhooks.sources.x.verify`). */
export function verifierFromConfig(verify: WebhookVerifyConfig, field: string, env: NodeJS.ProcessEnv = process.env): Verifier {
  switch (verify.kind) {
    case 'hubspot-v3':
      return hubspotV3Verifier({ secret: secretOf(verify.secretEnv, field, env), publicUrl: verify.publicUrl });
    case 'standard-webhooks': {
      const secret = secretOf(verify.secretEnv, field, env);
      try {
        return standardWebhooksVerifier({ secret });
      } catch (err) {
        if (err instanceof ConfigError) throw err;
        throw new ConfigError(`${verify.secretEnv} must hold whsec_<base64> secrets (named by ${field}.secretEnv)`);
      }
    }
    case 'hmac-sha256':
      return hmacSha256Verifier({ ...verify, secret: secretOf(verify.secretEnv, field, env) });
    case 'basic':
      return basicAuthVerifier({ username: verify.username, password: secretOf(verify.secretEnv, field, env), eventIdPointer: verify.eventIdPointer, ...(verify.occurredAtPointer ? { occurredAtPointer: verify.occurredAtPointer } : {}) });
    case 'none':
      return noVerification(verify);
  }
}

/**
 * The sources of a `webhooks` section. `host` is where the receiver will listen: a `none`
 * source is refused unless it is loopback.
 */
export function sourcesFromConfig(config: WebhooksConfig, options: { host?: string; env?: NodeJS.ProcessEnv } = {}): Record<string, WebhookSource> {
  const host = options.host ?? config.host;
  const sources: Record<string, WebhookSource> = {};
  for (const [name, source] of Object.entries(config.sources)) {
    const field = `webhooks.sources.${name}.verify`;
    if (source.verify.kind === 'none' && !isLoopbackHost(host)) {
      throw new ConfigError(`${field}.kind "none" accepts unsigned requests, so it is refused on host ${host}: bind to 127.0.0.1 or configure a signature`);
    }
    sources[name] = { verify: verifierFromConfig(source.verify, field, options.env), maxBodyBytes: source.maxBodyBytes ?? config.maxBodyBytes };
  }
  return sources;
}
