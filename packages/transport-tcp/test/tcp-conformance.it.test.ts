// testlist: { file: 'tcp-conformance.it.test.ts', np: [1] } — N transports in one process, real sockets on 127.0.0.1.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader, type TransportHandlers } from '@tsmpi/core/transport';
import { transportConformance } from '@tsmpi/core/transport/kit';
import { HEADER_BYTES, encodeHeader } from '../src/frame-codec.ts';
import { CHALLENGE_BYTES, ClientHandshake, HANDSHAKE_STATUS } from '../src/handshake.ts';
import { createTransport, TcpTransport } from '../src/index.ts';
import { hostPort, jobKeyUsed, makeTcpJob, makeTcpTransports, recordingLog, tcpListener, RecordingHandlers as Rec, waitUntil as waitFor, waitWhileProgressing } from './tcp-harness.ts';

transportConformance('tcp', (spec) => makeTcpTransports(spec), { describe, it, expect });

/** This file's patience for a condition (a hang fails with a message, never a timeout of the runner). */
const waitUntil = (cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => waitFor(cond, what, timeoutMs);

/** Connects raw, sends `bytes`, resolves when the server closes the connection. */
function rawConnect(address: string, bytes: Uint8Array | null): Promise<{ received: number }> {
  return new Promise((resolve) => {
    const s = net.connect(hostPort(address));
    let received = 0;
    s.on('data', (d) => {
      received += d.length;
    });
    s.on('connect', () => {
      if (bytes !== null) s.write(bytes);
    });
    s.on('error', () => {});
    s.on('close', () => resolve({ received }));
  });
}

/** `promise`, or a failure naming `what` if it has not settled within `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Connects raw and sends nothing; the socket stays up until the server closes it or destroy(). */
function openSilent(address: string): { received: () => number; isClosed: () => boolean; destroy: () => void } {
  const s = net.connect(hostPort(address));
  let received = 0;
  let isClosed = false;
  s.on('data', (d) => {
    received += d.length;
  });
  s.on('error', () => {});
  s.on('close', () => {
    isClosed = true;
  });
  return { received: () => received, isClosed: () => isClosed, destroy: () => s.destroy() };
}

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

describe('tcp transport', () => {
  it('is created through the createTransport factory', async () => {
    const t = createTransport({
      process: 0, processCount: 1, channelCount: 2, jobKey: jobKeyUsed('k'), listenHost: '127.0.0.1', log: recordingLog(), handlers: new Rec(),
    });
    const address = await t.listen();
    expect(address).toMatch(/^127\.0\.0\.1:\d+( unix:\/.+)?$/);
    await t.close();
  });

  it('sends everything queued on a channel in one turn with ONE socket write', async () => {
    const rs = [new Rec(), new Rec()];
    const ts = await makeTcpTransports({ processCount: 2, channelCount: 1, handlers: rs });
    try {
      ts[0]!.send(1, hdr(0), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 1, 'connection');
      const write = net.Socket.prototype.write;
      let writes = 0;
      net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
        writes++;
        return (write as (...a: unknown[]) => boolean).apply(this, args);
      } as typeof write;
      try {
        for (let i = 1; i <= 12; i++) ts[0]!.send(1, hdr(i), Uint8Array.of(i), -1);
        await new Promise((r) => setImmediate(r));
      } finally {
        net.Socket.prototype.write = write;
      }
      expect(writes).toBe(1);
      await waitUntil(() => rs[1]!.seqs.length === 13, '13 frames');
    } finally {
      for (const t of ts) t.destroy();
    }
  });

  it('keeps random-size payloads intact under backpressure (copied and by reference)', async () => {
    // Payload byte i of frame seq is (i + seq) & 255: a window of PATTERN. Filling and checking
    // through it (a copy, a native compare) keeps every byte checked at a fraction of the CPU of a
    // JavaScript loop per byte, which at load 60 outlasted the wait below (225 MB each way).
    const MAX_LEN = 300_000;
    const PATTERN = Uint8Array.from({ length: MAX_LEN + 256 }, (_, j) => j & 255);
    const expected = (seq: number, len: number): Uint8Array => PATTERN.subarray(seq & 255, (seq & 255) + len);
    let bad = 0;
    let got = 0;
    let sent = 0;
    const rs: TransportHandlers[] = [
      { onDeliver() {}, onSent: () => void sent++, onPeerLost() {} },
      {
        onDeliver(_src, h, p) {
          got++;
          if (p.length !== h.aux || Buffer.compare(p, expected(h.seq, h.aux)) !== 0) bad++;
        },
        onSent() {},
        onPeerLost() {},
      },
    ];
    const ts = await makeTcpTransports({ processCount: 2, channelCount: 1, handlers: rs });
    try {
      let seed = 12345;
      const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
      let seq = 0;
      let refs = 0;
      for (let burst = 0; burst < 150; burst++) {
        for (let k = 0; k < 20; k++) {
          const len = Math.floor(random() ** 3 * MAX_LEN);
          const p = new Uint8Array(len);
          p.set(expected(seq, len));
          const h = { ...newFrameHeader(), kind: 1, seq, aux: len, srcEndpoint: 0, dstEndpoint: 1 };
          ts[0]!.send(1, h, p, random() < 0.5 ? refs++ : -1);
          seq++;
        }
        if (burst % 3 === 0) await new Promise((r) => setImmediate(r));
      }
      // A stall fails (no frame delivered for 30 s); a slow machine that keeps delivering does not.
      await waitWhileProgressing(() => got === seq && sent === refs, () => got + sent, 'all frames and onSent', 30_000);
      expect(bad).toBe(0);
    } finally {
      for (const t of ts) t.destroy();
    }
  });

  it('refuses and logs a wrong key and garbage, and holds a silent connection, while real traffic continues', async () => {
    // Every refusal here is caused by the bytes the client sends, never by the
    // clock: the handshake timeout (60 s) outlasts the four waits of this test
    // together (10 s each at most), so a slow but correct handshake on a loaded
    // machine cannot be refused, and the silent connection stays open (the
    // timeout has a test of its own below).
    const log = recordingLog();
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({
      processCount: 2, channelCount: 2, handlers: rs, log, jobKey: 'right-key', tuning: { handshakeTimeoutMs: 60_000 },
    });
    const silent = openSilent(addresses[1]!);
    let pump: NodeJS.Timeout | undefined;
    try {
      await waitUntil(() => silent.received() === CHALLENGE_BYTES, 'the challenge to the silent connection');
      let n = 0;
      pump = setInterval(() => {
        for (let i = 0; i < 50; i++) ts[0]!.send(1, hdr(n++), Uint8Array.of(1, 2, 3), -1);
      }, 5);
      // a process with the wrong key: the server closes it right after HELLO
      const wrong = new ClientHandshake('wrong-key', 0, 1, tcpListener(addresses[1]!));
      const wrongDone = new Promise<number>((resolve) => {
        const s = net.connect(hostPort(addresses[1]!));
        s.on('data', (d) => {
          wrong.feed(d);
          if (wrong.hello !== null && !s.destroyed) s.write(wrong.hello);
        });
        s.on('error', () => {});
        s.on('close', () => resolve(0));
      });
      const [, garbage] = await within(10_000, 'the server to close the wrong-key and the garbage connections', Promise.all([
        wrongDone,
        rawConnect(addresses[1]!, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')),
      ]));
      expect(garbage.received).toBe(CHALLENGE_BYTES); // the challenge, then nothing
      // an impostor transport with the wrong key is refused and reports it
      const impostorRec = new Rec();
      const [impostor] = await makeTcpTransports({ processCount: 2, channelCount: 2, handlers: [impostorRec], jobKey: 'wrong-key' });
      impostor!.start(addresses);
      impostor!.send(1, hdr(999_999), null, -1);
      await waitUntil(() => impostorRec.lost.length === 1, 'impostor refused');
      expect(impostorRec.lost[0]).toEqual({ process: 1, code: 'TSMPI_ERR_HANDSHAKE' });
      impostor!.destroy();
      clearInterval(pump);
      await waitUntil(() => rs[1]!.seqs.length === n, 'all real frames');
      expect(rs[1]!.seqs.every((s, i) => s === i)).toBe(true);
      expect(rs[0]!.lost.length + rs[1]!.lost.length).toBe(0);
      expect(silent.isClosed(), 'the silent connection is still waiting in the handshake').toBe(false);
      expect(silent.received(), 'the silent connection got the challenge and nothing more').toBe(CHALLENGE_BYTES);
      const reasons = log.records.filter((r) => r.level === 'warn').map((r) => (r.obj as { reason: string }).reason).sort();
      expect(reasons).toEqual(['bad magic in hello', 'job key proof does not match', 'job key proof does not match']);
    } finally {
      clearInterval(pump);
      silent.destroy();
      for (const t of ts) t.destroy();
    }
  });

  it('closes a connection that stays silent past the handshake timeout, and logs why', async () => {
    // The timeout firing is the outcome waited for, so no value of it can make
    // this test fail or pass for the wrong reason: it only sets how long it takes.
    const log = recordingLog();
    const { transports: ts, addresses } = await makeTcpJob({
      processCount: 1, channelCount: 1, handlers: [new Rec()], log, jobKey: 'k', tuning: { handshakeTimeoutMs: 200 },
    });
    try {
      const silent = await within(10_000, 'the server to close the silent connection', rawConnect(addresses[0]!, null));
      expect(silent.received, 'the challenge, then the close').toBe(CHALLENGE_BYTES);
      const warns = log.records.filter((r) => r.level === 'warn');
      expect(warns.map((r) => (r.obj as { reason: string }).reason)).toEqual(['handshake timed out']);
    } finally {
      for (const t of ts) t.destroy();
    }
  });

  it('refuses a connection for a channel the instance does not own', async () => {
    const log = recordingLog();
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 1, channelCount: 2, handlers: [new Rec()], log, jobKey: 'k' });
    try {
      const owner = ts[0]!;
      const other = new TcpTransport({
        process: 0, processCount: 1, channelCount: 2, channels: [0], jobKey: 'k', listenHost: '127.0.0.1', log, handlers: new Rec(),
      });
      const a = await other.listen();
      // a client for channel 1 knocks at the instance that owns only channel 0
      const hs = new ClientHandshake('k', 0, 1, tcpListener(a));
      await new Promise<void>((resolve) => {
        const s = net.connect(hostPort(a));
        s.on('data', (d) => {
          hs.feed(d);
          if (hs.hello !== null && !s.destroyed) s.write(hs.hello);
        });
        s.on('error', () => {});
        s.on('close', () => resolve());
      });
      expect(log.records.map((r) => (r.obj as { reason?: string }).reason)).toContain('channel not owned by this transport');
      expect(addresses.length).toBe(1);
      other.destroy();
      await owner.close();
    } finally {
      for (const t of ts) t.destroy();
    }
  });

  it('reports a peer that ends its connection without GOODBYE while we are not closing', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k' });
    try {
      // pretend to be process 0 on channel 0: handshake, one frame, then end without GOODBYE
      const hs = new ClientHandshake('k', 0, 0, tcpListener(addresses[1]!));
      const s = net.connect(hostPort(addresses[1]!));
      s.on('error', () => {});
      s.on('data', (d) => {
        const st = hs.feed(d);
        if (hs.hello !== null && st === HANDSHAKE_STATUS.PENDING && !s.writableEnded) s.write(hs.hello);
        if (st === HANDSHAKE_STATUS.DONE) {
          const f = new Uint8Array(HEADER_BYTES);
          encodeHeader(f, 0, hdr(42), 0);
          s.end(f);
        }
      });
      await waitUntil(() => rs[1]!.lost.length === 1, 'onPeerLost');
      expect(rs[1]!.seqs).toEqual([42]);
      expect(rs[1]!.lost).toEqual([{ process: 0, code: 'TSMPI_ERR_PEER_CLOSED' }]);
    } finally {
      for (const t of ts) t.destroy();
    }
  });

  it('works with one instance per channel (threads mode): each instance accepts only its channel', async () => {
    const C = 2;
    const recs = [[new Rec(), new Rec()], [new Rec(), new Rec()]]; // [process][channel]
    const log = recordingLog();
    const inst = recs.map((row, process) => row.map((handlers, channel) => new TcpTransport({
      process, processCount: 2, channelCount: C, channels: [channel], jobKey: 'k', listenHost: '127.0.0.1', log, handlers,
    })));
    try {
      const addr = await Promise.all(inst.map((row) => Promise.all(row.map((t) => t.listen()))));
      for (let c = 0; c < C; c++) for (let p = 0; p < 2; p++) inst[p]![c]!.start([addr[0]![c]!, addr[1]![c]!]);
      for (let i = 0; i < 100; i++) {
        const h = hdr(i);
        h.dstEndpoint = 1 + (i % 2); // channel (0 + d) mod 2
        inst[0]![h.dstEndpoint % C]!.send(1, h, null, -1);
      }
      await waitUntil(() => recs[1]![0]!.seqs.length + recs[1]![1]!.seqs.length === 100, 'frames');
      expect(recs[1]![1]!.seqs.every((s) => s % 2 === 0)).toBe(true); // d = 1 -> channel 1
      expect(recs[1]![0]!.seqs.every((s) => s % 2 === 1)).toBe(true);
      expect(log.records.length).toBe(0);
      await Promise.all(inst.flat().map((t) => t.close()));
    } finally {
      for (const t of inst.flat()) t.destroy();
    }
  });

  it('takes the end of a thread connection (a user thread sending directly) for the thread\'s, not the process\'s', async () => {
    const rs = [new Rec(), new Rec()];
    const { transports: ts, addresses } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, jobKey: 'k' });
    const threadRec = new Rec();
    const thread = new TcpTransport({
      process: 0, processCount: 2, channelCount: 1, jobKey: 'k', listenHost: '127.0.0.1', log: recordingLog(), handlers: threadRec, threadConnections: true,
    });
    try {
      thread.start(addresses);
      await thread.open(1);
      for (let i = 0; i < 10; i++) thread.send(1, hdr(i), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 10, 'the thread\'s frames');
      expect(rs[1]!.seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      thread.destroy(); // the thread ends without GOODBYE
      // Process 0's own connection still works, and nobody reported process 0 lost or departed.
      ts[0]!.send(1, hdr(100), null, -1);
      await waitUntil(() => rs[1]!.seqs.length === 11, 'the process\'s frame after the thread ended');
      ts[1]!.send(0, hdr(200), null, -1);
      await waitUntil(() => rs[0]!.seqs.length === 1, 'a frame to the process after its thread ended');
      expect(rs[1]!.lost).toEqual([]);
      expect(threadRec.lost).toEqual([]);
      await Promise.all(ts.map((t) => t.close()));
    } finally {
      thread.destroy();
      for (const t of ts) t.destroy();
    }
  });
});
