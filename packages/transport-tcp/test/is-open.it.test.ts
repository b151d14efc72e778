// testlist: { file: 'is-open.it.test.ts', np: [1] } — two transports in one process over loopback TCP.
// Transport.isOpen (core's interface.ts): false while a frame for the peer would wait for this
// transport to open the connection, true once frames go to the socket at the turn's flush. The
// device completes an eager send on such a connection only when the transport tells the frame's
// sent token (docs/adr/0061 amendment 1), and the lean send (queueEager) refuses the channel.
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader, type TransportHandlers } from '@tsmpi/core/transport';
import { TcpTransport } from '../src/tcp-transport.ts';
import { jobKeyUsed, recordingLog, RecordingHandlers, waitUntil } from './tcp-harness.ts';

const JOB = { processCount: 2, channelCount: 1, endpointsPerProcess: 1, listenHost: '127.0.0.1' } as const;
const PAYLOAD = new Uint8Array(8);

function hdr(seq: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, srcEndpoint: 0, dstEndpoint: 1 };
}

/** Records the sent tokens the transport tells (and, as RecordingHandlers, the rest). */
class SentTokens implements TransportHandlers {
  readonly #rest = new RecordingHandlers();
  sent: number[] = [];
  onDeliver(src: number, h: FrameHeader): void {
    this.#rest.onDeliver(src, h);
  }
  onSent(token: number): void {
    this.sent.push(token);
  }
  onPeerLost(process: number, err: { code: string }): void {
    this.#rest.onPeerLost(process, err);
  }
}

describe('isOpen of a TCP transport', () => {
  it('is false until the connection a frame opened carries frames; a token queued meanwhile is told once written', async () => {
    const key = jobKeyUsed('io1'); // the harness removes its same-host directory after the file
    const got = new RecordingHandlers();
    const r = new TcpTransport({ ...JOB, process: 1, jobKey: key, log: recordingLog(), handlers: got });
    const name = await r.listen();
    const sender = new SentTokens();
    const s = new TcpTransport({ ...JOB, process: 0, jobKey: key, log: recordingLog(), handlers: sender });
    s.start(['', name]);
    try {
      expect(s.isOpen(1, 0), 'no connection yet').toBe(false);
      expect(s.queueEager(1, 0, 0, 0, 1, 0, PAYLOAD), 'the lean send refuses a channel not open').toBe(false);
      s.send(1, hdr(0), PAYLOAD, 7);
      expect(s.isOpen(1, 0), 'the first frame dials: still opening in this turn').toBe(false);
      await Promise.resolve();
      expect(sender.sent, 'not written before the connection opens').toEqual([]);
      await waitUntil(() => sender.sent.length === 1, 'the parked frame\'s token', 30_000);
      expect(sender.sent).toEqual([7]);
      expect(s.isOpen(1, 0), 'open once the frame went out').toBe(true);
      expect(s.queueEager(1, 0, 0, 0, 1, 0, PAYLOAD), 'the lean send takes an open channel').toBe(true);
      await waitUntil(() => got.seqs.length === 2, 'both frames at the receiver', 30_000);
      expect(got.seqs).toEqual([0, 0]);
    } finally {
      s.destroy();
      await r.close();
    }
  });
});
