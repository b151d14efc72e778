// testlist: { file: 'reader-socket.it.test.ts', np: [1] } — transports in one process, real Unix-domain sockets.
// An endpoint reader's transport (interface.ts listenName, docs/adr/0019): it listens only on its
// computed socket path in the job's directory (same-host.ts); a thread's transport given that name as the peer's address dials it with
// no TCP fallback; a sender ending is not a loss for the reader, the reader ending is one for the sender.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { readerSocketName } from '../src/same-host.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { DEFAULT_TUNING } from '../src/tuning.ts';
import { jobKeyUsed, recordingLog, RecordingHandlers as Rec, waitUntil } from './tcp-harness.ts';

const isLinux = process.platform === 'linux';

/** Sockets of this machine bound to the socket file `name` (see same-host.it.test.ts). */
function unixSocketsNamed(name: string): number {
  return fs.readFileSync('/proc/net/unix', 'utf8').split('\n').filter((line) => line.endsWith(` ${name}`)).length;
}

/** Endpoint 0 or 1 of process 0 to endpoint 3 of process 1 (J = 2). */
function hdr(seq: number, src = 0): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: src, dstEndpoint: 3 };
}

const JOB = { processCount: 2, channelCount: 2, endpointsPerProcess: 2, listenHost: '127.0.0.1' } as const;

function reader(jobKey: string, name: string, rec: Rec): TcpTransport {
  return new TcpTransport({ ...JOB, process: 1, jobKey, log: recordingLog(), handlers: rec, listenName: name });
}

function sender(jobKey: string, name: string, rec: Rec, log = recordingLog(), connectRefusedRetryMs = DEFAULT_TUNING.connectRefusedRetryMs): TcpTransport {
  const t = new TcpTransport({ ...JOB, process: 0, jobKey, log, handlers: rec, threadConnections: true }, { ...DEFAULT_TUNING, connectRefusedRetryMs });
  t.start(['', name]);
  return t;
}

describe.runIf(isLinux)('an endpoint reader\'s socket', () => {
  it('carries two senders\' frames, each in order, and takes their end for no loss', async () => {
    const name = readerSocketName(jobKeyUsed('r1'), 1, 3, 1);
    const got = new Rec();
    const r = reader('r1', name, got);
    expect(r.isListening(), 'not listening before listen()').toBe(false);
    const listening = r.listen();
    // The name is bound inside listen(): the device announces the reader's route before the promise resolves.
    expect(r.isListening(), 'bound as listen() returns').toBe(true);
    expect(unixSocketsNamed(name), 'the name is taken as listen() returns').toBe(1);
    expect(await listening).toBe(name);
    const sent = [new Rec(), new Rec()];
    const ss = sent.map((rec) => sender('r1', name, rec));
    try {
      expect(unixSocketsNamed(name), 'the reader listens on its name').toBe(1);
      // Sender k sends seq k*10000 + i from endpoint k (its own channel), interleaved by turns.
      for (let i = 0; i < 2000; i++) {
        for (const k of [0, 1]) ss[k]!.send(1, hdr(k * 10_000 + i, k), null, -1);
        if (i % 100 === 99) await new Promise((res) => setImmediate(res));
      }
      await waitUntil(() => got.seqs.length === 4000, '4,000 frames at the reader', 20_000);
      for (const k of [0, 1]) expect(got.seqs.filter((s) => Math.floor(s / 10_000) === k)).toEqual(Array.from({ length: 2000 }, (_, i) => k * 10_000 + i));
      expect(unixSocketsNamed(name), 'listener plus one accepted socket per sender and channel').toBe(3);
      await Promise.all(ss.map((s) => s.close()));
      await waitUntil(() => unixSocketsNamed(name) === 1, 'the senders\' sockets to close', 10_000);
      expect(got.lost).toEqual([]);
      expect(sent.map((s) => s.lost)).toEqual([[], []]);
    } finally {
      for (const s of ss) s.destroy();
      await r.close();
    }
    await waitUntil(() => unixSocketsNamed(name) === 0, 'the reader\'s name to be gone', 10_000);
  });

  it('tells the reader of each sender connection\'s end with the seq of its last frame, after that frame, whether the sender closed or died', async () => {
    const name = readerSocketName(jobKeyUsed('r5'), 1, 3, 1);
    const events: string[] = [];
    // Every delivery and every connection end, in the order the reader's handlers saw them.
    const got = new (class extends Rec {
      override onDeliver(src: number, h: FrameHeader): void {
        super.onDeliver(src, h);
        events.push(`frame ${h.seq}`);
      }
      onThreadConnectionEnd(src: number, lastSeq: number): void {
        events.push(`end ${src} ${lastSeq}`);
      }
    })();
    const r = reader('r5', name, got);
    await r.listen();
    const ss = [new Rec(), new Rec()].map((rec) => sender('r5', name, rec));
    try {
      for (let i = 1; i <= 300; i++) ss[0]!.send(1, hdr(i, 0), null, -1);
      for (let i = 1; i <= 300; i++) ss[1]!.send(1, hdr(1000 + i, 1), null, -1);
      await waitUntil(() => got.seqs.length === 600, '600 frames at the reader', 20_000);
      // Sender 0 leaves cleanly; sender 1 is dropped at once, as a thread that dies.
      await ss[0]!.close();
      ss[1]!.destroy();
      await waitUntil(() => events.filter((e) => e.startsWith('end')).length === 2, 'both connections\' ends', 10_000);
      expect(events.filter((e) => e.startsWith('end')).sort()).toEqual(['end 0 1300', 'end 0 300']);
      // Each end comes after its connection's last frame.
      expect(events.indexOf('end 0 300')).toBeGreaterThan(events.indexOf('frame 300'));
      expect(events.indexOf('end 0 1300')).toBeGreaterThan(events.indexOf('frame 1300'));
      expect(got.lost).toEqual([]);
    } finally {
      for (const s of ss) s.destroy();
      await r.close();
    }
  });

  it('reports the reader\'s end to a connected sender as the loss of its process', async () => {
    const name = readerSocketName(jobKeyUsed('r2'), 1, 3, 1);
    const got = new Rec();
    const r = reader('r2', name, got);
    await r.listen();
    const sent = new Rec();
    const s = sender('r2', name, sent);
    try {
      s.send(1, hdr(1), null, -1);
      await waitUntil(() => got.seqs.length === 1, 'the first frame', 10_000);
      r.destroy();
      await waitUntil(() => sent.lost.length > 0, 'the sender to report the reader lost', 10_000);
      expect(sent.lost[0]!.process).toBe(1);
    } finally {
      s.destroy();
      r.destroy();
    }
  });

  it('fails a sender whose reader is not there, without trying TCP', async () => {
    const name = readerSocketName(jobKeyUsed('r3'), 1, 3, 7);
    const sent = new Rec();
    const log = recordingLog();
    const s = sender('r3', name, sent, log, 200);
    try {
      s.send(1, hdr(1), null, -1);
      await waitUntil(() => sent.lost.length > 0, 'the sender to give up on a missing reader', 10_000);
      expect(sent.lost).toEqual([{ process: 1, code: 'TSMPI_ERR_CONNECT' }]);
    } finally {
      s.destroy();
    }
  });

  it('refuses a second reader on a name in use', async () => {
    const name = readerSocketName(jobKeyUsed('r4'), 1, 3, 1);
    const first = reader('r4', name, new Rec());
    await first.listen();
    try {
      await expect(reader('r4', name, new Rec()).listen()).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});
