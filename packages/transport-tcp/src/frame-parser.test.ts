import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '@tsmpi/core/transport';
import { HEADER_BYTES, encodeHeader } from './frame-codec.ts';
import { FrameParser, PARSE_STATUS, type FrameSink } from './frame-parser.ts';

interface Got {
  header: FrameHeader;
  payload: number[];
  isView: boolean;
  isTarget: boolean;
}

class Sink implements FrameSink {
  got: Got[] = [];
  targets = new Map<number, Uint8Array>(); // seq -> target
  asked: number[] = [];
  frameArrived(header: FrameHeader, payload: Uint8Array): void {
    this.got.push({
      header: { ...header },
      payload: Array.from(payload),
      isView: payload.byteOffset > 0 || payload.buffer.byteLength !== payload.length,
      isTarget: this.targets.get(header.seq) === payload,
    });
  }
  frameTarget(header: FrameHeader): Uint8Array | null {
    this.asked.push(header.seq);
    return this.targets.get(header.seq) ?? null;
  }
}

function frame(seq: number, payload: number[], tag = 0): Uint8Array {
  const h = { ...newFrameHeader(), kind: 1, seq, tag };
  const out = new Uint8Array(HEADER_BYTES + payload.length);
  encodeHeader(out, 0, h, payload.length);
  out.set(payload, HEADER_BYTES);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const range = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => (i * 7 + seed) & 255);

describe('frame parser', () => {
  const stream = concat([frame(0, range(5, 1)), frame(1, []), frame(2, range(40, 2), -9), frame(3, []), frame(4, range(1, 3))]);
  const expected = [
    { seq: 0, payload: range(5, 1) },
    { seq: 1, payload: [] },
    { seq: 2, payload: range(40, 2) },
    { seq: 3, payload: [] },
    { seq: 4, payload: range(1, 3) },
  ];

  it('parses many frames from one chunk, payloads as views of the chunk', () => {
    const sink = new Sink();
    const p = new FrameParser(sink, 1 << 20, 1 << 30);
    expect(p.feed(stream)).toBe(PARSE_STATUS.OK);
    expect(sink.got.map((g) => ({ seq: g.header.seq, payload: g.payload }))).toEqual(expected);
    expect(sink.got[2]!.header.tag).toBe(-9);
    expect(sink.got[2]!.isView).toBe(true);
    expect(p.bufferedBytes).toBe(0);
  });

  it('gives the same frames for every split point into two chunks', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const sink = new Sink();
      const p = new FrameParser(sink, 1 << 20, 1 << 30);
      p.feed(stream.subarray(0, cut));
      p.feed(stream.subarray(cut));
      expect(sink.got.map((g) => ({ seq: g.header.seq, payload: g.payload })), `cut at ${cut}`).toEqual(expected);
    }
  });

  it('gives the same frames for every pair of split points into three chunks', () => {
    for (let a = 0; a <= stream.length; a++) {
      for (let b = a; b <= stream.length; b++) {
        const sink = new Sink();
        const p = new FrameParser(sink, 1 << 20, 1 << 30);
        p.feed(stream.subarray(0, a));
        p.feed(stream.subarray(a, b));
        p.feed(stream.subarray(b));
        const seqs = sink.got.map((g) => g.header.seq).join(',');
        if (seqs !== '0,1,2,3,4') expect(seqs, `cuts ${a},${b}`).toBe('0,1,2,3,4');
        expect(sink.got[2]!.payload).toEqual(range(40, 2));
      }
    }
  });

  it('parses a stream fed one byte at a time', () => {
    const sink = new Sink();
    const p = new FrameParser(sink, 1 << 20, 1 << 30);
    for (let i = 0; i < stream.length; i++) p.feed(stream.subarray(i, i + 1));
    expect(sink.got.map((g) => ({ seq: g.header.seq, payload: g.payload }))).toEqual(expected);
  });

  it('receives a split payload into the sink target when it has the right size', () => {
    const sink = new Sink();
    const target = new Uint8Array(40);
    sink.targets.set(2, target);
    sink.targets.set(0, new Uint8Array(3)); // wrong size: ignored
    const p = new FrameParser(sink, 1 << 20, 1 << 30);
    const cut = HEADER_BYTES * 3 + 5 + 10; // inside frame 2's payload
    p.feed(stream.subarray(0, cut));
    expect(p.bufferedBytes).toBe(HEADER_BYTES + 10);
    p.feed(stream.subarray(cut));
    expect(sink.got[2]!.isTarget).toBe(true);
    expect(Array.from(target)).toEqual(range(40, 2));
    expect(sink.asked).toEqual([2]); // only the payload that spanned chunks
  });

  it('offers payloads of at least targetMinBytes to the target even inside one chunk', () => {
    const sink = new Sink();
    const target = new Uint8Array(40);
    sink.targets.set(2, target);
    const p = new FrameParser(sink, 32, 1 << 30);
    p.feed(stream);
    expect(sink.asked).toEqual([2]);
    expect(sink.got[2]!.isTarget).toBe(true);
    expect(Array.from(target)).toEqual(range(40, 2));
  });

  it('offers the unfilled rest of a spanning payload, and takes bytes written there in place', () => {
    const sink = new Sink();
    const target = new Uint8Array(40);
    sink.targets.set(2, target);
    const p = new FrameParser(sink, 1 << 20, 1 << 30);
    const at2 = HEADER_BYTES * 2 + 5; // frame 2's header
    expect(p.unfilledTarget(1)).toBeNull(); // between frames
    p.feed(stream.subarray(0, at2 + HEADER_BYTES + 10));
    expect(p.unfilledTarget(31)).toBeNull(); // 30 bytes left: below the minimum
    const rest = p.unfilledTarget(30)!;
    expect(rest.buffer).toBe(target.buffer);
    expect([rest.byteOffset, rest.length]).toEqual([10, 30]);
    // A socket reads 20 bytes straight into it; the parser must neither move nor lose them.
    rest.set(stream.subarray(at2 + HEADER_BYTES + 10, at2 + HEADER_BYTES + 30));
    p.feed(rest.subarray(0, 20));
    expect(p.unfilledTarget(1)!.byteOffset).toBe(30);
    p.feed(stream.subarray(at2 + HEADER_BYTES + 30));
    expect(sink.got.map((g) => g.header.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(sink.got[2]!.isTarget).toBe(true);
    expect(Array.from(target)).toEqual(range(40, 2));
    expect(p.unfilledTarget(1)).toBeNull();
  });

  it('assembles a large payload spread over many chunks', () => {
    const big = range(100_000, 4);
    const s = concat([frame(7, big), frame(8, [1])]);
    const sink = new Sink();
    const p = new FrameParser(sink, 1 << 20, 1 << 30);
    for (let at = 0; at < s.length; at += 4093) p.feed(s.subarray(at, at + 4093));
    expect(sink.got.map((g) => g.header.seq)).toEqual([7, 8]);
    expect(sink.got[0]!.payload).toEqual(big);
  });

  it('reports TOO_LARGE for an impossible payload length and stops', () => {
    const sink = new Sink();
    const p = new FrameParser(sink, 1 << 20, 16);
    expect(p.feed(concat([frame(0, [1]), frame(1, range(17, 0)), frame(2, [])]))).toBe(PARSE_STATUS.TOO_LARGE);
    expect(sink.got.map((g) => g.header.seq)).toEqual([0]);
    expect(p.feed(frame(3, []))).toBe(PARSE_STATUS.OK);
    expect(sink.got.length).toBe(1);
  });

  it('stops in the middle of a chunk when the sink calls stop()', () => {
    const sink = new Sink();
    const p = new FrameParser(sink, 1 << 20, 1 << 30);
    sink.frameArrived = function (h) {
      this.got.push({ header: { ...h }, payload: [], isView: false, isTarget: false });
      p.stop();
    };
    p.feed(stream);
    expect(sink.got.length).toBe(1);
  });

  it('refuses a payload above maxUnsolicitedBytes that was not asked for, before allocating it, split anywhere', () => {
    // A header announcing 4 GiB - 1 bytes, then a few of them: the parser must stop at the header.
    const huge = new Uint8Array(HEADER_BYTES + 8);
    encodeHeader(huge, 0, { ...newFrameHeader(), kind: 1, seq: 9 }, 0xffff_ffff);
    const s = concat([frame(0, range(100, 1)), huge]);
    for (const step of [1, 7, HEADER_BYTES, s.length]) {
      const sink = new Sink();
      const p = new FrameParser(sink, 64, 0xffff_ffff, 100);
      let status: number = PARSE_STATUS.OK;
      for (let at = 0; at < s.length && status === PARSE_STATUS.OK; at += step) status = p.feed(s.subarray(at, at + step));
      expect(status).toBe(PARSE_STATUS.UNSOLICITED);
      expect(p.header.seq).toBe(9);
      expect(p.header.payloadLength).toBe(0xffff_ffff);
      expect(sink.got.map((g) => g.header.seq)).toEqual([0]); // the frame at the limit passed
      expect(p.bufferedBytes).toBe(0);
      expect(p.feed(frame(3, []))).toBe(PARSE_STATUS.OK); // stopped: nothing more is delivered
      expect(sink.got.length).toBe(1);
    }
  });

  it('takes a payload above maxUnsolicitedBytes into the array frameTarget supplies, also when whole in one chunk', () => {
    const sink = new Sink();
    const target = new Uint8Array(500);
    sink.targets.set(5, target);
    const p = new FrameParser(sink, 1 << 20, 0xffff_ffff, 100);
    expect(p.feed(concat([frame(4, range(100, 2)), frame(5, range(500, 3)), frame(6, [])]))).toBe(PARSE_STATUS.OK);
    expect(sink.got.map((g) => g.header.seq)).toEqual([4, 5, 6]);
    expect(sink.got[1]!.isTarget).toBe(true);
    expect(sink.got[1]!.payload).toEqual(range(500, 3));
    // A target of the wrong length counts as none.
    sink.targets.set(7, new Uint8Array(499));
    expect(p.feed(frame(7, range(500, 3)))).toBe(PARSE_STATUS.UNSOLICITED);
  });

  it('offers whole plain EAGER frames to the eager hook first, as numbers; declined, split, targeted or other frames go to frameArrived, in stream order', () => {
    // The hook takes the frames of odd tag; frames here have tag = seq, context 9, source 3, destination 4.
    const sink = new Sink();
    const order: string[] = [];
    const taken: { tag: number; fields: number[]; payload: number[] }[] = [];
    const frameArrived = sink.frameArrived.bind(sink);
    sink.frameArrived = (h, payload) => {
      order.push(`arrived ${h.seq}`);
      frameArrived(h, payload);
    };
    const eager = (ctx: number, src: number, dst: number, tag: number, bytes: Uint8Array, start: number, end: number): boolean => {
      if (tag % 2 === 0) return false;
      order.push(`eager ${tag}`);
      taken.push({ tag, fields: [ctx, src, dst], payload: Array.from(bytes.subarray(start, end)) });
      return true;
    };
    const f = (seq: number, payload: number[], kind = 1, flags = 0): Uint8Array => {
      const h = { ...newFrameHeader(), kind, flags, seq, tag: seq, contextId: 9, srcEndpoint: 3, dstEndpoint: 4 };
      const out = new Uint8Array(HEADER_BYTES + payload.length);
      encodeHeader(out, 0, h, payload.length);
      out.set(payload, HEADER_BYTES);
      return out;
    };
    const p = new FrameParser(sink, 64, 1 << 20, 1 << 20, eager);
    const whole = concat([f(0, range(5, 1)), f(1, range(3, 2)), f(2, []), f(3, []), f(5, range(80, 4)), f(7, [1], 2), f(9, [1], 1, 1)]);
    expect(p.feed(whole)).toBe(PARSE_STATUS.OK);
    // seq 5's payload reaches targetMinBytes: it is offered to frameTarget, never to the hook; 7 (EAGER_SYNC) and 9 (flags) are not plain EAGER.
    expect(order).toEqual(['arrived 0', 'eager 1', 'arrived 2', 'eager 3', 'arrived 5', 'arrived 7', 'arrived 9']);
    expect(taken).toEqual([{ tag: 1, fields: [9, 3, 4], payload: range(3, 2) }, { tag: 3, fields: [9, 3, 4], payload: [] }]);
    // A frame split over two chunks is never offered to the hook.
    order.length = 0;
    const split = f(11, range(6, 5));
    expect(p.feed(split.subarray(0, 35))).toBe(PARSE_STATUS.OK);
    expect(p.feed(split.subarray(35))).toBe(PARSE_STATUS.OK);
    expect(order).toEqual(['arrived 11']);
    expect(sink.got.at(-1)!.payload).toEqual(range(6, 5));
  });
});
