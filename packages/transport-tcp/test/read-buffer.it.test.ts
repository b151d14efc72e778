// Accepted sockets read into the one buffer they are given (read-buffer.ts): real sockets on 127.0.0.1.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { withReadBuffer, type ReadTargetSource } from '../src/read-buffer.ts';
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

const NO_TARGET: ReadTargetSource = { nextReadTarget: () => null };

/** Accepts one connection per payload, each adopted onto `shared` (and `source`); each client writes its bytes and ends. */
async function run(shared: Uint8Array, payloads: Uint8Array[], source: (sink: Sink) => ReadTargetSource = () => NO_TARGET): Promise<Sink[]> {
  const sinks: Sink[] = [];
  const ended: Promise<void>[] = [];
  const server = net.createServer({ pauseOnConnect: true }, (accepted) => {
    const sink = new Sink();
    sinks.push(sink);
    const socket = withReadBuffer(accepted, shared, source(sink));
    wireSocket(socket, sink, 10_000, 5_000);
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

  it('reads straight into the target its source offers, and into the shared buffer when it offers none', async () => {
    const shared = new Uint8Array(64 * 1024);
    const target = new Uint8Array(250_000);
    const payload = new Uint8Array(400_000).map((_, i) => (i * 31 + 5) & 255);
    // Once 1000 bytes have arrived, the source offers the target until it is full; then none again.
    let start = -1;
    const source = (sink: Sink): ReadTargetSource => ({
      nextReadTarget: () => {
        const got = sink.copies.reduce((n, c) => n + c.length, 0);
        if (start < 0 && got >= 1000) start = got;
        return start >= 0 && got - start < target.length ? target.subarray(got - start) : null;
      },
    });
    const [sink] = await run(shared, [payload], source);
    const inTarget = sink!.chunks.filter((c) => c.buffer === target.buffer);
    expect(sink!.chunks.every((c) => c.buffer === target.buffer || c.buffer === shared.buffer)).toBe(true);
    expect(Buffer.concat(sink!.copies).equals(payload)).toBe(true);
    // The target was filled by reads alone, with the bytes that followed the first 1000 or so.
    expect(inTarget.reduce((n, c) => n + c.length, 0)).toBe(target.length);
    expect(Buffer.from(target).equals(payload.subarray(start, start + target.length))).toBe(true);
    // After it, reads went back to the shared buffer.
    expect(sink!.chunks.at(-1)!.buffer).toBe(shared.buffer);
  });
});
