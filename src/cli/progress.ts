/**
 * Progress output. On a TTY: one live line (done/total, rate, ETA, failures; during a rate-limit
 * or Retry-After wait, what is waited for and how long), messages on lines of their own above
 * it, and a small table at the end. Off a TTY: exactly one JSON summary line, so a scheduler's
 * log gets one parseable line per run.
 */
import type { RateWait } from '../telemetry/waits.js';

export interface Summary {
  [key: string]: unknown;
}

export interface Progress {
  /** Lines settled so far, and their counts by outcome status. */
  update(done: number, counts: Readonly<Record<string, number>>): void;
  /** A wait that is starting (rate budget, Retry-After): on a TTY the bar says so until it ends. */
  wait(wait: RateWait): void;
  /** A message on a line of its own (the stop message, warnings), to `notes`: on a TTY above the bar, never over it. */
  note(line: string): void;
  /** On a TTY: clear the bar's line and draw nothing until `resume` (another live line, a Bulk job's, holds the terminal's last line). */
  pause(): void;
  /** Draw the bar again, on the line where the cursor is. */
  resume(): void;
  /** Stop the bar and print the summary (JSON line off a TTY, a short table on one). */
  finish(summary: Summary): void;
}

export interface ProgressOptions {
  /** Lines in the input when known (a file); undefined for stdin. */
  total?: number;
  /** Where the bar and the summary go. Default process.stdout. */
  stream?: NodeJS.WriteStream;
  /** Where `note` lines go. Default process.stderr. */
  notes?: NodeJS.WritableStream;
  /** Force TTY or non-TTY output. Default: the stream's isTTY. */
  tty?: boolean;
  /** Injected clock (ms). Default Date.now. */
  now?: () => number;
  /** Redraw interval on a TTY, ms. Default 200. */
  intervalMs?: number;
}

/** Outcome statuses in the order the summary table lists them. */
const STATUS_ORDER = ['created', 'updated', 'unchanged', 'superseded', 'replayed', 'suppressed', 'in_flight', 'rejected', 'failed'];
const BAR_WIDTH = 24;
const MIN_SHOWN_WAIT_MS = 500;

/** `850 ms`, `9.2 s`, `3 min 05 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const s = Math.round(ms / 1_000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** `ETA 12 s`, `ETA 3 min 05 s`: whole seconds, rounded up. */
const formatEta = (seconds: number) => {
  const s = Math.ceil(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
};

/** The end-of-run table: counts by status, then records re-created, calls, time and how the run ended. */
export function summaryTable(summary: Summary): string {
  const counts = (summary.counts ?? {}) as Record<string, number>;
  const statuses = [...STATUS_ORDER, ...Object.keys(counts).filter((s) => !STATUS_ORDER.includes(s))].filter((s) => (counts[s] ?? 0) > 0);
  const rows: [string, string][] = statuses.map((s) => [s, String(counts[s])]);
  rows.push(['total', String(summary.actions ?? 0)]);
  const tail: [string, string][] = [];
  // Of the created: records this ledger had written, deleted in the CRM since.
  if (typeof summary.recreated === 'number' && summary.recreated > 0) tail.push(['re-created', String(summary.recreated)]);
  tail.push(['API calls', String(summary.apiCalls ?? 0)]);
  if (typeof summary.durationMs === 'number') tail.push(['time', formatDuration(summary.durationMs)]);
  if (typeof summary.skipped === 'number') tail.push(['skipped', String(summary.skipped)]);
  tail.push(['exit code', String(summary.exitCode ?? '')]);
  const width = Math.max(...[...rows, ...tail].map(([k]) => k.length)) + 2;
  const values = Math.max(5, ...[...rows, ...tail].map(([, v]) => v.length));
  const line = ([k, v]: [string, string]) => `  ${k.padEnd(width)}${v.padStart(values)}`;
  const title = [summary.command, summary.input].filter((x) => typeof x === 'string').join(' ') + (summary.job ? ` (job ${String(summary.job)})` : '');
  const out = [title, `  ${'status'.padEnd(width)}${'lines'.padStart(values)}`, ...rows.map(line), '', ...tail.map(line)];
  if (summary.stopped) out.push(`  ${'stopped'.padEnd(width)}${String(summary.stopped)}${summary.unsettled ? `; ${String(summary.unsettled)} lines unsettled (the next run settles them)` : ''}`);
  if (summary.report) out.push(`  ${'report'.padEnd(width)}${String(summary.report)}`);
  return `${out.join('\n')}\n`;
}

function plainProgress(stream: NodeJS.WriteStream, notes: NodeJS.WritableStream): Progress {
  return {
    update() {},
    wait() {},
    note: (line) => void notes.write(`${line}\n`),
    pause() {},
    resume() {},
    finish: (summary) => void stream.write(`${JSON.stringify(summary)}\n`),
  };
}

export function createProgress(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stdout;
  const notes = options.notes ?? process.stderr;
  if (!(options.tty ?? Boolean(stream.isTTY))) return plainProgress(stream, notes);
  const now = options.now ?? Date.now;
  const total = options.total !== undefined && options.total > 0 ? options.total : undefined;
  const started = now();
  let done = 0;
  let counts: Readonly<Record<string, number>> = {};
  let waitUntil = 0;
  let waitReason = '';
  let drawn = '';
  let paused = false;

  const text = () => {
    const t = now();
    const rate = done / Math.max(0.001, (t - started) / 1_000);
    const parts = [total === undefined ? `sync ${done} lines` : `sync ${bar(done / total)} ${done}/${total} lines`];
    if (waitUntil > t) parts.push(`waiting ${Math.ceil((waitUntil - t) / 1_000)} s: ${waitReason}`);
    else {
      parts.push(`${Math.round(rate)}/s`);
      if (total !== undefined && done > 0 && done < total) parts.push(`ETA ${formatEta((total - done) / rate)}`);
    }
    // Lines another run holds are not failures: they are settled by that run (or after its lease).
    parts.push(`failures ${(counts.failed ?? 0) + (counts.rejected ?? 0)}`);
    if (counts.in_flight) parts.push(`in flight elsewhere ${counts.in_flight}`);
    const line = parts.join(' | ');
    const columns = stream.columns;
    return columns && line.length >= columns ? line.slice(0, columns - 1) : line;
  };
  const draw = () => {
    if (paused) return;
    const line = text();
    if (line === drawn) return;
    stream.write(`\r${line}\x1b[K`);
    drawn = line;
  };
  const timer = setInterval(draw, options.intervalMs ?? 200);
  timer.unref();
  draw();
  return {
    update(value, latest) {
      done = value;
      counts = latest;
      draw();
    },
    wait(wait) {
      // A wait too short to read would only flicker the line.
      if (wait.ms < MIN_SHOWN_WAIT_MS) return;
      const until = now() + wait.ms;
      if (until <= waitUntil) return;
      waitUntil = until;
      waitReason = wait.reason;
      draw();
    },
    note(line) {
      stream.write('\r\x1b[2K');
      notes.write(`${line}\n`);
      drawn = '';
      draw();
    },
    pause() {
      if (paused) return;
      paused = true;
      stream.write('\r\x1b[2K');
      drawn = '';
    },
    resume() {
      paused = false;
      drawn = '';
      draw();
    },
    finish(summary) {
      clearInterval(timer);
      paused = false;
      waitUntil = 0;
      drawn = '';
      draw();
      stream.write(`\n${summaryTable(summary)}`);
    },
  };
}

const bar = (fraction: number) => {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * BAR_WIDTH);
  return '█'.repeat(filled) + '░'.repeat(BAR_WIDTH - filled);
};
