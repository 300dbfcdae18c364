/**
 * A reader that goes away (`crm-upsert sync job.jsonl --dry-run | head -1`) makes the next write to
 * the pipe fail with EPIPE, which Node raises as an unhandled 'error' event: a stack on stderr.
 * This ends the run quietly instead. A command that only prints (`printsOnly()`) stops at once with
 * exit 141, as a Unix tool stopped by SIGPIPE does; any other command (one that writes to the CRM,
 * the ledger, a queue or a file) finishes its work with the rest of its output dropped, so a closed
 * pipe never leaves a run half done, and ends with its own exit code.
 */
import { ExitCode } from './exit.js';

export interface ClosedOutputOptions {
  /** True while the command running has no effect but what it prints. */
  printsOnly: () => boolean;
  /** Default process.exit. */
  exit?: (code: number) => void;
  /** Default process.stdout and process.stderr. */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** Watch stdout and stderr for a closed reader; returns the function that stops watching. */
export function watchClosedOutput(options: ClosedOutputOptions): () => void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const closed = new Set<NodeJS.WritableStream>();
  const watch = (stream: NodeJS.WritableStream, isStdout: boolean) => {
    const onError = (err: NodeJS.ErrnoException) => {
      // After EPIPE the stream is destroyed: later writes fail with ERR_STREAM_DESTROYED, just as closed.
      if (err.code !== 'EPIPE' && !(closed.has(stream) && err.code === 'ERR_STREAM_DESTROYED')) throw err;
      if (closed.has(stream)) return;
      closed.add(stream);
      // A closed stderr alone does not stop printing to stdout.
      if (isStdout && options.printsOnly()) exit(ExitCode.outputClosed);
    };
    stream.on('error', onError);
    return () => stream.off('error', onError);
  };
  const stops = [watch(stdout, true), watch(stderr, false)];
  return () => {
    for (const stop of stops) stop();
  };
}
