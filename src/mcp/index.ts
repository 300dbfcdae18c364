/**
 * crm-upsert-sync/mcp: an MCP server whose CRM tools are safe to call twice. Needs the optional
 * peer @modelcontextprotocol/sdk (1.x): importing this entry without it throws a ConfigError
 * naming the package and the install command. The package root never loads it.
 *
 * ```ts
 * import { createMcpServer, serveMcpStdio } from 'crm-upsert-sync/mcp';
 * const server = createMcpServer({ sync });       // the SDK's McpServer: add your own tools to it
 * await serveMcpStdio(server);
 * ```
 */
import { importWithPeers, PEERS } from '../optional-package.js';
import type * as Api from './api.js';

const api = await importWithPeers('crm-upsert-sync/mcp', [PEERS.mcpSdk], () => import('./api.js'));

// Each typed as the module's own: a copy's inferred type would widen literals and unique symbols.
export const createMcpServer: typeof Api.createMcpServer = api.createMcpServer;
export const defaultSourceOf: typeof Api.defaultSourceOf = api.defaultSourceOf;
export const serveMcpStdio: typeof Api.serveMcpStdio = api.serveMcpStdio;
export const isLoopback: typeof Api.isLoopback = api.isLoopback;
export const MIN_TOKEN_LENGTH: typeof Api.MIN_TOKEN_LENGTH = api.MIN_TOKEN_LENGTH;
export const serveMcpHttp: typeof Api.serveMcpHttp = api.serveMcpHttp;
export const toolSpecs: typeof Api.toolSpecs = api.toolSpecs;
export const callResultSchema: typeof Api.callResultSchema = api.callResultSchema;
export const outcomeReportSchema: typeof Api.outcomeReportSchema = api.outcomeReportSchema;
export const problemSchema: typeof Api.problemSchema = api.problemSchema;
export const readToolSpecs: typeof Api.readToolSpecs = api.readToolSpecs;
export const describeOutput: typeof Api.describeOutput = api.describeOutput;
export const MAX_READ_IDS: typeof Api.MAX_READ_IDS = api.MAX_READ_IDS;
export const bindingKey: typeof Api.bindingKey = api.bindingKey;
export type {
  CreateMcpServerOptions, StdioSession, StdioStreams, McpHttpOptions, McpHttpServer, CallResult, OutcomeReport, ToolSpec, ToolSchemaOptions,
  Problem, Described, DescribedField, ReadToolSpec, ReadToolOptions,
} from './api.js';
