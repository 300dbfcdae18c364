/** The 200 persons and 200 notes both Pipedrive worker processes apply, each in its own order. */
export const N = 200;

export function workerActions(reversed: boolean) {
  const order = <T,>(xs: T[]) => (reversed ? [...xs].reverse() : xs);
  const persons = Array.from({ length: N }, (_, n) => ({ source: 'pd-shared', eventId: `p-${n}`, op: 'upsert', object: 'contact', externalId: `P-${n}`, fields: { name: `Person ${n}` } }));
  const notes = Array.from({ length: N }, (_, n) => ({
    source: 'pd-shared', eventId: `n-${n}`, occurredAt: '2026-12-05T10:00:00Z', op: 'create', object: 'note', target: { object: 'contact', externalId: `P-${n}` }, fields: { content: `Call ${n}` },
  }));
  return { persons: order(persons), notes: order(notes) };
}
