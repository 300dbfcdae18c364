/**
 * A worker killed with its note create on the wire: the CRM commits that request a moment after
 * the process died. Another worker takes the dead process's claim over at once (no lease to wait
 * out), but looks the note up only once the dead holder has been silent for DEAD_SETTLE_MS, so it
 * finds the late note instead of writing a second one. The fake HubSpot (real SDK, loopback) holds
 * the dead worker's request and commits it 1.2 s after the claim; assertions are on its notes and
 * request counts.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createSync, openLedger } from '../../src/index.js';
import { DEAD_SETTLE_MS, SENT_FRESH_MS } from '../../src/engine/recover.js';
import { formatOwner, hostId } from '../../src/owner.js';
import { harness, TOKEN, type Harness } from './hubspot-helpers.js';

const fast = { retries: 4, minTimeoutMs: 5, maxTimeoutMs: 20 };
const contact = { source: 'dead-sender', eventId: 'evt-c', op: 'upsert', object: 'contact', externalId: 'C-dead', fields: { email: 'dead@example.test' } };
const note = (text: string) => ({
  source: 'dead-sender', eventId: 'evt-note', op: 'create', object: 'note', target: { object: 'contact', externalId: 'C-dead' },
  fields: { hs_note_body: text, hs_timestamp: '2026-11-29T10:00:00Z' },
});

/** The owner text of a process on this host that has exited. */
function deadOwner(): string {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return formatOwner({ host: hostId(), pid: child.pid!, start: '' });
}

describe('a create taken over from a dead worker whose request the CRM commits late (hubspotAdapter over loopback)', () => {
  let h: Harness;
  afterEach(() => h?.stop());

  it('waits for the dead holder to settle, finds its note and writes no second one', async () => {
    h = await harness('loopback');
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: fast, leaseMs: 60_000 });
    const written = await sync.applyMany([contact]);
    expect(written[0]).toMatchObject({ status: 'created' });
    const contactId = written[0]!.recordId!;

    // The dead worker: it claimed the note's key and sent the create; the CRM has not committed it yet.
    const prepared = sync.prepare(note('first model output'));
    if (!prepared.ok) throw prepared.error;
    const claimedAt = Date.now();
    const [claim] = await ledger.claim([{ key: prepared.key, fingerprint: prepared.fingerprint, leaseMs: 60_000, owner: deadOwner() }], claimedAt);
    expect(claim!.outcome).toBe('claimed');
    const late = new Promise<void>((resolve, reject) => setTimeout(() => {
      fetch(`${h.basePath}/crm/v3/objects/notes/batch/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: [{
          properties: { hs_note_body: 'first model output', hs_timestamp: '2026-11-29T10:00:00Z', crm_upsert_key: prepared.key },
          associations: [{ to: { id: contactId }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }] }],
        }] }),
      }).then((r) => (r.ok ? resolve() : reject(new Error(`late create answered ${r.status}`))), reject);
    }, 1_200));

    const creates = h.fake.count('notes/batch/create');
    const started = Date.now();
    // The retry carries different model text: the same event, so the same key.
    const [outcome] = await sync.applyMany([note('second model output')]);
    const took = Date.now() - started;
    await late;

    const notes = h.fake.records('notes');
    expect(notes).toHaveLength(1);
    expect(notes[0]!.properties.hs_note_body).toBe('first model output');
    expect(outcome).toMatchObject({ status: 'created', recordId: notes[0]!.id });
    // The one create is the dead worker's; the takeover sent none.
    expect(h.fake.count('notes/batch/create') - creates).toBe(1);
    // Taken over at once, looked up after the settle time, never after the 60 s lease.
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(DEAD_SETTLE_MS - 50);
    expect(took).toBeLessThan(DEAD_SETTLE_MS + 5_000);
    await sync.close();
  });

  it('renews a create claim older than SENT_FRESH_MS before the create leaves, so the ledger says when it was sent', async () => {
    let now = Date.parse('2026-12-01T10:00:00Z');
    let creating = false;
    // The budget is granted SENT_FRESH_MS + 500 ms after the note was claimed (a rate-limited run).
    const rateBudget = { acquire: async () => void (creating && (now += SENT_FRESH_MS + 500)) };
    h = await harness('loopback', {}, { rateBudget });
    const ledger = openLedger('memory:');
    const sync = createSync({ adapter: h.adapter, ledger, retry: fast, leaseMs: 60_000, now: () => now });
    await sync.applyMany([contact]);
    const prepared = sync.prepare(note('text'));
    if (!prepared.ok) throw prepared.error;
    let updatedAtWhenSent: number | undefined;
    let sentAt: number | undefined;
    const dispatch = h.fake.core.dispatch.bind(h.fake.core);
    h.fake.core.dispatch = async (req) => {
      if (req.path.endsWith('/notes/batch/create')) {
        sentAt = now;
        updatedAtWhenSent = (await ledger.get(prepared.key))?.updatedAt;
      }
      return dispatch(req);
    };
    const claimedAt = now;
    creating = true;
    const [outcome] = await sync.applyMany([note('text')]);
    expect(outcome).toMatchObject({ status: 'created' });
    // Renewed at the send, not left at the claim (the 60 s lease alone would renew it only after 20 s).
    expect(sentAt! - claimedAt).toBeGreaterThan(SENT_FRESH_MS);
    expect(updatedAtWhenSent).toBe(sentAt);
    await sync.close();
  });
});
