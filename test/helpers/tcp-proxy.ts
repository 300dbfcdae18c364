/**
 * A loopback TCP proxy that can take a service away from a process under test: put it between
 * the process and the service (`proxy.url(serviceUrl)`), then `cut()` drops every connection and
 * either refuses new ones (the service is down: ECONNREFUSED) or accepts them and never answers
 * (the network drops packets: every command hangs). `restore()` passes traffic again.
 */
import net from 'node:net';

export type CutMode = 'refuse' | 'blackhole';

export interface ProxiedConnection {
  /** When the proxy accepted it (epoch ms). */
  readonly acceptedAt: number;
  /** Chunks the service sent back on it: its answers. */
  readonly answers: number;
  /** When it closed (epoch ms); undefined while open. */
  readonly closedAt?: number;
}

export interface TcpProxy {
  readonly port: number;
  /** `serviceUrl` with its host and port replaced by the proxy's (credentials, path and query kept). */
  url(serviceUrl: string): string;
  /** Drop every open connection; new ones are refused or, with `blackhole`, accepted and never answered. */
  cut(mode?: CutMode): Promise<void>;
  /** Pass traffic again (blackholed connections are dropped, so clients reconnect through the proxy). */
  restore(): Promise<void>;
  /** Every connection accepted so far, oldest first. */
  connections(): readonly ProxiedConnection[];
  /** Connections accepted while cut with `blackhole` (held, never answered). */
  blackholed(): number;
  close(): Promise<void>;
}

export async function tcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const host = target.host ?? '127.0.0.1';
  const open = new Set<net.Socket>();
  const accepted: { acceptedAt: number; answers: number; closedAt?: number }[] = [];
  let state: 'pass' | CutMode = 'pass';
  let held = 0;
  const track = (s: net.Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (state !== 'pass') {
      // Blackhole: read and drop whatever the client sends, answer nothing.
      held += 1;
      client.resume();
      return;
    }
    const conn: { acceptedAt: number; answers: number; closedAt?: number } = { acceptedAt: Date.now(), answers: 0 };
    accepted.push(conn);
    const upstream = net.connect(target.port, host);
    track(upstream);
    const end = () => {
      conn.closedAt ??= Date.now();
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    upstream.on('data', () => (conn.answers += 1));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => (server.off('error', reject), resolve()));
  });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const dropAll = () => {
    for (const s of open) s.destroy();
  };
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url(serviceUrl) {
      const u = new URL(serviceUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async cut(mode = 'refuse') {
      state = mode;
      if (mode === 'refuse' && server.listening) {
        const closed = stopListening();
        dropAll();
        await closed;
      } else dropAll();
    },
    async restore() {
      const was = state;
      state = 'pass';
      dropAll();
      if (was === 'refuse') await listen(port);
    },
    connections: () => accepted.map((c) => ({ ...c })),
    blackholed: () => held,
    async close() {
      state = 'refuse';
      const closed = server.listening ? stopListening() : Promise.resolve();
      dropAll();
      await closed;
    },
  };
}
