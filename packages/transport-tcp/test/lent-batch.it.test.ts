// A channel's batch that the socket still points into (more than the kernel took at once) is lent,
// and taken back as the next batch only once the socket has finished with it (channel-connection.ts
// #lend, spare-batches.ts): over real sockets, copied sends larger than a socket's buffer, queued
// turn after turn while earlier ones are still being written, all arrive byte for byte; and so do
// sends paced as fence epochs are (each queued once the one before it, or the one before that,
// has arrived), which reuse the kept batches while the latest is still lent.
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
  #waiter: { count: number; resolve: () => void } | null = null;
  onDeliver(_src: number, h: FrameHeader, payload: Uint8Array): void {
    this.got.push({ seq: h.seq, payload: this.#pending.get(h.seq) ?? payload.slice() });
    this.#pending.delete(h.seq);
    if (this.#waiter !== null && this.got.length >= this.#waiter.count) {
      this.#waiter.resolve();
      this.#waiter = null;
    }
  }
  /** Resolves once `count` frames have arrived: in the turn the last of them is read. */
  arrived(count: number): Promise<void> {
    if (this.got.length >= count) return Promise.resolve();
    return new Promise((resolve) => (this.#waiter = { count, resolve }));
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

/**
 * Sends `count` copied frames from one transport to another as `pace` says (after queuing frame
 * `seq`, with its content `data` to be rewritten at once), then checks that every frame arrived, in
 * order, byte for byte, `sizeOf(seq)` bytes long.
 */
async function sendAndCheck(secure: boolean, count: number, sizeOf: (seq: number) => number, pace: (seq: number, receiver: Receiver) => Promise<void> | undefined): Promise<void> {
  const receiver = new Receiver();
  const quiet: TransportHandlers = { onDeliver() {}, onSent() {}, onPeerLost() {} };
  const ts = await makeTcpTransports({ processCount: 2, channelCount: 1, handlers: [quiet, receiver], secure });
  try {
    const data = new Uint8Array(BIG);
    for (let seq = 0; seq < count; seq++) {
      for (let i = 0; i < BIG; i++) data[i] = byteOf(seq, i);
      // Copied (no sent token): the caller's buffer is rewritten at once for the next frame.
      ts[0]!.send(1, { ...newFrameHeader(), kind: 1, seq }, data.subarray(0, sizeOf(seq)), -1);
      await pace(seq, receiver);
    }
    await waitWhileProgressing(() => receiver.got.length === count, () => receiver.bytes, 'every frame', 20_000);
    expect(receiver.got.map((g) => g.seq)).toEqual([...Array(count).keys()]);
    for (const g of receiver.got) {
      expect(g.payload.length).toBe(sizeOf(g.seq));
      expect(firstWrong(g.seq, g.payload)).toBe(-1);
    }
  } finally {
    for (const t of ts) t.destroy();
  }
}

describe('a lent batch', () => {
  for (const secure of [false, true]) {
    const tls = secure ? ' (TLS)' : '';
    it(`is reused only after the socket is done with it: large copied sends arrive intact${tls}`, async () => {
      // Most frames one turn apart, more than a turn's reads take: flushes find the socket still
      // writing several batches; some pairs in the same turn.
      await sendAndCheck(secure, 24, (seq) => (seq % 3 === 2 ? 4096 : BIG), (seq) => (seq % 4 !== 1 ? new Promise((r) => setImmediate(r)) : undefined));
    }, 120_000);

    it(`is reused, once written, by sends paced by their arrival: every byte arrives${tls}`, async () => {
      // As a fence's next Put: queued as soon as the frame before (or, every third frame, the one
      // before that) has arrived, often before its write's completion has reached the sender.
      await sendAndCheck(secure, 40, () => BIG, (seq, receiver) => receiver.arrived(seq % 3 === 2 ? seq - 1 : seq + 1));
    }, 120_000);
  }
});
