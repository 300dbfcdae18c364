import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { redisLedger } from '../../src/ledger/redis.js';
import { redisUrl, runId } from '../helpers/services.js';
import { describeLedgerConformance, describeMultiProcessClaims } from './ledger.suite.js';

const url = await redisUrl();
const client = url ? new Redis(url) : undefined;

const run = runId();
let n = 0;

afterAll(async () => {
  if (!client) return;
  const keys = await client.keys(`{${run}}*`);
  if (keys.length > 0) await client.del(...keys);
  await client.quit();
});

describeLedgerConformance('redis', async () => redisLedger({ client: client!, prefix: `{${run}}:${n++}:` }), { skip: !client, clock: true, durable: false });

describeMultiProcessClaims('redis', {
  backend: 'redis',
  factory: 'redisLedger',
  options: () => ({ url: url!, prefix: `{${run}}:${n++}:` }),
  open: async (options) => redisLedger({ client: client!, prefix: String(options.prefix) }),
  skip: !client,
});
