// A channel's batch that the socket still points into (more than the kernel took at once) is lent,
// and taken back as the next batch only once the socket has finished with it (channel-connection.ts
// #lend): over real sockets, copied sends larger than a socket's buffer, queued turn after turn
// while earlier ones are still being written, all arrive byte for byte.
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader, type TransportHandlers } from '@tsmpi/core/transport';
import { makeTcpTransports, waitWhileProgressing } from './tcp-harness.ts';

/** More than a socket takes at once. */
const BIG = (1 << 20) + 8;

/** The byte at `i` of frame `seq`: every frame's content differs from the one before it. */
function byteOf(seq: number, i: number): number {
  return (i * 31 + seq * 101 + (i >>> 12)) & 255;
}

/** Receives every payload into a fresh array of its own (payloadTarget), in order. */
class Receiver implements TransportHandlers {
  readonly got: { seq: number; payload: Uint8Array }[] = [];
  #pending = new Map<number, Uint8Array>();
  onDeliver(_src: number, h: FrameHeader, payload: Uint8Array): void {
    this.got.push({ seq: h.seq, payload: this.#pending.get(h.seq) ?? payload.slice() });
    this.#pending.delete(h.seq);
  }
  onSent(): void {}
  onPeerLost(): void {}
  payloadTarget(_src: number, h: FrameHeader): Uint8Array | null {
    const into = new Uint8Array(h.payloadLength);
    this.#pending.set(h.seq, into);
    return into;
  }
  get bytes(): number {
    return this.got.reduce((n, g) => n + g.payload.length, 0);
  }
}

function firstWrong(seq: number, p: Uint8Array): number {
  for (let i = 0; i < p.length; i++) if (p[i] !== byteOf(seq, i)) return i;
  return -1;
}

describe('a lent batch', () => {
  for (const secure of [false, true]) {
    it(`is reused only after the socket is done with it: large copied sends arrive intact${secure ? ' (TLS)' : ''}`, async () => {
      const receiver = new Receiver();
      const quiet: TransportHandlers = { onDeliver() {}, onSent() {}, onPeerLost() {} };
      const ts = await makeTcpTransports({ processCount: 2, channelCount: 1, handlers: [quiet, receiver], secure });
      try {
        const data = new Uint8Array(BIG);
        const count = 24;
        for (let seq = 0; seq < count; seq++) {
          for (let i = 0; i < BIG; i++) data[i] = byteOf(seq, i);
          // Copied (no sent token): the caller's buffer is rewritten at once for the next frame.
          ts[0]!.send(1, { ...newFrameHeader(), kind: 1, seq }, seq % 3 === 2 ? data.subarray(0, 4096) : data, -1);
          // Most frames one turn apart, more than a turn's reads take: flushes find the socket still
          // writing several batches; some pairs in the same turn.
          if (seq % 4 !== 1) await new Promise((r) => setImmediate(r));
        }
        await waitWhileProgressing(() => receiver.got.length === count, () => receiver.bytes, 'every frame', 20_000);
        expect(receiver.got.map((g) => g.seq)).toEqual([...Array(count).keys()]);
        for (const g of receiver.got) {
          expect(g.payload.length).toBe(g.seq % 3 === 2 ? 4096 : BIG);
          expect(firstWrong(g.seq, g.payload)).toBe(-1);
        }
      } finally {
        for (const t of ts) t.destroy();
      }
    }, 120_000);
  }
});
