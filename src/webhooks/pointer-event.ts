/** One event from a JSON body whose id (and time) sit at JSON pointers. */
import { badRequest, type VerifyResult } from './types.js';
import { atPointer, idOf, isoOf } from './util.js';

export function eventAtPointers(body: unknown, eventIdPointer: string, occurredAtPointer?: string): VerifyResult {
  const eventId = idOf(atPointer(body, eventIdPointer));
  if (eventId === undefined) return badRequest(`no event id (a string or number) at ${eventIdPointer}`);
  const occurredAt = occurredAtPointer === undefined ? undefined : isoOf(atPointer(body, occurredAtPointer));
  return { ok: true, events: [{ eventId, ...(occurredAt ? { occurredAt } : {}), payload: body }] };
}
