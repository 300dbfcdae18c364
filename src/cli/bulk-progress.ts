/**
 * The line `sync` shows on a terminal for each job of the adapter's bulk lane (a Bulk API 2.0 job),
 * redrawn in place as the job moves and ended with a newline once the job is over:
 *
 *   contact job 750xx: uploaded 10,000, processed 4,000, failed 12 (InProgress)
 *
 * A job followed after a restart has no upload count (the CRM's job info does not say it): its
 * line leaves it out, `contact job 750xx: processed 4,000, failed 12 (InProgress)`.
 *
 * Only on a terminal: a scheduler's log gets no partial lines (the summary says what happened).
 * The progress bar steps aside while a job line is live (both share the terminal's last line).
 */
import type { BulkJobProgress } from '../../adapters/kit/vendor-cli.js';

/** States after which a job moves no more. */
const ENDED = new Set(['JobComplete', 'Failed', 'Aborted']);

const count = (n: number) => n.toLocaleString('en-US');

/** `contact job 750xx: uploaded 10,000, processed 4,000, failed 12 (InProgress)`, without `uploaded …` when not known. */
export function bulkProgressText(p: BulkJobProgress): string {
  const uploaded = p.uploaded === undefined ? '' : `uploaded ${count(p.uploaded)}, `;
  return `${p.object} job ${p.jobId}: ${uploaded}processed ${count(p.processed)}, failed ${count(p.failed)} (${p.state})`;
}

export interface BulkProgressLine {
  /** Draw where a job stands (its line replaces the last one drawn for it). */
  update(progress: BulkJobProgress): void;
  /** End a line left open by a job that stopped being followed before it ended (a timeout, an error). */
  end(): void;
}

export interface BulkProgressHooks {
  /** Called before a job's first line is drawn (the progress bar clears its line and waits). */
  pause?: () => void;
  /** Called once a job's line is ended (the bar draws again, below it). */
  resume?: () => void;
}

/** The job lines on `stream`, or undefined when it is not a terminal. */
export function bulkProgressLine(stream: { isTTY?: boolean; write(text: string): unknown }, hooks: BulkProgressHooks = {}): BulkProgressLine | undefined {
  if (!stream.isTTY) return undefined;
  let live: string | undefined;
  const end = () => {
    if (live === undefined) return;
    live = undefined;
    stream.write('\n');
    hooks.resume?.();
  };
  return {
    update(progress) {
      if (live !== progress.jobId) {
        end();
        hooks.pause?.();
        live = progress.jobId;
      }
      stream.write(`\r${bulkProgressText(progress)}\x1b[K`);
      if (ENDED.has(progress.state)) end();
    },
    end,
  };
}
