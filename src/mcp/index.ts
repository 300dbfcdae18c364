/**
 * crm-upsert-sync/mcp: an MCP server whose CRM tools are safe to call twice. Needs the optional
 * peer @modelcontextprotocol/sdk (1.x); the package root never loads it.
 *
 * ```ts
 * import { createMcpServer, serveMcpStdio } from 'crm-upsert-sync/mcp';
 * const server = createMcpServer({ sync });       // the SDK's McpServer: add your own tools to it
 * await serveMcpStdio(server);
 * ```
 */
export { createMcpServer, defaultSourceOf, type CreateMcpServerOptions } from './server.js';
export { serveMcpStdio, type StdioSession, type StdioStreams } from './stdio.js';
export { isLoopback, MIN_TOKEN_LENGTH, serveMcpHttp, type McpHttpOptions, type McpHttpServer } from './http.js';
export { toolSpecs, callResultSchema, outcomeReportSchema, type CallResult, type OutcomeReport, type ToolSpec, type ToolSchemaOptions } from './tool-schemas.js';
export { bindingKey } from './key-binding.js';
