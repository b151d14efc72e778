// Issue 17, limits: a receiver bounds what a peer can make it allocate. Over real sockets, a
// payload above maxUnsolicitedPayloadBytes that the receiver's payloadTarget does not take is
// refused: the connection is closed and the peer reported lost (TSMPI_ERR_PROTOCOL), with one
// warning; frames before it were delivered; a large payload the receiver asked for passes.
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import type { TransportHandlers } from '@tsmpi/core/transport';
import { makeTcpJob, recordingLog, waitUntil } from './tcp-harness.ts';

const LIMIT = 1024;

/** Records frames; supplies a target for frames whose tag is 1 (the ones "asked for"). */
class AskingHandlers implements TransportHandlers {
  seqs: number[] = [];
  lengths: number[] = [];
  lost: { process: number; code: string }[] = [];
  onDeliver(_src: number, h: FrameHeader, payload: Uint8Array): void {
    this.seqs.push(h.seq);
    this.lengths.push(payload.length);
  }
  onSent(): void {}
  onPeerLost(process: number, err: { code: string }): void {
    this.lost.push({ process, code: err.code });
  }
  payloadTarget(_src: number, h: FrameHeader): Uint8Array | null {
    return h.tag === 1 ? new Uint8Array(h.payloadLength) : null;
  }
}

function frame(seq: number, tag: number): FrameHeader {
  return { ...newFrameHeader(), kind: 1, seq, tag };
}

describe('unsolicited payloads', () => {
  it('are refused above the bound unless the receiver asked for them', async () => {
    const log = recordingLog();
    const rs = [new AskingHandlers(), new AskingHandlers()];
    const { transports: ts } = await makeTcpJob({ processCount: 2, channelCount: 1, handlers: rs, log, maxUnsolicitedPayloadBytes: LIMIT });
    try {
      ts[0]!.send(1, frame(0, 0), new Uint8Array(LIMIT), -1); // at the bound: accepted
      ts[0]!.send(1, frame(1, 1), new Uint8Array(1 << 20), -1); // asked for (tag 1): accepted
      ts[0]!.send(1, frame(2, 0), new Uint8Array(LIMIT + 1), -1); // not asked for: refused
      ts[0]!.send(1, frame(3, 0), new Uint8Array(8), -1); // after the refusal: never delivered
      await waitUntil(() => rs[1]!.lost.length > 0, 'the peer reported lost', 20_000);
      expect(rs[1]!.lost).toEqual([{ process: 0, code: 'TSMPI_ERR_PROTOCOL' }]);
      expect(rs[1]!.seqs).toEqual([0, 1]);
      expect(rs[1]!.lengths).toEqual([LIMIT, 1 << 20]);
      const warnings = log.records.filter((r) => r.msg === 'refused an unsolicited frame larger than the eager limit');
      expect(warnings.map((r) => (r.obj as { payloadLength: number }).payloadLength)).toEqual([LIMIT + 1]);
    } finally {
      for (const t of ts) t.destroy();
    }
  }, 60_000);
});
