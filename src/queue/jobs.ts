/**
 * The jobs on the queue: what the webhook receiver and `sync --queue` add and `worker` runs.
 * A job's id is derived from its idempotency key, so adding the same event or the same chunk
 * of the same file twice adds one job (BullMQ ignores an add whose id exists); the ledger
 * still guards the work itself when a job runs twice.
 */
import { eventKey } from '../key.js';

/** Job names. */
export const EVENT_JOB = 'event';
export const CHUNK_JOB = 'chunk';

/** A verified webhook event, as the receiver enqueues it. */
export interface EventJobData {
  v: 1;
  /** The configured source it came in on (`POST /hooks/:source`). */
  source: string;
  /** The id from the verified envelope (webhook-id, HubSpot's eventId, the configured pointer). */
  eventId: string;
  /** When the event happened, when the envelope says so (ISO 8601). */
  occurredAt?: string;
  /** When the receiver accepted it (ISO 8601). */
  receivedAt: string;
  /** The event's JSON, as verified. */
  payload: unknown;
}

/** BullMQ forbids `:` in custom ids; keys use it as a separator. */
const jobIdOf = (key: string) => key.replaceAll(':', '-');

/** The job id of an event: its idempotency key (`eventKey`), made a valid BullMQ id. */
export function eventJobId(event: { source: string; eventId: string }): string {
  return jobIdOf(eventKey(event));
}

/** The default queue name of a CRM account's queue. */
export function defaultQueueName(crm: string): string {
  return `crm-upsert-${crm}`;
}
