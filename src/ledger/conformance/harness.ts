/**
 * What the conformance suite needs from a test framework (vitest's and jest's functions fit as
 * they are), the options of one run, and the helpers its sub-suites share.
 */
import type { ClaimRequest, ClaimResult, LedgerBackend } from '../types.js';

type Body = () => void | Promise<void>;

/** The matchers the suite uses, as vitest's and jest's `expect(actual)` offers them. */
export interface Assertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeNull(): void;
  toBeUndefined(): void;
  toHaveLength(length: number): void;
  toBeGreaterThan(n: number): void;
  toBeGreaterThanOrEqual(n: number): void;
  toBeLessThan(n: number): void;
  toBeInstanceOf(type: abstract new (...args: never[]) => unknown): void;
  toMatch(pattern: RegExp): void;
  rejects: { toThrow(expected: abstract new (...args: never[]) => unknown): Promise<void> };
  resolves: { toBeUndefined(): Promise<void> };
}

export interface TestFramework {
  /** Groups tests; `describe.skip`, when present, is used for a run with `skip: true`. */
  describe: ((name: string, body: () => void) => void) & { skip?: (name: string, body: () => void) => void };
  it: (name: string, body: Body) => void;
  expect: (actual: unknown, message?: string) => Assertion;
  beforeEach: (body: Body) => void;
  afterEach: (body: Body) => void;
}

export interface ReadOnlyWiring {
  /** The store of the ledger the factory returned last, opened with createSchema: false. */
  openLast(): Promise<LedgerBackend>;
  /** A store that was never created, opened with createSchema: false. */
  openFresh(): Promise<LedgerBackend>;
  /** What exists of the store `openFresh` named last (tables, files, keys): empty when nothing was created. */
  created(): Promise<string[]>;
}

export interface LedgerConformanceOptions extends TestFramework {
  /** Skip the whole suite (say, its service is unreachable outside CI). Default false. */
  skip?: boolean;
  /**
   * The ledgers the factory returns have a clock of their own (`clock()`), checked against this
   * machine's. Default: whatever the ledger has (a `clock()` present is checked, none is fine).
   */
  clock?: boolean;
  /** What `isDurable()` must answer. Default: not checked beyond being a boolean (or absent). */
  durable?: boolean;
  /** Opens with `createSchema: false`; leave it out for a backend that has no such option. */
  readOnly?: ReadOnlyWiring;
}

/** What every sub-suite gets: the framework, the options, and the ledger of the running test. */
export interface SuiteContext {
  t: LedgerConformanceOptions;
  /** The fresh, empty ledger of the running test. */
  ledger(): LedgerBackend;
  claimOne(request: ClaimRequest, now: number): Promise<ClaimResult>;
}

/** Every time the suite passes is counted from here; nothing reads a clock. */
export const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
export const LEASE = 30_000;
export const FP = 'fp-contact-upsert';

export const req = (key: string, extra: Partial<ClaimRequest> = {}): ClaimRequest => ({ key, fingerprint: FP, leaseMs: LEASE, ...extra });
