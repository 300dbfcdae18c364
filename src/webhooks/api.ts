/**
 * What crm-upsert-sync/webhooks exports. The receiver imports hono statically: index.ts imports
 * this file dynamically, so that a missing hono is one message naming it; `crm-upsert serve`
 * imports it directly.
 */
export type { HeaderBag, VerifiedEvent, Verifier, VerifyResult, WebhookRequest } from './types.js';
export { DEFAULT_TOLERANCE_MS, RefusalStatus } from './types.js';
export { hubspotSignatureUri, hubspotV3Signature, hubspotV3Verifier, type HubSpotV3Options } from './hubspot-v3.js';
export { standardWebhooksVerifier, type StandardWebhooksOptions } from './standard-webhooks.js';
export { basicAuthVerifier, type BasicAuthOptions } from './basic-auth.js';
export { hmacSha256Verifier, type HmacSha256Options } from './hmac-sha256.js';
export { isLoopbackHost, noVerification, type NoVerificationOptions } from './none.js';
export { sourcesFromConfig, verifierFromConfig, type WebhookSource } from './from-config.js';
export { BodyTooLarge, readBody } from './body.js';
export {
  DEFAULT_ENQUEUE_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, webhookApp,
  type EventSink, type WebhookApp, type WebhookAppOptions, type WebhookStats,
} from './app.js';
export { DEFAULT_KEEP_COMPLETED_SECONDS, eventJobOptions, eventQueue, type EventQueue, type EventQueueOptions } from '../queue/producer.js';
export { EVENT_JOB, eventJobId, defaultQueueName, type EventJobData } from '../queue/jobs.js';
