/**
 * What crm-upsert-sync/mcp exports. Its modules import @modelcontextprotocol/sdk statically:
 * index.ts imports this file dynamically, so that a missing SDK is one message naming it;
 * `crm-upsert mcp` imports it directly.
 */
export { createMcpServer, defaultSourceOf, type CreateMcpServerOptions } from './server.js';
export { serveMcpStdio, type StdioSession, type StdioStreams } from './stdio.js';
export { isLoopback, MIN_TOKEN_LENGTH, serveMcpHttp, type McpHttpOptions, type McpHttpServer } from './http.js';
export { toolSpecs, callResultSchema, outcomeReportSchema, problemSchema, type CallResult, type OutcomeReport, type Problem, type ToolSpec, type ToolSchemaOptions } from './tool-schemas.js';
export { readToolSpecs, describeOutput, MAX_READ_IDS, type Described, type DescribedField, type ReadToolSpec, type ReadToolOptions } from './read-tools.js';
export { bindingKey } from './key-binding.js';
