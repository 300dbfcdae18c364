/**
 * The `webhooks` config section: the sources `crm-upsert serve` accepts and the handler module
 * each source's events run through in `crm-upsert worker`. Secrets are named by environment
 * variable (`secretEnv`), never written in the file.
 */
import { z } from 'zod';

const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name (A-Z, 0-9, _)');
/** A JSON pointer (RFC 6901) into the verified body, e.g. `/id` or `/data/event_id`. */
const jsonPointer = z.string().regex(/^(\/([^~/]|~[01])*)+$/, 'must be a JSON pointer such as /id');

export const webhookVerifySchema = z.discriminatedUnion('kind', [
  /** HubSpot's X-HubSpot-Signature-v3 with the app's client secret; each event's `eventId` keys it. */
  z.strictObject({
    kind: z.literal('hubspot-v3'),
    secretEnv: envName,
    /**
     * The target URL exactly as configured in HubSpot (scheme, host, path), signed in place of
     * the URL the receiver saw. Needed behind a proxy or TLS terminator that changes the scheme,
     * host or path. The request's query string is appended to it. Default: the URL as received.
     */
    publicUrl: z.url({ protocol: /^https?$/ }).refine((u) => !u.includes('?') && !u.includes('#'), 'must not carry a query string or fragment').optional(),
  }),
  /**
   * Standard Webhooks (webhook-id / webhook-timestamp / webhook-signature); `webhook-id` keys the
   * event. The variable may hold several secrets separated by spaces (rotation).
   */
  z.strictObject({ kind: z.literal('standard-webhooks'), secretEnv: envName }),
  /** A generic HMAC-SHA256 of the raw body in one header; `eventIdPointer` finds the event id in the body. */
  z.strictObject({
    kind: z.literal('hmac-sha256'),
    secretEnv: envName,
    header: z.string().min(1).default('x-signature'),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    /** Text before the digest in the header, e.g. `sha256=`. */
    prefix: z.string().default(''),
    eventIdPointer: jsonPointer,
    /** Where the event's time is in the body (ISO 8601 or epoch ms). Default: none. */
    occurredAtPointer: jsonPointer.optional(),
  }),
  /**
   * HTTP basic authentication (Pipedrive's webhooks): `username` as configured in the sender, the
   * password in `secretEnv` (several separated by spaces: rotation); `eventIdPointer` finds the
   * event id in the body.
   */
  z.strictObject({
    kind: z.literal('basic'),
    username: z.string().min(1),
    secretEnv: envName,
    eventIdPointer: jsonPointer,
    occurredAtPointer: jsonPointer.optional(),
  }),
  /** No verification: refused unless the receiver is bound to loopback. */
  z.strictObject({ kind: z.literal('none'), eventIdPointer: jsonPointer, occurredAtPointer: jsonPointer.optional() }),
]);

export const webhookSourceSchema = z.strictObject({
  verify: webhookVerifySchema,
  /** Module whose default export `async (event, ctx) => actions` turns an event into CRM actions (path relative to the config file). */
  handler: z.string().min(1),
  /** Largest body accepted, in bytes (413 above it). */
  maxBodyBytes: z.number().int().positive().optional(),
});

export const webhooksConfigSchema = z.strictObject({
  /** Interface `serve` listens on. Default `127.0.0.1`. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Port `serve` listens on (0 = a free one). Default 8787. */
  port: z.number().int().min(0).max(65_535).default(8787),
  /** Default body limit for every source, in bytes (413 above it). Default 1 MiB. */
  maxBodyBytes: z.number().int().positive().default(1_048_576),
  /** Source name (the `:source` in `POST /hooks/:source`) -> its verification and handler. */
  sources: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be a lowercase name (a-z, 0-9, _ and -)'), webhookSourceSchema),
});

export type WebhookVerifyConfig = z.infer<typeof webhookVerifySchema>;
export type WebhookSourceConfig = z.infer<typeof webhookSourceSchema>;
export type WebhooksConfig = z.infer<typeof webhooksConfigSchema>;
