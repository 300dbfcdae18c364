import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redisLedger } from '../../src/ledger/redis/index.js';
import { redisUrl, runId } from '../helpers/services.js';
import { ledgerConformance } from '../../src/ledger/conformance/index.js';
import { describeMultiProcessClaims } from './ledger-multi-process.js';

const url = await redisUrl();
const client = url ? new Redis(url) : undefined;

const run = runId();
let n = 0;
let last = '';
let fresh = '';

afterAll(async () => {
  if (!client) return;
  const keys = await client.keys(`{${run}}*`);
  if (keys.length > 0) await client.del(...keys);
  await client.quit();
});

/** This server's durability as its configuration states it (CONFIG GET, where the ledger reads INFO). */
async function configuredDurable(): Promise<boolean> {
  if (!client) return false;
  const [, aof] = (await client.config('GET', 'appendonly')) as string[];
  const [, policy] = (await client.config('GET', 'maxmemory-policy')) as string[];
  return aof === 'yes' && policy === 'noeviction';
}

ledgerConformance('redis', async () => {
  last = `{${run}}:${n++}:`;
  return redisLedger({ client: client!, prefix: last });
}, {
  describe, it, expect, beforeEach, afterEach,
  skip: !client,
  clock: true,
  durable: await configuredDurable(),
  readOnly: {
    openLast: async () => redisLedger({ client: client!, prefix: last, createSchema: false }),
    openFresh: async () => {
      fresh = `{${run}}:${n++}:`;
      return redisLedger({ client: client!, prefix: fresh, createSchema: false });
    },
    created: () => client!.keys(`${fresh}*`),
  },
});

describeMultiProcessClaims('redis', {
  backend: 'redis',
  factory: 'redisLedger',
  options: () => ({ url: url!, prefix: `{${run}}:${n++}:` }),
  open: async (options) => redisLedger({ client: client!, prefix: String(options.prefix) }),
  skip: !client,
});
