// testlist: { file: 'flush-pending.it.test.ts', np: [1] } — transports in one process, a real Unix-domain socket.
// Transport.flushPending (core's interface.ts; util/first-use-load.ts calls it before a module's load
// at first use): a process's transport writes a turn's frames at process.nextTick, so a frame sent
// now reaches its socket only after the turn, unless flushPending writes it at once.
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { readerSocketName } from '../src/same-host.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { jobKeyUsed, recordingLog, RecordingHandlers as Rec, waitUntil } from './tcp-harness.ts';

const JOB = { processCount: 2, channelCount: 1, endpointsPerProcess: 1, listenHost: '127.0.0.1' } as const;
const PAYLOAD = new Uint8Array(8);

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

describe.runIf(process.platform === 'linux')('flushPending of a process\'s transport', () => {
  it('writes the frames queued for the turn\'s flush at once, and the turn\'s flush then writes nothing twice', async () => {
    const key = 'fp1';
    const got = new Rec();
    const r = new TcpTransport({ ...JOB, process: 1, jobKey: key, log: recordingLog(), handlers: got, listenName: readerSocketName(jobKeyUsed(key), 1, 1, 1) });
    const name = await r.listen();
    const s = new TcpTransport({ ...JOB, process: 0, jobKey: key, log: recordingLog(), handlers: new Rec() });
    s.start(['', name]);
    try {
      // The first frame opens the connection (its handshake needs the event loop).
      s.send(1, hdr(0), PAYLOAD, -1);
      await waitUntil(() => got.seqs.length === 1, 'the first frame at the reader', 30_000);
      const before = s.bytesToProcess()[1]!;
      s.send(1, hdr(1), PAYLOAD, -1);
      expect(s.bytesToProcess()[1], 'queued for the turn\'s flush: not on the socket yet').toBe(before);
      s.flushPending();
      const after = s.bytesToProcess()[1]!;
      expect(after, 'flushPending wrote the frame to the socket').toBeGreaterThan(before);
      s.flushPending();
      expect(s.bytesToProcess()[1], 'nothing left to write').toBe(after);
      await waitUntil(() => got.seqs.length === 2, 'the second frame at the reader', 30_000);
      expect(got.seqs).toEqual([0, 1]);
      expect(s.bytesToProcess()[1], 'the turn\'s own flush found nothing more').toBe(after);
    } finally {
      s.destroy();
      await r.close();
    }
  });
});
