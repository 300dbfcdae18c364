/**
 * crm-upsert-sync/webhooks: the verifiers (pure functions, callable from express, fastify or a
 * lambda), the mountable hono receiver and its BullMQ sink. Needs `hono`: importing this entry
 * without it throws a ConfigError naming the package and the install command. `standardwebhooks`
 * is loaded only by its verifier, `bullmq` and `ioredis` only by `eventQueue`.
 */
import { importWithPeers, PEERS } from '../optional-package.js';
import type * as Api from './api.js';

const api = await importWithPeers('crm-upsert-sync/webhooks', [PEERS.hono], () => import('./api.js'));

// Each typed as the module's own: a copy's inferred type would widen literals and unique symbols.
export const DEFAULT_TOLERANCE_MS: typeof Api.DEFAULT_TOLERANCE_MS = api.DEFAULT_TOLERANCE_MS;
export const RefusalStatus: typeof Api.RefusalStatus = api.RefusalStatus;
export const hubspotSignatureUri: typeof Api.hubspotSignatureUri = api.hubspotSignatureUri;
export const hubspotV3Signature: typeof Api.hubspotV3Signature = api.hubspotV3Signature;
export const hubspotV3Verifier: typeof Api.hubspotV3Verifier = api.hubspotV3Verifier;
export const standardWebhooksVerifier: typeof Api.standardWebhooksVerifier = api.standardWebhooksVerifier;
export const hmacSha256Verifier: typeof Api.hmacSha256Verifier = api.hmacSha256Verifier;
export const basicAuthVerifier: typeof Api.basicAuthVerifier = api.basicAuthVerifier;
export const isLoopbackHost: typeof Api.isLoopbackHost = api.isLoopbackHost;
export const noVerification: typeof Api.noVerification = api.noVerification;
export const sourcesFromConfig: typeof Api.sourcesFromConfig = api.sourcesFromConfig;
export const verifierFromConfig: typeof Api.verifierFromConfig = api.verifierFromConfig;
export const BodyTooLarge: typeof Api.BodyTooLarge = api.BodyTooLarge;
export const readBody: typeof Api.readBody = api.readBody;
export const DEFAULT_ENQUEUE_TIMEOUT_MS: typeof Api.DEFAULT_ENQUEUE_TIMEOUT_MS = api.DEFAULT_ENQUEUE_TIMEOUT_MS;
export const DEFAULT_MAX_BODY_BYTES: typeof Api.DEFAULT_MAX_BODY_BYTES = api.DEFAULT_MAX_BODY_BYTES;
export const webhookApp: typeof Api.webhookApp = api.webhookApp;
export const DEFAULT_KEEP_COMPLETED_SECONDS: typeof Api.DEFAULT_KEEP_COMPLETED_SECONDS = api.DEFAULT_KEEP_COMPLETED_SECONDS;
export const eventJobOptions: typeof Api.eventJobOptions = api.eventJobOptions;
export const eventQueue: typeof Api.eventQueue = api.eventQueue;
export const EVENT_JOB: typeof Api.EVENT_JOB = api.EVENT_JOB;
export const eventJobId: typeof Api.eventJobId = api.eventJobId;
export const defaultQueueName: typeof Api.defaultQueueName = api.defaultQueueName;
export type RefusalStatus = Api.RefusalStatus;
export type {
  HeaderBag, VerifiedEvent, Verifier, VerifyResult, WebhookRequest, HubSpotV3Options, StandardWebhooksOptions, HmacSha256Options, BasicAuthOptions,
  NoVerificationOptions, WebhookSource, EventSink, WebhookApp, WebhookAppOptions, WebhookStats, EventQueue, EventQueueOptions, EventJobData,
} from './api.js';
