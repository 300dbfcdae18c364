/**
 * Tool results an agent can act on: `structuredContent` (callResultSchema) and one line of text
 * saying what happened and what protected the call, e.g.
 *
 *   replayed: this note was already created as 123 (no new record)
 *
 * `isError` is set for `rejected` and `failed`; `in_flight` says to wait and ask get_outcome, or,
 * when the parent record is what another call is writing, to call again.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { visibleOptionValues, type FieldDefinition } from '../../schemas/field-definitions.js';
import { PARENT_IN_FLIGHT } from '../engine/parent-held.js';
import { RECORD_IN_FLIGHT } from '../engine/record-hold.js';
import { redact, type SerializedError, type ValidationIssue } from '../errors.js';
import type { Outcome } from '../outcome.js';
import { minutes, type CallResult, type OutcomeReport, type Problem, type ToolSpec } from './tool-schemas.js';

/** What protects a call made without an idempotencyKey. */
export interface DedupeInfo {
  /** The time the call is judged by (ISO). */
  occurredAt: string;
  /** The dedupe window, ms; 0 for upserts (not windowed). */
  windowMs: number;
  /** Creates: the call's period bucket, ISO, start inclusive and end exclusive. Upserts have none. */
  bucketStart?: string;
  bucketEnd?: string;
}

/** The call a result is about. */
export interface CallSubject {
  tool: Pick<ToolSpec, 'op' | 'object'>;
  /** upserts: the record's external id. */
  externalId?: string;
  /** creates: the record the activity attaches to. */
  target?: { object: string; externalId: string };
  /** The agent's key, when it gave one. */
  idempotencyKey?: string;
  /** Keyless calls: the bucket and window that protect them. */
  dedupe?: DedupeInfo;
  /** The object's field definitions: a rejected enumeration value's problem lists the allowed values. */
  definitions?: Readonly<Record<string, FieldDefinition>>;
}

/** As many allowed values as a rejection message shows (schemas/values.ts). */
const SHOWN_ALLOWED = 20;

/**
 * Each issue as a problem an agent can repair: `field` is the CRM field for a `fields.<name>`
 * path (the argument's path otherwise), and a field with an enumeration definition carries its
 * allowed values (the first 20; describe_<object> lists them all).
 */
export function problemsOf(issues: readonly ValidationIssue[], definitions?: Readonly<Record<string, FieldDefinition>>): Problem[] {
  return issues.map((issue) => {
    const field = issue.path.startsWith('fields.') ? issue.path.slice('fields.'.length) : issue.path || '(arguments)';
    const d = issue.path.startsWith('fields.') && definitions && Object.hasOwn(definitions, field) ? definitions[field] : undefined;
    const allowed = d?.type === 'enumeration' && !d.readOnly ? visibleOptionValues(d).slice(0, SHOWN_ALLOWED) : [];
    return { path: issue.path, field, reason: redact(issue.message), ...(allowed.length > 0 ? { allowed } : {}) };
  });
}

/** The issues behind a rejection that came back as an outcome only: its path and message (one issue). */
function issuesOfError(error: SerializedError): ValidationIssue[] {
  const message = clean(error.message);
  const path = error.path ?? '';
  return [{ path, message: path && message.startsWith(`${path}: `) && !message.includes('; ') ? message.slice(path.length + 2) : message }];
}

const clean = (message: string) => message.replace(/^\[crm-upsert\] (\[[^\]]+\] )?/, '');
const time = (iso: string) => iso.replace(/\.\d{3}Z$/, 'Z');

export function errorInfo(error: SerializedError): NonNullable<CallResult['error']> {
  return {
    code: error.code,
    message: clean(error.message),
    ...(error.path !== undefined ? { path: error.path } : {}),
    ...(error.retryable !== undefined ? { retryable: error.retryable } : {}),
  };
}

function recordOf(s: CallSubject): string {
  return s.target ? `${s.target.object} "${s.target.externalId}"` : `${s.tool.object} "${s.externalId}"`;
}

function protection(s: CallSubject): string {
  if (s.idempotencyKey !== undefined) return ` (idempotencyKey "${s.idempotencyKey}": calling again with it returns this result)`;
  const d = s.dedupe;
  if (!d) return '';
  if (s.tool.op === 'upsert') return ' (no idempotencyKey: the externalId makes a repeat update the same record)';
  const until = d.windowMs > 0 ? `within ${minutes(d.windowMs)} of ${time(d.occurredAt)}` : `in the time bucket ${time(d.bucketStart ?? '')}-${time(d.bucketEnd ?? '')}`;
  return ` (no idempotencyKey: an identical ${s.tool.object} on this record ${until} is suppressed; pass one to make a retry a replay at any time)`;
}

function suppressedText(s: CallSubject, id: string): string {
  const d = s.dedupe;
  const bucket = d?.bucketStart && d.bucketEnd ? ` or the same time bucket (${time(d.bucketStart)}-${time(d.bucketEnd)})` : '';
  const why = !d ? 'an identical call came first' : s.tool.op === 'upsert'
    ? `the same values with the same occurredAt (${d.occurredAt}) were already written; changed values, or a later occurredAt, are written`
    : d.windowMs > 0
      ? `calls without an idempotencyKey are one within the ${minutes(d.windowMs)} dedupe window${bucket}`
      : `calls without an idempotencyKey are one in${bucket.replace(/^ or/, '')}`;
  const what = s.tool.op === 'create' ? `an identical ${s.tool.object} on ${recordOf(s)} was already created${id} (no new record)` : `this write to ${recordOf(s)} was already made${id} (no second write)`;
  return `suppressed: ${what}: ${why}`;
}

/** The fields an update left to newer values, in words. */
const leftText = (o: Outcome) => (o.superseded?.length ? `; not sent, as a newer event already set them${o.newerAt ? ` (${o.newerAt})` : ''}: ${o.superseded.join(', ')}` : '');

function textOf(o: Outcome, s: CallSubject): string {
  const id = o.recordId ? ` as ${o.recordId}` : '';
  const record = recordOf(s);
  switch (o.status) {
    case 'created':
      return s.tool.op === 'create'
        ? `created: ${s.tool.object} ${o.recordId ?? ''} on ${record}${protection(s)}`
        : `created: ${record}${id}${o.recreated ? ` again: it was ${o.recreated.previousId} and is gone from the CRM (deleted or merged away)` : ''}${protection(s)}`;
    case 'updated':
      return `updated: ${record}${o.recordId ? ` (${o.recordId})` : ''}${leftText(o)}${protection(s)}`;
    case 'superseded':
      return `superseded: ${record}${o.recordId ? ` (${o.recordId})` : ''} already holds newer values${o.newerAt ? ` (from ${o.newerAt})` : ''} for ${o.superseded?.join(', ') ?? 'these fields'}, so nothing was sent; to change them, send a call with a later occurredAt`;
    case 'unchanged':
      return `unchanged: ${record}${o.recordId ? ` (${o.recordId})` : ''} already holds these values; nothing was sent`;
    case 'replayed':
      return s.tool.op === 'create'
        ? `replayed: this ${s.tool.object} was already created${id} (no new record)`
        : `replayed: this ${s.tool.object} was already written${id} (no second write)`;
    case 'suppressed':
      return suppressedText(s, id);
    case 'in_flight':
      // Its key was given back: nothing runs under it until the call is made again.
      if (o.error?.vendorCode === RECORD_IN_FLIGHT) return `in_flight: ${record} is being written by another call right now, and this call sent nothing: call again in a few seconds${s.idempotencyKey !== undefined ? ' with the same idempotencyKey' : ''}; it is then judged against what that call wrote`;
      if (o.error?.vendorCode === PARENT_IN_FLIGHT) return `in_flight: ${record} is being written by another call right now, and this ${s.tool.object} wrote nothing: call again in a few seconds${s.idempotencyKey !== undefined ? ' with the same idempotencyKey' : ''}; it will not write twice`;
      return `in_flight: another call with this key is still being written, and this one wrote nothing: wait a few seconds, then call get_outcome with key "${o.key}" (or retry with the same idempotencyKey)`;
    case 'rejected':
      return `rejected: ${o.error ? clean(o.error.message) : 'invalid call'}; nothing was written`;
    default: {
      const retry = o.error?.retryable ? 'retry later with the same idempotencyKey: it will not write twice' : 'fix the cause, then retry with the same idempotencyKey';
      return `failed: ${o.error ? clean(o.error.message) : 'unknown error'}; ${retry}`;
    }
  }
}

/**
 * A write tool's result for an engine outcome. A `rejected` one carries `problems`: from `issues`
 * when the caller has them, else from the outcome's error.
 */
export function callResult(o: Outcome, s: CallSubject, issues?: readonly ValidationIssue[]): CallToolResult {
  const problems = o.status === 'rejected' ? problemsOf(issues ?? (o.error ? issuesOfError(o.error) : []), s.definitions) : [];
  const structured: CallResult = {
    status: o.status,
    key: o.key,
    ...(s.idempotencyKey !== undefined ? { idempotencyKey: s.idempotencyKey } : {}),
    ...(o.recordId ? { recordId: o.recordId } : {}),
    ...(o.error ? { error: errorInfo(o.error) } : {}),
    ...(s.dedupe ? { dedupe: s.dedupe } : {}),
    ...(o.normalized ? { normalized: o.normalized.map((n) => ({ field: n.field, from: n.from, to: n.to })) } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    ...(o.recreated ? { recreated: { previousId: o.recreated.previousId } } : {}),
    ...(o.superseded ? { superseded: [...o.superseded], ...(o.newerAt ? { newerAt: o.newerAt } : {}) } : {}),
  };
  const fixed = o.normalized ? ` (values brought to the CRM's form: ${o.normalized.map((n) => `${n.field} ${JSON.stringify(n.from)} -> ${JSON.stringify(n.to)}`).join(', ')})` : '';
  return {
    content: [{ type: 'text', text: `${textOf(o, s)}${fixed}` }],
    structuredContent: structured,
    ...(o.status === 'rejected' || o.status === 'failed' ? { isError: true } : {}),
  };
}

/** Arguments refused before anything was claimed or written; `definitions`: the object's, for the allowed values of a field at fault. */
export function rejectedResult(issues: readonly ValidationIssue[], key = '', definitions?: Readonly<Record<string, FieldDefinition>>): CallToolResult {
  const message = redact(issues.map((i) => `${i.path || '(arguments)'}: ${i.message}`).join('; '));
  return callResult(
    { key, status: 'rejected', attempts: 0, error: { name: 'ValidationError', code: 'VALIDATION', message, ...(issues[0]?.path ? { path: issues[0].path } : {}) } },
    { tool: { op: 'create', object: '' }, ...(definitions ? { definitions } : {}) },
    issues,
  );
}

/** get_outcome's result. */
export function outcomeResult(report: OutcomeReport): CallToolResult {
  const id = report.recordId ? ` (record ${report.recordId})` : '';
  const texts: Record<string, string> = {
    not_found: `not_found: nothing is recorded under "${report.key}": that call wrote nothing; call the tool again with the same idempotencyKey`,
    in_flight: `in_flight: still being written${report.leaseUntil ? ` (its claim runs until ${time(report.leaseUntil)} unless renewed)` : ''}; ask again in a few seconds, or retry with the same idempotencyKey: a claim whose server died is taken over, never written twice`,
    failed: `failed: ${report.error?.message ?? 'unknown error'}; retry with the same idempotencyKey`,
  };
  const text = texts[report.status] ?? `${report.status}: the call under "${report.key}" ended ${report.status}${id}`;
  return { content: [{ type: 'text', text }], structuredContent: report };
}
