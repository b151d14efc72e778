// testlist: { file: 'thread-connect.it.test.ts', np: [1] } — transports in one process, real sockets on 127.0.0.1.
// A user thread's own connection whose handshake stalls (the peer's event loop
// does not answer in time: many threads connecting at once on a loaded host, or
// a peer whose main thread computes) is retried, not reported lost
// (tuning.threadConnectRetryMs); a process connection still fails at once, and
// a refused thread connection still gives up (the listener is gone).
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { ClientHandshake, HANDSHAKE_STATUS, ServerHandshake, THREAD_CONNECTION_BIT, listenerBinding } from '../src/handshake.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING, type TcpTuning } from '../src/tuning.ts';
import { hostPort, jobKeyUsed, makeTcpJob, recordingLog, RecordingHandlers as Rec, tcpListener, waitUntil } from './tcp-harness.ts';

const KEY = 'k';

const hdr = (seq: number): FrameHeader => ({ ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 0 });

/** Short handshake timeout, no Unix sockets (the stalling proxy below is TCP only). */
const TUNING: TcpTuning = { ...DEFAULT_TUNING, handshakeTimeoutMs: 200, connectRetryDelayMs: 20, connectRetryMaxDelayMs: 50, sameHostUnix: false };

/**
 * A TCP proxy in front of `target` that accepts its first `stalls` connections and never answers
 * on them (a listener whose event loop is busy), and carries every later one to the target. The
 * handshake binds the listener a client dialled (handshake.ts), so a plain pipe would be refused:
 * the proxy is one of the job's (it knows the key) and runs the handshake on each side, as a
 * listener with its own address towards the client and as the same client towards the target.
 */
async function stallingProxy(target: string, stalls: number): Promise<{ address: string; accepted: () => number; close: () => Promise<void> }> {
  const sockets: net.Socket[] = [];
  let accepted = 0;
  let address = '';
  const server = net.createServer((s) => {
    sockets.push(s);
    s.on('error', () => undefined);
    if (accepted++ < stalls) return;
    carry(s, address, target, sockets);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    address,
    accepted: () => accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Authenticates the client on `s` as the listener `address`, then carries its connection to `target` as that client. */
function carry(s: net.Socket, address: string, target: string, sockets: net.Socket[]): void {
  const inner = new ServerHandshake(KEY, listenerBinding('tcp', address));
  s.write(inner.challenge());
  const early: Uint8Array[] = [];
  let isAuthenticated = false;
  const onClient = (d: Buffer): void => {
    if (isAuthenticated) {
      early.push(d);
      return;
    }
    const st = inner.feed(d);
    if (st === HANDSHAKE_STATUS.FAILED) s.destroy();
    if (st !== HANDSHAKE_STATUS.DONE) return;
    isAuthenticated = true;
    early.push(inner.rest);
    const channel = (inner.channel | (inner.isThreadConnection ? THREAD_CONNECTION_BIT : 0)) >>> 0;
    const outer = new ClientHandshake(KEY, inner.process, channel, tcpListener(target));
    const up = net.connect(hostPort(target));
    sockets.push(up);
    up.on('error', () => s.destroy());
    let isHelloSent = false;
    const onUp = (c: Buffer): void => {
      const st2 = outer.feed(c);
      if (outer.hello !== null && !isHelloSent) {
        isHelloSent = true;
        up.write(outer.hello);
      }
      if (st2 !== HANDSHAKE_STATUS.DONE) return;
      up.off('data', onUp);
      s.off('data', onClient);
      s.write(inner.accept);
      if (outer.rest.length > 0) s.write(outer.rest);
      for (const b of early) up.write(b);
      s.pipe(up);
      up.pipe(s);
    };
    up.on('data', onUp);
  };
  s.on('data', onClient);
}

function sender(rec: Rec, threadConnections: boolean, tuning: TcpTuning = TUNING): TcpTransport {
  return new TcpTransport(
    { process: 0, processCount: 2, channelCount: 1, jobKey: jobKeyUsed(KEY), listenHost: '127.0.0.1', log: recordingLog(), handlers: rec, threadConnections },
    tuning,
  );
}

describe('tcp transport: thread connections retry a stalled handshake', () => {
  it('a thread connection whose first two handshakes time out opens on the third and delivers in order', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k', tuning: { sameHostUnix: false } });
    const proxy = await stallingProxy(addresses[1]!, 2);
    const threadRec = new Rec();
    const thread = sender(threadRec, true);
    try {
      thread.start([addresses[0]!, proxy.address]);
      for (let i = 0; i < 5; i++) thread.send(1, hdr(i), null, -1);
      await thread.open(1);
      await waitUntil(() => rs[1]!.seqs.length === 5, 'the thread\'s frames after two stalled handshakes', 15_000);
      expect(rs[1]!.seqs).toEqual([0, 1, 2, 3, 4]);
      expect(proxy.accepted()).toBe(3);
      expect(threadRec.lost).toEqual([]);
      expect(rs[1]!.lost).toEqual([]);
    } finally {
      thread.destroy();
      for (const t of ts) t.destroy();
      await proxy.close();
    }
  });

  it('a process connection whose handshake times out still reports the peer lost', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k', tuning: { sameHostUnix: false } });
    const proxy = await stallingProxy(addresses[1]!, 100);
    const rec = new Rec();
    const a = sender(rec, false);
    try {
      a.start([addresses[0]!, proxy.address]);
      a.send(1, hdr(1), null, -1);
      await waitUntil(() => rec.lost.length === 1, 'the stalled peer to be reported lost', 15_000);
      expect(rec.lost).toEqual([{ process: 1, code: 'TSMPI_ERR_CONNECT' }]);
      expect(proxy.accepted()).toBe(1);
    } finally {
      a.destroy();
      for (const t of ts) t.destroy();
      await proxy.close();
    }
  });

  it('a refused thread connection gives up after connectRefusedRetryMs', async () => {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
    const rec = new Rec();
    const thread = sender(rec, true, { ...TUNING, connectRefusedRetryMs: 300 });
    try {
      thread.start(['127.0.0.1:1', `127.0.0.1:${port}`]);
      thread.send(1, hdr(1), null, -1);
      await waitUntil(() => rec.lost.length === 1, 'the refused peer to be reported lost', 15_000);
      expect(rec.lost).toEqual([{ process: 1, code: 'TSMPI_ERR_CONNECT' }]);
    } finally {
      thread.destroy();
    }
  });

  it('close() while a stalled thread handshake waits for its retry resolves', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k', tuning: { sameHostUnix: false } });
    const proxy = await stallingProxy(addresses[1]!, 1000);
    const threadRec = new Rec();
    const thread = sender(threadRec, true);
    try {
      thread.start([addresses[0]!, proxy.address]);
      thread.send(1, hdr(1), null, -1);
      await waitUntil(() => proxy.accepted() >= 2, 'a retried thread handshake', 15_000);
      await thread.close(); // would hang (and fail the test by the runner's timeout) if the retry kept a socket counted
      expect(threadRec.lost).toEqual([]);
    } finally {
      thread.destroy();
      for (const t of ts) t.destroy();
      await proxy.close();
    }
  });
});
