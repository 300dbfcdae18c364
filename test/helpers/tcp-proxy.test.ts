/** The cuttable proxy the outage tests put between a process and its Redis, against a loopback echo server. */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../cli/helpers.js';
import { tcpProxy, type TcpProxy } from './tcp-proxy.js';

async function echoServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

/** Connect, send `text`, and report what happened first: the echo, the connection closing, or silence for `ms`. */
function roundTrip(port: number, text: string, ms = 300): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (what: string) => (clearTimeout(timer), socket.destroy(), resolve(what));
    const timer = setTimeout(() => done('silence'), ms);
    socket.on('data', (d: Buffer) => done(`echo ${d.toString()}`));
    socket.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'error'));
    socket.on('close', () => done('closed'));
    socket.write(text);
  });
}

describe('tcpProxy', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });
  async function setup(): Promise<{ proxy: TcpProxy }> {
    const echo = await echoServer();
    const proxy = await tcpProxy({ port: echo.port });
    cleanup.push(echo.close, proxy.close);
    return { proxy };
  }

  it('passes traffic, and counts the connections and their answers', async () => {
    const { proxy } = await setup();
    expect(await roundTrip(proxy.port, 'ping')).toBe('echo ping');
    await waitFor(() => proxy.connections()[0]?.closedAt !== undefined);
    expect(proxy.connections()).toEqual([{ acceptedAt: expect.any(Number), answers: 1, closedAt: expect.any(Number) }]);
  });

  it('refuses new connections once cut, and passes them again once restored', async () => {
    const { proxy } = await setup();
    await proxy.cut('refuse');
    expect(await roundTrip(proxy.port, 'ping')).toBe('ECONNREFUSED');
    await proxy.restore();
    expect(await roundTrip(proxy.port, 'again')).toBe('echo again');
  });

  it('accepts and never answers while blackholed', async () => {
    const { proxy } = await setup();
    await proxy.cut('blackhole');
    expect(await roundTrip(proxy.port, 'ping')).toBe('silence');
    await proxy.restore();
    expect(await roundTrip(proxy.port, 'again')).toBe('echo again');
  });

  it('drops the connections open when it is cut', async () => {
    const { proxy } = await setup();
    const socket = net.connect(proxy.port, '127.0.0.1');
    await new Promise((r) => socket.once('data', r).write('hello'));
    const closed = new Promise((r) => socket.once('close', r));
    await proxy.cut('blackhole');
    await closed;
    expect(socket.destroyed).toBe(true);
  });

  it('keeps the credentials, path and query of a URL it stands in for', async () => {
    const { proxy } = await setup();
    expect(proxy.url('redis://user:pw@10.0.0.5:6379/2?keyPrefix=a%3A')).toBe(`redis://user:pw@127.0.0.1:${proxy.port}/2?keyPrefix=a%3A`);
  });
});
