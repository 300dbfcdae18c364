import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { redisLedger } from '../../src/ledger/redis.js';
import { REDIS_URL, requireService, runId } from '../helpers/services.js';
import { describeLedgerConformance, describeMultiProcessClaims } from './ledger.suite.js';

const client = await requireService(`redis at ${REDIS_URL}`, async () => {
  const c = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.ping();
    return c;
  } catch (err) {
    c.disconnect();
    throw err;
  }
});

const run = runId();
let n = 0;

afterAll(async () => {
  if (!client) return;
  const keys = await client.keys(`{${run}}*`);
  if (keys.length > 0) await client.del(...keys);
  await client.quit();
});

describeLedgerConformance('redis', async () => redisLedger({ client: client!, prefix: `{${run}}:${n++}:` }), { skip: !client });

describeMultiProcessClaims('redis', {
  backend: 'redis',
  factory: 'redisLedger',
  options: () => ({ url: REDIS_URL, prefix: `{${run}}:${n++}:` }),
  open: async (options) => redisLedger({ client: client!, prefix: String(options.prefix) }),
  skip: !client,
});
