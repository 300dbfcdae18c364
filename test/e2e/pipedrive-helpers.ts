import { pipedriveAdapter, type PipedriveAdapter, type PipedriveAdapterOptions } from '../../adapters/pipedrive/index.js';
import { fakePipedrive, type FakePipedrive, type FakePipedriveOptions } from '../../adapters/testing/index.js';
import type { Outcome } from '../../src/index.js';

export const TOKEN = 'pd-e2e-token-3b9f7c21d4';

/** The sales objects: organizations, persons at them, deals with both, notes on any, tasks on deals with the person as participant. */
export const objects: PipedriveAdapterOptions['objects'] = {
  company: { kind: 'record', entity: 'organization', idField: 'ai_external_id', fields: ['name'] },
  contact: { kind: 'record', entity: 'person', idField: 'ai_external_id', fields: ['name', 'email'], links: { company: 'org_id' } },
  deal: { kind: 'record', entity: 'deal', idField: 'ai_external_id', fields: ['title', 'value'], links: { contact: 'person_id', company: 'org_id' } },
  note: { kind: 'activity', entity: 'note', fields: ['content'], parents: { contact: 'person_id', company: 'org_id', deal: 'deal_id' } },
  task: { kind: 'activity', entity: 'activity', activityType: 'task', fields: ['subject', 'due_date'], parents: { deal: 'deal_id', contact: 'person_id' } },
};

export interface Harness {
  fake: FakePipedrive;
  adapter: PipedriveAdapter;
  url: string;
  /** Another adapter on the same fake (a second process). */
  another(options?: Partial<PipedriveAdapterOptions>): PipedriveAdapter;
  stop(): Promise<void>;
}

/** Fast retries for tests: the engine's backoff in milliseconds. */
export const fast = { retries: 6, minTimeoutMs: 5, maxTimeoutMs: 50 };

export async function harness(fakeOptions: FakePipedriveOptions = {}, adapterOptions: Partial<PipedriveAdapterOptions> = {}): Promise<Harness> {
  const fake = fakePipedrive({ searchLimit: false, burstLimit: false, ...fakeOptions });
  const front = await fake.open('loopback');
  const build = (extra: Partial<PipedriveAdapterOptions> = {}) =>
    pipedriveAdapter({ apiToken: TOKEN, basePath: front.url, objects, recoveryDelaysMs: [50, 200, 500], rateLimit: { points: 1_000, durationMs: 1_000 }, searchRateBudget: { acquire: async () => undefined }, ...adapterOptions, ...extra });
  return { fake, adapter: build(), url: front.url, another: build, stop: () => front.close() };
}

export const statuses = (outcomes: readonly Outcome[]) => {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[o.status] = (out[o.status] ?? 0) + 1;
  return out;
};

/** External ids of an entity's live records (duplicates show as repeats). */
export const externalIds = (fake: FakePipedrive, entity: 'person' | 'organization' | 'deal') => fake.records(entity).map((r) => fake.customValue(r, 'ai_external_id'));
