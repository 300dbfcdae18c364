/**
 * Serving one MCP server over stdio. stdout carries the protocol and nothing else; the session
 * ends when the client closes stdin (or `close()` is called).
 */
import type { Readable, Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

export interface StdioSession {
  /** Settles when the client has gone (stdin ended) or the session was closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export interface StdioStreams {
  /** Default process.stdin. */
  stdin?: Readable;
  /** Default process.stdout. */
  stdout?: Writable;
}

export async function serveMcpStdio(server: McpServer, streams: StdioStreams = {}): Promise<StdioSession> {
  const stdin = streams.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, streams.stdout ?? process.stdout);
  let done!: () => void;
  const closed = new Promise<void>((resolve) => (done = resolve));
  // The SDK's stdio transport does not watch for the end of stdin: the client leaving ends the session.
  const onEnd = () => void server.close().finally(done);
  stdin.once('end', onEnd);
  stdin.once('close', onEnd);
  await server.connect(transport);
  // The protocol calls this when the transport closes (connect() took the transport's own onclose).
  server.server.onclose = done;
  return {
    closed,
    async close() {
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      await server.close();
      done();
    },
  };
}
