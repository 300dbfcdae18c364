/**
 * An MCP server over stdio on the seeded memory CRM (read-fixture.ts), for the SDK's stdio client
 * to spawn: `node --import tsx test/mcp/read-server.ts`.
 */
import { createMcpServer, serveMcpStdio } from '../../src/mcp/index.js';
import { seededCrm } from './read-fixture.js';

const { sync } = await seededCrm();
const session = await serveMcpStdio(createMcpServer({ sync }));
await session.closed;
await sync.close();
