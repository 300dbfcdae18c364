/**
 * The dedupe window over the backend, with holders that died: a pending slot whose process is dead
 * on this host is taken over at once (released under the holder's own owner, which the backend
 * must store and fence on exactly, then acquired again); anyone else's slot still waits.
 */
import { spawnSync } from 'node:child_process';
import { dedupeWindow, slotOwner } from '../../dedupe-window.js';
import { formatOwner, hostId, ownerId, processStart } from '../../owner.js';
import { LEASE, T0, type SuiteContext } from './harness.js';

const WINDOW = 600_000;
const CELL = Math.floor(T0 / WINDOW);

/** The pid of a process that has exited. */
const exitedPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

let dead: string | undefined;
/** An owner surely dead on this host: an exited pid (and, should the pid be reused, another start time). */
const deadProcess = (): string => (dead ??= formatOwner({ host: hostId(), pid: exitedPid(), start: '1' }));

export function deadHoldersSuite({ t: { describe, it, expect }, ledger }: SuiteContext): void {
  describe('dedupe window: dead holders', () => {
    const window = () => dedupeWindow(ledger(), { windowMs: WINDOW, pendingMs: LEASE, keepMs: WINDOW });
    const hold = (cell: number, owner: string) => ledger().windowAcquire([{ id: `w:${cell}`, owner, ttlMs: LEASE }], T0);
    const holderOf = async (cell: number, now: number) => (await ledger().windowAcquire([{ id: `w:${cell}`, owner: 'probe', ttlMs: 0 }], now))[0]!;

    it('takes a pending slot whose holder is a dead process on this host over at once, and names its key', async () => {
      await hold(CELL, slotOwner('k-dead', T0 + 1_000, deadProcess()));
      const [answer] = await window().acquire([{ id: 'w', key: 'k-new', at: T0 + 20_000 }], T0 + 1);
      expect(answer).toEqual({ verdict: 'go', slot: { id: `w:${CELL}`, owner: slotOwner('k-new', T0 + 20_000) }, takenOver: ['k-dead'] });
      expect(await holderOf(CELL, T0 + 2)).toEqual({ acquired: false, owner: slotOwner('k-new', T0 + 20_000), confirmed: false, expiresAt: T0 + 1 + LEASE });
    });

    it('passes over a dead holder in the cell before, naming its key, and leaves its slot in place', async () => {
      const dead = slotOwner('k-dead', T0 - 5_000, deadProcess());
      await hold(CELL - 1, dead);
      const [answer] = await window().acquire([{ id: 'w', key: 'k-new', at: T0 + 5_000 }], T0 + 1);
      expect(answer).toEqual({ verdict: 'go', slot: { id: `w:${CELL}`, owner: slotOwner('k-new', T0 + 5_000) }, takenOver: ['k-dead'] });
      expect(await holderOf(CELL - 1, T0 + 2)).toMatchObject({ acquired: false, owner: dead });
    });

    const alive: [string, () => string][] = [
      ['this process', () => ownerId()],
      ['a live process on this host', () => formatOwner({ host: hostId(), pid: process.ppid, start: processStart(process.ppid) })],
      ['a process on another host', () => formatOwner({ host: 'elsewhere', pid: exitedPid(), start: '1' })],
    ];
    for (const [name, holder] of alive) {
      it(`still waits out the lease of a slot held by ${name}`, async () => {
        const held = slotOwner('k-held', T0 + 1_000, holder());
        await hold(CELL, held);
        await hold(CELL - 1, slotOwner('k-held-before', T0 - 5_000, holder()));
        expect(await window().acquire([{ id: 'w', key: 'k-new', at: T0 + 20_000 }], T0 + 1)).toEqual([{ verdict: 'in_flight' }]);
        expect(await holderOf(CELL, T0 + 2)).toEqual({ acquired: false, owner: held, confirmed: false, expiresAt: T0 + LEASE });
        expect(await window().acquire([{ id: 'w', key: 'k-new', at: T0 + 20_000 }], T0 + LEASE)).toEqual([{ verdict: 'go', slot: { id: `w:${CELL}`, owner: slotOwner('k-new', T0 + 20_000) } }]);
      });
    }

    it('still waits for a slot stored without its process (`key@at`)', async () => {
      await hold(CELL, `k-old@${T0 + 1_000}`);
      expect(await window().acquire([{ id: 'w', key: 'k-new', at: T0 + 20_000 }], T0 + 1)).toEqual([{ verdict: 'in_flight' }]);
      expect(await holderOf(CELL, T0 + 2)).toMatchObject({ acquired: false, owner: `k-old@${T0 + 1_000}` });
    });

    it('suppresses on a dead holder\'s confirmed slot: its write was confirmed', async () => {
      const dead = slotOwner('k-dead', T0 + 1_000, deadProcess());
      await hold(CELL, dead);
      await ledger().windowSettle([{ id: `w:${CELL}`, owner: dead, ttlMs: WINDOW }], T0);
      expect(await window().acquire([{ id: 'w', key: 'k-new', at: T0 + 20_000 }], T0 + 1)).toEqual([{ verdict: 'suppressed' }]);
    });

    it('gives a dead holder\'s slot to exactly one of 20 concurrent takers', async () => {
      await hold(CELL, slotOwner('k-dead', T0 + 1_000, deadProcess()));
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => window().acquire([{ id: 'w', key: `k-${i}`, at: T0 + 20_000 }], T0 + 1)));
      const winners = answers.flat().filter((a) => a.verdict === 'go');
      expect(winners).toHaveLength(1);
      expect(answers.flat().filter((a) => a.verdict === 'in_flight')).toHaveLength(19);
      expect((await holderOf(CELL, T0 + 2)).owner).toBe(winners[0]!.slot!.owner);
    });
  });
}
