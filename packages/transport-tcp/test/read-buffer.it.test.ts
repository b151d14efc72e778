// Accepted sockets read into the one buffer they are given (read-buffer.ts): real sockets on 127.0.0.1.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { withReadBuffer } from '../src/read-buffer.ts';
import { wireSocket, type SocketEventSink } from '../src/socket-events.ts';

class Sink implements SocketEventSink {
  chunks: Uint8Array[] = [];
  copies: Uint8Array[] = [];
  ended = false;
  _onData(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.copies.push(chunk.slice());
  }
  _onEnd(): void {
    this.ended = true;
  }
  _onError(): void {}
  _onClose(): void {}
  _onTimeout(): void {}
}

const servers: net.Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** Accepts `clients` connections, each adopted onto `shared`; each client writes its bytes and ends. */
async function run(shared: Uint8Array, payloads: Uint8Array[]): Promise<Sink[]> {
  const sinks: Sink[] = [];
  const ended: Promise<void>[] = [];
  const server = net.createServer({ pauseOnConnect: true }, (accepted) => {
    const sink = new Sink();
    sinks.push(sink);
    const socket = withReadBuffer(accepted, shared);
    wireSocket(socket, sink, 10_000);
    socket.ref();
    ended.push(new Promise((resolve) => socket.once('end', () => resolve())));
    socket.resume();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await Promise.all(payloads.map((p) => new Promise<void>((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => c.end(p));
    c.on('close', () => resolve());
  })));
  while (ended.length < payloads.length) await new Promise((r) => setTimeout(r, 5));
  await Promise.all(ended);
  return sinks;
}

describe('accepted sockets with a reused read buffer', () => {
  it('hands every read as a plain Uint8Array view of the shared buffer, bytes intact', async () => {
    const shared = new Uint8Array(64 * 1024);
    const a = new Uint8Array(300_000).map((_, i) => (i * 7) & 255);
    const b = new Uint8Array(200_000).map((_, i) => (i * 13 + 1) & 255);
    const sinks = await run(shared, [a, b]);
    expect(sinks).toHaveLength(2);
    for (const sink of sinks) {
      // Node reads into our buffer (no per-read Buffer), and the view is not a Buffer, so slice() copies.
      expect(sink.chunks.every((c) => c.buffer === shared.buffer && !Buffer.isBuffer(c))).toBe(true);
      expect(sink.ended).toBe(true);
    }
    const received = sinks.map((s) => Buffer.concat(s.copies));
    const matches = (got: Buffer, want: Uint8Array): boolean => got.length === want.length && got.equals(want);
    expect((matches(received[0]!, a) && matches(received[1]!, b)) || (matches(received[0]!, b) && matches(received[1]!, a))).toBe(true);
  });
});
