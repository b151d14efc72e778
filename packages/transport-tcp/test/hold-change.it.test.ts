// testlist: { file: 'hold-change.it.test.ts', np: [1] } — transports in one process, a real Unix-domain socket.
// TransportOptions.onHoldChange (interface.ts): a thread's transport says when a connection starts
// and stops holding frames the kernel has not taken, and the calls balance, whether the frames
// reach the kernel or the connection is destroyed with them (a thread that dies then has lost
// them: packages/core/src/api/worker.ts fails its process).
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { readerSocketName } from '../src/same-host.ts';
import { TcpTransport } from '../src/tcp-transport.ts';
import { jobKeyUsed, recordingLog, RecordingHandlers as Rec, waitUntil } from './tcp-harness.ts';

const JOB = { processCount: 2, channelCount: 1, endpointsPerProcess: 1, listenHost: '127.0.0.1' } as const;
const FRAMES = 1024;
/** 16 MiB in one turn: more than a Unix socket's buffers take at once. */
const PAYLOAD = new Uint8Array(16 << 10);

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

/** A reader transport listening on its name, and a thread's transport dialling it that counts its holding connections. */
async function pair(key: string): Promise<{ got: Rec; r: TcpTransport; s: TcpTransport; held: () => number; calls: boolean[] }> {
  const name = readerSocketName(jobKeyUsed(key), 1, 1, 1);
  const got = new Rec();
  const r = new TcpTransport({ ...JOB, process: 1, jobKey: key, log: recordingLog(), handlers: got, listenName: name });
  await r.listen();
  const calls: boolean[] = [];
  const s = new TcpTransport({ ...JOB, process: 0, jobKey: key, log: recordingLog(), handlers: new Rec(), threadConnections: true, onHoldChange: (h) => { calls.push(h); } });
  s.start(['', name]);
  return { got, r, s, calls, held: () => calls.filter((h) => h).length - calls.filter((h) => !h).length };
}

describe.runIf(process.platform === 'linux')('onHoldChange of a thread\'s transport', () => {
  it('holds while frames wait for the kernel and lets go once it took them all', async () => {
    const { got, r, s, held, calls } = await pair('h1');
    try {
      for (let i = 0; i < FRAMES; i++) s.send(1, hdr(i), PAYLOAD, -1);
      expect(held(), 'queued frames: held').toBe(1);
      await waitUntil(() => got.seqs.length === FRAMES, `${FRAMES} frames at the reader`, 30_000);
      await waitUntil(() => held() === 0, 'the hold to end once the kernel took every frame', 10_000);
      expect(calls[0]).toBe(true);
      expect(calls.every((h, k) => h === (k % 2 === 0)), 'holds and releases alternate').toBe(true);
    } finally {
      s.destroy();
      await r.close();
    }
  });

  it('lets go when the connection is destroyed with frames the kernel had not taken', async () => {
    const { r, s, held } = await pair('h2');
    try {
      for (let i = 0; i < FRAMES; i++) s.send(1, hdr(i), PAYLOAD, -1);
      expect(held(), 'queued frames: held').toBe(1);
      s.destroy();
      expect(held(), 'destroyed: nothing held any more').toBe(0);
    } finally {
      await r.close();
    }
  });
});
