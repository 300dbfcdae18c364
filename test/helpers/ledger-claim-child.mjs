// One worker process of the multi-process claim test. argv: moduleUrl factory optionsJson key count now.
// Prints "ready" once connected, waits for a line on stdin (the start signal), claims `key`
// `count` times concurrently, prints one JSON line with the outcomes.
import process from 'node:process';
import { createInterface } from 'node:readline';

const [moduleUrl, factory, optionsJson, key, count, now] = process.argv.slice(2);
const mod = await import(moduleUrl);
const ledger = mod[factory](JSON.parse(optionsJson));
await ledger.get(`${key}:warm-up`);

const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await new Promise((resolve) => lines.once('line', resolve));
lines.close();

const results = await Promise.all(Array.from({ length: Number(count) }, () =>
  ledger.claim([{ key, fingerprint: 'fp-multi', leaseMs: 600_000 }], Number(now))));
const outcomes = results.map((r) => r[0].outcome);
const tokens = results.flatMap((r) => (r[0].token === undefined ? [] : [r[0].token]));
process.stdout.write(`${JSON.stringify({ outcomes, tokens })}\n`);
await ledger.close();
