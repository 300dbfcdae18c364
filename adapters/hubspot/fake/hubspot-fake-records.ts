/**
 * What the two halves of fakeHubSpot's portal share (hubspot-fake-crm.ts: objects, properties and
 * records; hubspot-fake-crm-associations.ts: the associations between them): the stored record,
 * object type names, and the envelopes HubSpot answers in.
 */
import { randomUUID } from 'node:crypto';
import type { FakeResponse } from '../../testing/fake-http.js';

/** One record as the fake keeps it. */
export interface StoredRecord {
  id: string;
  properties: Map<string, string>;
  createdAt: number;
  updatedAt: number;
  /** To-object type -> to-record id -> association type ids (from this record's side). */
  associations: Map<string, Map<string, Set<number>>>;
}

/** Inputs per batch request, for object and association batches alike. */
export const BATCH_LIMIT = 100;

/** Every name HubSpot accepts for a standard object type -> its plural name. */
export const objectTypeAliases: Record<string, string> = {
  '0-1': 'contacts', contact: 'contacts', '0-2': 'companies', company: 'companies', '0-3': 'deals', deal: 'deals',
  '0-46': 'notes', note: 'notes', '0-27': 'tasks', task: 'tasks',
};
export const singular: Record<string, string> = { contacts: 'contact', companies: 'company', deals: 'deal', notes: 'note', tasks: 'task' };

export type Body = Record<string, unknown>;
export const asBody = (v: unknown): Body => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : {});
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function errorBody(status: number, category: string, message: string, extra: Body = {}): FakeResponse {
  return { status, body: { status: 'error', message, correlationId: randomUUID(), category, ...extra } };
}

/** A batch answer: `okStatus` when every input succeeded, else 207 with `numErrors` and `errors`. */
export function batchEnvelope(at: string, results: Body[], errors: Body[], okStatus: number): FakeResponse {
  const body: Body = { status: 'COMPLETE', results, requestedAt: at, startedAt: at, completedAt: at, links: {} };
  if (errors.length === 0) return { status: okStatus, body };
  return { status: 207, body: { ...body, numErrors: errors.length, errors } };
}
