/**
 * createMcpServer(): an MCP server (the SDK's McpServer) whose CRM tools are safe to call twice.
 * Tools are generated from the configured objects (tool-schemas.ts); every call goes through the
 * engine, so a retried call is a replay, a keyless create repeated inside the window is suppressed,
 * a keyless upsert is written unless the record already holds its values, and bad arguments write
 * nothing. The server is returned as it is, so callers can register tools of their own.
 */
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { ObjectSpec } from '../../schemas/objects.js';
import type { Sync } from '../engine/create-sync.js';
import { adapterReads } from '../adapter.js';
import { KeyConflictError, serializeError } from '../errors.js';
import { DEFAULT_BUCKET_MS, periodBucket } from '../key.js';
import { ledgerClock } from '../ledger/clock.js';
import { toolCallToAction } from '../tool-call.js';
import { issuesOf } from './arguments.js';
import { bindKey } from './key-binding.js';
import { lookupOutcome } from './outcome-lookup.js';
import { describeResult, getResult, readFailed, readRejected } from './read-results.js';
import { describeObject, parseGetArgs, readToolSpecs, type ReadToolSpec } from './read-tools.js';
import { callResult, outcomeResult, rejectedResult, type CallSubject, type DedupeInfo } from './tool-results.js';
import { advertisedSchema, callResultSchema, getOutcomeInput, outcomeReportSchema, toolSpecs, type ToolSpec } from './tool-schemas.js';

export interface CreateMcpServerOptions {
  /** The engine every tool call goes through (`createSync`). */
  sync: Sync;
  /** The objects to make tools for. Default: every object of `sync.adapter`. */
  objects?: Readonly<Record<string, ObjectSpec>>;
  /** The `dedupeWindowMs` the sync was created with, so results state the window that protected a call. Default 10 min (the engine's default). */
  dedupeWindowMs?: number;
  /** The `bucketMs` the sync was created with. Default: the window (or 10 min when the window is off), as in the engine. */
  bucketMs?: number;
  /** Keep idempotencyKey bindings this long, ms; give the sync's `retentionMs`. Default null: keep (until pruned by age). */
  retentionMs?: number | null;
  /**
   * The action `source` a client's calls are recorded under, from its initialize `clientInfo`;
   * idempotency keys are scoped by it, so two agents' keys never collide. Default `mcp:<clientInfo.name>`.
   */
  sourceOf?: (client: Implementation | undefined) => string;
  /** The CRM's name in tool descriptions. Default the adapter's name (`hubspot`). */
  crmName?: string;
  /** Name and version told to clients. Default `crm-upsert-sync` and this package's version. */
  serverInfo?: Implementation;
  /** Clock for a call's default `occurredAt`, epoch ms. Default Date.now. */
  now?: () => number;
}

const DEFAULT_WINDOW_MS = 10 * 60_000;

const INSTRUCTIONS =
  'CRM reads and writes through crm-upsert-sync. Before writing an object, call describe_<object> (its fields and allowed values, no CRM call) ' +
  'and get_<object> (the record as it is now, where offered). Give every write an idempotencyKey you choose once per intended action and reuse it on every retry: ' +
  'a repeated call returns the first result (status "replayed") and writes nothing. On status "in_flight", wait a few seconds and call ' +
  'get_outcome with the returned key, or retry with the same idempotencyKey. A "rejected" call wrote nothing: fix each argument its problems name and call again.';

function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'crm-upsert-sync' && pkg.version) return pkg.version;
    } catch {
      // Not here: the source tree and dist/ sit at different depths.
    }
  }
  return '0.0.0';
}

/** `mcp:<name>`: printable, bounded (the action's source is at most 200 characters). */
export function defaultSourceOf(client: Implementation | undefined): string {
  const name = [...(client?.name ?? '')].filter((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f).slice(0, 150).join('').trim();
  return `mcp:${name || 'unknown-client'}`;
}

export function createMcpServer(options: CreateMcpServerOptions): McpServer {
  const { sync } = options;
  const windowMs = options.dedupeWindowMs ?? DEFAULT_WINDOW_MS;
  const bucketMs = options.bucketMs ?? (windowMs > 0 ? windowMs : DEFAULT_BUCKET_MS);
  const now = options.now ?? Date.now;
  const clock = ledgerClock(sync.ledger, { now });
  const sourceOf = options.sourceOf ?? defaultSourceOf;
  const server = new McpServer(options.serverInfo ?? { name: 'crm-upsert-sync', version: packageVersion() }, { instructions: INSTRUCTIONS });
  const source = () => sourceOf(server.server.getClientVersion());

  // Keyless upserts are neither windowed nor bucketed: their external id is their key.
  const dedupeOf = (occurredAt: string, op: 'upsert' | 'create'): DedupeInfo => {
    if (op === 'upsert') return { occurredAt, windowMs: 0 };
    const start = periodBucket({ source: '', op, object: '', occurredAt }, { bucketMs });
    return { occurredAt, windowMs, bucketStart: new Date(start).toISOString(), bucketEnd: new Date(start + bucketMs).toISOString() };
  };

  async function write(tool: ToolSpec, raw: unknown): Promise<CallToolResult> {
    const { definitions } = tool.spec;
    // The tools advertise optional arguments (the json-schema dialect): a null field empties it.
    const parsed = toolCallToAction(tool, raw ?? {}, { dialect: 'json-schema', source: source(), callTime: new Date(now()).toISOString() });
    if (!parsed.ok) return rejectedResult(parsed.issues, '', definitions);
    const { args, action } = parsed;
    const prepared = sync.prepare(action);
    if (!prepared.ok) return rejectedResult(prepared.error.issues, prepared.key, definitions);
    const subject: CallSubject = {
      tool,
      ...(definitions ? { definitions } : {}),
      ...(args.externalId !== undefined ? { externalId: args.externalId } : {}),
      ...(args.target ? { target: args.target } : {}),
      ...(args.idempotencyKey !== undefined ? { idempotencyKey: args.idempotencyKey } : { dedupe: dedupeOf(action.occurredAt!, tool.op) }),
    };
    try {
      if (args.idempotencyKey !== undefined) {
        const bound = await bindKey(sync.ledger, { source: action.source, idempotencyKey: args.idempotencyKey, actionKey: prepared.key, fingerprint: prepared.fingerprint }, { retentionMs: options.retentionMs ?? null, now: () => clock.now() });
        if (!bound.ok) {
          const { name, code } = new KeyConflictError(args.idempotencyKey, bound.existing).toJSON();
          const message = `idempotencyKey ${JSON.stringify(args.idempotencyKey)} was already used for another action (another record, object or intent): a key stands for one action, so use a new one for a new action`;
          const error = { name, code, message, path: 'idempotencyKey' };
          return callResult({ key: bound.actionKey ?? '', status: 'rejected', error, attempts: 0 }, subject);
        }
      }
      return callResult(await sync.apply(action), subject);
    } catch (err) {
      // The ledger (or something under it) failed: nothing is known to be done; the same key retries safely.
      return callResult({ key: prepared.key, status: 'failed', error: serializeError(err), attempts: 0 }, subject);
    }
  }

  async function read(tool: ReadToolSpec, raw: unknown): Promise<CallToolResult> {
    if (tool.kind === 'describe') {
      const parsed = tool.input.safeParse(raw ?? {});
      return parsed.success ? describeResult(describeObject(tool, reads)) : readRejected(issuesOf(tool, parsed.error, raw ?? {}));
    }
    const parsed = parseGetArgs(tool, raw);
    if (!parsed.ok) return readRejected(parsed.issues);
    try {
      return getResult(tool.object, await sync.read(tool.object, parsed.request.ids, parsed.request.options));
    } catch (err) {
      return readFailed(err);
    }
  }

  const objects = options.objects ?? sync.adapter.objects;
  const crm = options.crmName ?? sync.adapter.name;
  // Offered only where they can answer: an adapter without planReads/readRecords gets describe_ tools alone.
  const reads = adapterReads(sync.adapter);
  for (const tool of readToolSpecs(objects, { crm, reads })) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: advertisedSchema(tool.input),
        outputSchema: tool.output,
        // A read changes nothing, so repeating it is harmless; get_ asks the CRM (open world), describe_ only the config.
        annotations: { title: tool.title, readOnlyHint: true, idempotentHint: true, openWorldHint: tool.kind === 'get' },
      },
      (raw) => read(tool, raw),
    );
  }

  for (const tool of toolSpecs(objects, { crm, windowMs, bucketMs, reads })) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: advertisedSchema(tool.input, tool.spec.definitions),
        outputSchema: callResultSchema,
        annotations: tool.op === 'upsert'
          ? { title: tool.title, readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true }
          : { title: tool.title, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      (raw) => write(tool, raw),
    );
  }

  server.registerTool(
    'get_outcome',
    {
      title: 'What happened to an earlier call',
      description:
        'Look up what an earlier write call ended as (created, updated, replayed, suppressed, failed, still in_flight, or not_found when it wrote nothing), ' +
        'by the key it returned or the idempotencyKey you gave it. Reads the ledger only: no CRM call. Use it after a timeout or an in_flight result.',
      inputSchema: advertisedSchema(getOutcomeInput),
      outputSchema: outcomeReportSchema,
      annotations: { title: 'What happened to an earlier call', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (raw) => {
      const parsed = getOutcomeInput.safeParse(raw ?? {});
      if (!parsed.success) return rejectedResult(parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
      try {
        return outcomeResult(await lookupOutcome(sync.ledger, source(), parsed.data.key));
      } catch (err) {
        return { content: [{ type: 'text', text: `failed: ${serializeError(err).message}; ask again later` }], isError: true };
      }
    },
  );
  return server;
}
