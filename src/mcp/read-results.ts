/**
 * Read tool results: `structuredContent` (the tool's outputSchema), one line of text saying what
 * was found, and the structured content again as JSON text: a client that hands the model only
 * the text content (the MCP spec's advice for tools with structured results) still shows it the
 * records. A refused or failed read is `isError`, naming the argument at fault.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ReadAnswer } from '../engine/read.js';
import { redact, serializeError, ValidationError, type ValidationIssue } from '../errors.js';
import type { Described } from './read-tools.js';
import { errorInfo } from './tool-results.js';

const SHOWN_IDS = 10;
const list = (ids: string[]) => `${ids.slice(0, SHOWN_IDS).map((id) => JSON.stringify(id)).join(', ')}${ids.length > SHOWN_IDS ? ` and ${ids.length - SHOWN_IDS} more` : ''}`;

const withJson = (text: string, structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text }, { type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

/** get_<object>'s answer: `found 2 of 3 contacts; not found: "c-3"`. */
export function getResult(object: string, records: ReadAnswer[]): CallToolResult {
  const found = records.filter((r) => r.found).length;
  const missing = records.filter((r) => !r.found && r.matches === undefined).map((r) => r.id);
  const ambiguous = records.filter((r): r is Extract<ReadAnswer, { found: false }> => !r.found && r.matches !== undefined);
  const parts = [`found ${found} of ${records.length} ${object}${records.length === 1 ? '' : 's'}`];
  if (missing.length > 0) parts.push(`not found: ${list(missing)}`);
  if (ambiguous.length > 0) parts.push(`${list(ambiguous.map((r) => r.id))} ${ambiguous.length === 1 ? 'names' : 'name'} several records (none answered: read by externalId)`);
  return withJson(parts.join('; '), { records });
}

/** describe_<object>'s answer. */
export function describeResult(described: Described): CallToolResult {
  const writable = described.fields.filter((f) => f.writable).map((f) => f.name);
  const readOnly = described.fields.filter((f) => !f.writable).map((f) => f.name);
  const text = `${described.object} (${described.kind}): writable fields ${writable.join(', ') || '(none)'}${readOnly.length > 0 ? `; read-only ${readOnly.join(', ')}` : ''}`;
  return withJson(text, described as unknown as Record<string, unknown>);
}

/** A read refused before the CRM was asked. */
export function readRejected(issues: readonly ValidationIssue[]): CallToolResult {
  const message = redact(issues.map((i) => `${i.path || '(arguments)'}: ${i.message}`).join('; '));
  const error = { code: 'VALIDATION', message, ...(issues[0]?.path ? { path: issues[0].path } : {}) };
  return {
    content: [{ type: 'text', text: `rejected: ${message}; nothing was read` }],
    // A read's `fields` is a list of names: its problems name the argument, not a CRM field.
    structuredContent: { error, problems: issues.map((i) => ({ path: i.path, field: i.path || '(arguments)', reason: redact(i.message) })) },
    isError: true,
  };
}

/** A read that failed: the engine's error, secret-free, and whether asking again may help. */
export function readFailed(err: unknown): CallToolResult {
  if (err instanceof ValidationError) return readRejected(err.issues);
  const error = errorInfo(serializeError(err));
  const next = error.retryable ? 'ask again later' : 'this read cannot succeed as asked';
  return { content: [{ type: 'text', text: `failed: ${error.message}; ${next}` }], structuredContent: { error }, isError: true };
}
