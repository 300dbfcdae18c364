/**
 * The CLI with an OpenTelemetry SDK registered by `node --import`: its sync emits through the
 * global providers, and flushes them as the run ends (the exporters here would otherwise wait a
 * minute, longer than the process lives).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { BIN, cliEnv, contactLine, ROOT, startFakeHubSpot, tempDir, writeHubSpotConfig } from '../cli/helpers.js';

const OTEL_SETUP = `
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(process.env.REPO_ROOT + '/package.json');
const { trace, metrics } = require('@opentelemetry/api');
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
const out = process.env.OTEL_OUT;
const write = (o) => appendFileSync(out, JSON.stringify(o) + '\\n');
const spans = { export(s, done) { s.forEach((x) => write({ span: x.name, attributes: x.attributes })); done({ code: 0 }); }, shutdown: async () => {}, forceFlush: async () => {} };
const points = {
  export(rm, done) { rm.scopeMetrics.forEach((sm) => sm.metrics.forEach((m) => write({ metric: m.descriptor.name, points: m.dataPoints.map((p) => [p.attributes, p.value]) }))); done({ code: 0 }); },
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE, forceFlush: async () => {}, shutdown: async () => {},
};
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans, { scheduledDelayMillis: 60000 })] }));
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: points, exportIntervalMillis: 60000 })] }));
`;

describe('crm-upsert sync with an OpenTelemetry SDK registered', () => {
  let fake: FakeHubSpot;
  let server: { basePath: string; close(): Promise<void> };
  beforeAll(async () => ({ fake, server } = await startFakeHubSpot()));
  afterAll(() => server.close());

  it('emits spans and metrics through the global providers and flushes them before it exits', async () => {
    const dir = tempDir('crm-upsert-otel-cli-');
    const setup = join(dir, 'otel.mjs');
    const out = join(dir, 'telemetry.jsonl');
    writeFileSync(setup, OTEL_SETUP);
    const config = writeHubSpotConfig(dir, server.basePath);
    const input = join(dir, 'actions.jsonl');
    writeFileSync(input, [contactLine(300), contactLine(301), contactLine(302)].join('\n') + '\n');
    const before = fake.count();

    const child = spawn(process.execPath, ['--import', pathToFileURL(setup).href, BIN, 'sync', input, '--config', config], {
      env: cliEnv({ HUBSPOT_ACCESS_TOKEN: 'test-token', REPO_ROOT: ROOT, OTEL_OUT: out }),
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ command: 'sync', counts: { created: 3 }, apiCalls: 1, exitCode: 0 });
    expect(existsSync(out)).toBe(true);
    const records = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { span?: string; metric?: string; attributes?: Record<string, unknown>; points?: [Record<string, unknown>, number][] });
    // The lookup of the 3 lines on a new ledger answers none of them; the call after it writes them.
    const applies = records.filter((r) => r.span === 'crm_upsert.apply_many').map((r) => r.attributes);
    expect(applies).toEqual([
      expect.objectContaining({ 'crm_upsert.crm': 'hubspot', 'crm_upsert.ledger': 'sqlite', 'crm_upsert.actions': 0 }),
      expect.objectContaining({ 'crm_upsert.crm': 'hubspot', 'crm_upsert.ledger': 'sqlite', 'crm_upsert.actions': 3, 'crm_upsert.outcome.created': 3 }),
    ]);
    expect(records.filter((r) => r.span === 'crm_upsert.batch').map((r) => r.attributes)).toEqual([expect.objectContaining({ 'crm_upsert.op': 'upsert', 'crm_upsert.batch.size': 3, 'crm_upsert.result.created': 3 })]);
    const calls = records.find((r) => r.metric === 'crm_upsert.api.calls');
    expect(calls?.points).toEqual([[{ 'crm_upsert.crm': 'hubspot' }, fake.count() - before]]);
  }, 30_000);
});
