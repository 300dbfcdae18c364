/**
 * The package's public names are a contract: every name each entry exported before is still
 * exported by the built package, imported by its package name as a user would.
 */
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../cli/helpers.js';

const CONTRACT: Record<string, string[]> = {
  'crm-upsert-sync': ['ConfigError', 'CrmError', 'CrmErrorKind', 'CrmSyncError', 'DEFAULT_RETRY', 'EntryStatus', 'ErrorCode', 'KEY_VERSION', 'KeyConflictError', 'LedgerError', 'MAX_KEY_LENGTH', 'OutcomeStatus', 'ValidationError', 'actionJsonSchema', 'actionSchema', 'childKey', 'createSync', 'deriveKey', 'eventKey', 'fingerprintOf', 'identityOf', 'localRateBudget', 'memoryLedger', 'openLedger', 'parentMemoKey', 'periodBucket', 'redact', 'registerSecret', 'serializeError', 'toolCallAction', 'toolSchema', 'unlimitedRateBudget', 'windowId'],
  'crm-upsert-sync/hubspot': ['DEFAULT_BASE_PATH', 'DEFAULT_RATE_LIMIT', 'DEFAULT_SEARCH_RATE_LIMIT', 'REQUIRED_SCOPES', 'classifyHubSpotError', 'classifyHubSpotItemError', 'hubspotAdapter', 'resolveHubSpotOptions'],
  'crm-upsert-sync/salesforce': ['classifySalesforceError', 'dailyLimitStop', 'recordError', 'resolveSalesforceOptions', 'salesforceAdapter', 'soqlIn', 'soqlQuote'],
  'crm-upsert-sync/pipedrive': ['DEFAULT_RATE_LIMIT', 'DEFAULT_RECOVERY_DELAYS_MS', 'DEFAULT_SEARCH_RATE_LIMIT', 'PIPEDRIVE_TOKEN_ENV', 'PipedriveHttpError', 'classifyPipedriveError', 'pipedriveAdapter', 'pipedriveHttp', 'resolvePipedriveOptions'],
  'crm-upsert-sync/testing': ['FakeHttpCore', 'FakeHubSpotState', 'FakePipedriveState', 'FaultKind', 'PipedriveFault', 'fakeCrmBase', 'fakeHubSpot', 'fakePipedrive', 'fakeSalesforce', 'interceptWithNock', 'listenLoopback', 'seededRandom'],
  'crm-upsert-sync/ledger/postgres': ['migrate', 'postgresLedger'],
  'crm-upsert-sync/ledger/redis': ['redisLedger'],
  'crm-upsert-sync/rate-budget': ['sharedRateBudget'],
  'crm-upsert-sync/webhooks': ['basicAuthVerifier', 'eventJobId', 'eventQueue', 'hmacSha256Verifier', 'hubspotV3Verifier', 'noVerification', 'sourcesFromConfig', 'standardWebhooksVerifier', 'verifierFromConfig', 'webhookApp'],
  'crm-upsert-sync/queue': ['DEFAULT_OUTAGE', 'chunkJobId', 'enqueueChunks', 'eventJobId', 'failedJobs', 'jobCounts', 'removeFailed', 'retryFailed', 'startWorker', 'waitForChunks'],
  'crm-upsert-sync/mcp': ['createMcpServer', 'serveMcpHttp', 'serveMcpStdio', 'toolSpecs'],
  'crm-upsert-sync/telemetry': ['MetricName', 'SpanName', 'announceWait', 'observeWaits'],
  'crm-upsert-sync/schemas': ['DEFAULT_MAX_FIELD_LENGTH', 'actionJsonSchema', 'actionSchema', 'checkAgainstObjects', 'configSchema', 'fieldValueSchema', 'formatZodIssues', 'hubspotConfigSchema', 'hubspotObjectSchema', 'parseWith', 'pipedriveConfigSchema', 'pipedriveObjectSchema', 'salesforceConfigSchema', 'salesforceObjectSchema'],
};

const PROBE = `
const out = {};
for (const entry of ${JSON.stringify(Object.keys(CONTRACT))}) out[entry] = Object.keys(await import(entry));
process.stdout.write(JSON.stringify(out));
`;

describe('public names', () => {
  let exported: Record<string, string[]>;
  beforeAll(() => {
    ensureBuilt();
    exported = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', PROBE], { cwd: ROOT, encoding: 'utf8' })) as Record<string, string[]>;
  }, 120_000);

  it.each(Object.entries(CONTRACT))('%s still exports every name it did', (entry, names) => {
    expect(names.filter((n) => !exported[entry]!.includes(n))).toEqual([]);
  });

  it('exports the shipped conformance suites from crm-upsert-sync/testing', () => {
    expect(exported['crm-upsert-sync/testing']).toEqual(expect.arrayContaining(['ledgerConformance', 'adapterConformance']));
  });
});
