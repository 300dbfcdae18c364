/**
 * Many processes claiming one key of one store: exactly one winner across all of them. Kept in
 * test/ (not in the shipped suite) because the children run the backends compiled by a test helper.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { LedgerBackend } from '../../src/ledger/types.js';
import { compiledLedgerModule, removeCompiledLedgers } from '../helpers/compile-ledger.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

export interface MultiProcessSpec {
  backend: 'sqlite' | 'postgres' | 'redis';
  /** Export of the compiled backend module that builds the ledger, e.g. `sqliteLedger`. */
  factory: string;
  /** JSON-serialisable factory options naming a fresh, empty store; shared by the children and `open`. */
  options: () => Record<string, unknown>;
  /** Opens the same store in this process to check the result. */
  open: (options: Record<string, unknown>) => Promise<LedgerBackend>;
  skip?: boolean;
}

const CHILD = fileURLToPath(new URL('../helpers/ledger-claim-child.mjs', import.meta.url));

interface ChildReport { outcomes: string[]; tokens: number[] }

/** Runs `count` concurrent claims of `key` in each of `processes` workers, started together. */
async function claimFromProcesses(moduleUrl: string, factory: string, options: Record<string, unknown>, key: string, processes: number, count: number): Promise<ChildReport[]> {
  const children = Array.from({ length: processes }, () => spawn(process.execPath, [
    CHILD, moduleUrl, factory, JSON.stringify(options), key, String(count), String(T0),
  ], { stdio: ['pipe', 'pipe', 'pipe'] }));
  const stderr = children.map(() => [] as string[]);
  children.forEach((c, i) => c.stderr!.on('data', (d: Buffer) => stderr[i]!.push(d.toString())));
  const lines = children.map((c) => createInterface({ input: c.stdout! })[Symbol.asyncIterator]());
  const exited = children.map((c, i) => new Promise<void>((resolve, reject) => {
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child ${i} exited ${code}: ${stderr[i]!.join('')}`))));
  }));
  const next = async (i: number) => {
    const line = await Promise.race([lines[i]!.next(), exited[i]!.then(() => ({ done: true, value: undefined }))]);
    if (line.done) throw new Error(`child ${i} ended early: ${stderr[i]!.join('')}`);
    return line.value as string;
  };
  try {
    for (let i = 0; i < processes; i++) expect(await next(i)).toBe('ready');
    for (const c of children) c.stdin!.write('go\n');
    const reports = await Promise.all(children.map(async (_, i) => JSON.parse(await next(i)) as ChildReport));
    await Promise.all(exited);
    return reports;
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
}

/** Many processes claiming one key: exactly one winner across all of them. */
export function describeMultiProcessClaims(name: string, spec: MultiProcessSpec): void {
  describe.skipIf(spec.skip === true)(`ledger conformance across processes: ${name}`, () => {
    afterAll(removeCompiledLedgers);

    it('gives exactly one of 200 concurrent claims from 4 processes', { timeout: 180_000 }, async () => {
      const moduleUrl = await compiledLedgerModule(spec.backend);
      const options = spec.options();
      const reports = await claimFromProcesses(moduleUrl, spec.factory, options, 'multi-hot', 4, 50);
      const outcomes = reports.flatMap((r) => r.outcomes);
      expect(outcomes).toHaveLength(200);
      expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'in_progress')).toHaveLength(199);
      expect(reports.flatMap((r) => r.tokens)).toEqual([1]);
      const ledger = await spec.open(options);
      try {
        expect(await ledger.get('multi-hot')).toMatchObject({ status: 'in_progress', token: 1, attempts: 1, leaseUntil: T0 + 600_000 });
      } finally {
        await ledger.close();
      }
    });
  });
}
