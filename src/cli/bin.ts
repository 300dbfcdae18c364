#!/usr/bin/env node
/** The `crm-upsert` entry: run the program, let its output drain, end with its code. */
import { watchClosedOutput } from './closed-output.js';
import { main } from './program.js';

const drained = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));

let printsOnly = false;
// Kept past main(): the last writes may fail only while the output drains.
watchClosedOutput({ printsOnly: () => printsOnly });
process.exitCode = await main(process.argv, { onAction: (only) => (printsOnly = only) });
// process.exit() right after a write to a pipe drops what the pipe had not taken yet: wait for it.
await Promise.all([drained(process.stdout), drained(process.stderr)]);
// A driver that keeps a socket or timer alive after close must not keep a finished run alive.
setTimeout(() => process.exit(), 2_000).unref();
