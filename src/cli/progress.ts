/**
 * Progress output: a cli-progress bar on a TTY (done/total, rate, ETA, failures), and exactly one
 * JSON summary line otherwise, so a scheduler's log gets one parseable line per run.
 */
import cliProgress from 'cli-progress';

export interface Summary {
  [key: string]: unknown;
}

export interface Progress {
  update(done: number, failures: number): void;
  /** Stop the bar and print the summary (JSON line off a TTY, a short table on one). */
  finish(summary: Summary): void;
}

export interface ProgressOptions {
  /** Lines in the input when known (a file); undefined for stdin. */
  total?: number;
  stream?: NodeJS.WriteStream;
  /** Force TTY or non-TTY output. Default: the stream's isTTY. */
  tty?: boolean;
}

export function createProgress(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stdout;
  const tty = options.tty ?? Boolean(stream.isTTY);
  if (!tty) {
    return {
      update() {},
      finish(summary) {
        stream.write(`${JSON.stringify(summary)}\n`);
      },
    };
  }
  const known = options.total !== undefined && options.total > 0;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: known
        ? 'sync {bar} {value}/{total} lines | {rate}/s | ETA {eta_formatted} | failures {failures}'
        : 'sync {value} lines | {rate}/s | failures {failures}',
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  bar.start(known ? options.total! : 0, 0, { failures: 0, rate: '0' });
  return {
    update(done, failures) {
      const seconds = Math.max(0.001, (Date.now() - started) / 1000);
      bar.update(done, { failures, rate: Math.round(done / seconds).toString() });
    },
    finish(summary) {
      bar.stop();
      const width = Math.max(...Object.keys(summary).map((k) => k.length));
      for (const [k, v] of Object.entries(summary)) {
        stream.write(`${k.padEnd(width)}  ${typeof v === 'object' ? JSON.stringify(v) : String(v)}\n`);
      }
    },
  };
}
