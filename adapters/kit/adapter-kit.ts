/**
 * The part of a CRM adapter that is the same for every CRM: look an object up in the options,
 * spend the rate budget and let the engine stop a write before each request (counting requests),
 * resolve activity parents through the batch memo, and place a write's results back in input
 * order around the inputs settled without a request. An adapter supplies only the vendor calls.
 */
import { parentMemoKey, type ActivityWrite, type BatchContext, type ObjectSpec, type WriteResult } from '../../src/adapter.js';
import { ConfigError, type CrmError } from '../../src/errors.js';
import type { FieldDefinition, FieldDefinitionsFile, InlineFieldDefinition } from '../../schemas/field-definitions.js';
import type { RateBudget } from '../../src/rate-budget.js';

type Kind = 'record' | 'activity';

/**
 * The configured object `object` of `kind`. An unknown object, or one of the other kind, is a
 * ConfigError naming it and the configured objects (the same in every adapter).
 */
export function objectSpec<S extends { kind: Kind }, K extends Kind>(vendor: string, objects: Readonly<Record<string, S>>, object: string, kind: K): Extract<S, { kind: K }> {
  const spec = Object.hasOwn(objects, object) ? objects[object] : undefined;
  if (spec?.kind === kind) return spec as Extract<S, { kind: K }>;
  const configured = Object.entries(objects).map(([name, s]) => `${name} (${s.kind})`).join(', ') || 'none';
  throw new ConfigError(`${vendor}: "${object}" is not a configured ${kind} object; configured: ${configured}`);
}

export interface SendOptions {
  /** Spent in order before the request leaves; undefined entries are skipped. */
  budgets?: readonly (RateBudget | undefined)[];
  /** A write's batch: its `beforeSend` runs after the budgets and may stop the request (its error propagates unchanged). */
  context?: BatchContext;
  /** False when the transport counts the request itself. Default true. */
  counted?: boolean;
}

export interface RequestGate {
  /** Run one request after its budgets and the engine's last word. */
  send<T>(call: () => Promise<T>, options?: SendOptions): Promise<T>;
  /** Count a request the transport saw (see `SendOptions.counted`). */
  count(): void;
  /** Requests sent so far. */
  apiCalls(): number;
}

export function requestGate(): RequestGate {
  let calls = 0;
  return {
    async send(call, options = {}) {
      const answered: (() => void)[] = [];
      try {
        for (const budget of options.budgets ?? []) {
          const report = await budget?.acquire();
          if (typeof report === 'function') answered.push(report);
        }
        await options.context?.beforeSend?.();
        if (options.counted !== false) calls += 1;
        return await call();
      } finally {
        // The budgets count the request from its answer (or from the refusal that stopped it).
        for (const report of answered) report();
      }
    },
    count: () => {
      calls += 1;
    },
    apiCalls: () => calls,
  };
}

/**
 * The CRM ids of these writes' parents, in the batch memo (`context.memo`, so a retry of the
 * batch and a parent upserted earlier in the call are not read again): `lookup` is called once
 * per parent object with the external ids neither known nor known absent (`context.absent`), and
 * returns external id -> CRM id; the ids it did not return are added to `context.absent`, so a
 * retry of the batch does not read them again either. Any record reference resolves this way: pass
 * `{ parent: link }` for a write's links.
 */
export async function resolveParents(
  writes: readonly Pick<ActivityWrite, 'parent'>[],
  context: BatchContext | undefined,
  lookup: (object: string, externalIds: string[]) => Promise<Map<string, string>>,
): Promise<Map<string, string>> {
  const memo = context?.memo ?? new Map<string, string>();
  const wanted = new Map<string, Set<string>>();
  const absent = context?.absent;
  for (const w of writes) {
    const key = parentMemoKey(w.parent.object, w.parent.externalId);
    if (memo.has(key) || absent?.has(key)) continue;
    wanted.set(w.parent.object, (wanted.get(w.parent.object) ?? new Set()).add(w.parent.externalId));
  }
  for (const [object, ids] of wanted) {
    const found = await lookup(object, [...ids]);
    for (const [externalId, id] of found) memo.set(parentMemoKey(object, externalId), id);
    for (const externalId of ids) if (!found.has(externalId)) absent?.add(parentMemoKey(object, externalId));
  }
  return memo;
}

/** What `prepare` makes of one input: the item to send, or the failure that settles it without a request. */
export type Prepared<T> = { send: T } | { fail: CrmError };

/**
 * One result per input, in input order: `prepare` settles inputs that cannot be sent, the rest go
 * to `send` in one request (none when nothing is left), whose results (one per item, in order)
 * are placed back at their inputs.
 */
export async function writeInOrder<W, T>(writes: readonly W[], prepare: (write: W) => Prepared<T>, send: (items: T[]) => Promise<WriteResult[]>): Promise<WriteResult[]> {
  const results: WriteResult[] = new Array(writes.length);
  const at: number[] = [];
  const items: T[] = [];
  writes.forEach((w, i) => {
    const p = prepare(w);
    if ('fail' in p) results[i] = { ok: false, error: p.fail };
    else {
      at.push(i);
      items.push(p.send);
    }
  });
  if (items.length > 0) {
    const sent = await send(items);
    at.forEach((i, n) => (results[i] = sent[n]!));
  }
  return results;
}

/**
 * The engine's view of configured objects: kind, field allowlist, the parents' and links' names,
 * and the definitions of the allowlisted fields (from the pulled file, then those written by hand
 * in the object's `definitions`, which win). `slotted`: the CRM keeps one record per link field
 * (Salesforce lookups: the config maps each linked object to its field), so two links landing on
 * one field are refused before any call.
 */
export function engineObjects(
  objects: Readonly<Record<string, { kind: Kind; fields: readonly string[]; parents?: Record<string, unknown>; links?: Record<string, unknown>; definitions?: readonly InlineFieldDefinition[]; readFields?: readonly string[]; lookupBy?: readonly string[]; onMissing?: 'create' | 'skip' }>>,
  options: { slotted?: boolean; definitions?: Pick<FieldDefinitionsFile, 'objects'>; vendor?: string } = {},
): Record<string, ObjectSpec> {
  const out: Record<string, ObjectSpec> = {};
  for (const [name, c] of Object.entries(objects)) {
    const map = (c.kind === 'record' ? c.links : c.parents) ?? {};
    const slots = options.slotted && Object.keys(map).length > 0 ? { slots: Object.fromEntries(Object.entries(map).map(([o, field]) => [o, String(field)])) } : {};
    const defined: Record<string, FieldDefinition> = {};
    const pulled = options.definitions?.objects[name] ?? {};
    for (const field of c.fields) if (Object.hasOwn(pulled, field)) defined[field] = pulled[field]!;
    for (const { name: field, ...definition } of c.definitions ?? []) {
      if (!c.fields.includes(field)) throw new ConfigError(`invalid ${options.vendor ?? 'adapter'} options: objects.${name}.definitions: "${field}" is not on the object's fields list`);
      defined[field] = definition;
    }
    const definitions = Object.keys(defined).length > 0 ? { definitions: defined } : {};
    out[name] = c.kind === 'record'
      ? { kind: 'record', fields: [...c.fields], ...(c.links ? { links: Object.keys(c.links) } : {}), ...(c.readFields ? { readFields: [...c.readFields] } : {}), ...(c.lookupBy ? { lookupBy: [...c.lookupBy] } : {}), ...(c.onMissing ? { onMissing: c.onMissing } : {}), ...slots, ...definitions }
      : { kind: 'activity', fields: [...c.fields], parents: Object.keys(c.parents ?? {}), ...slots, ...definitions };
  }
  return out;
}
