import { describe, expect, it } from 'vitest';
import { newFrameHeader } from '@tsmpi/core/transport';
import { HEADER_BYTES, decodeHeader, encodeHeader, readPayloadLength } from './frame-codec.ts';

describe('frame codec', () => {
  it('writes the documented little-endian layout', () => {
    const buf = new Uint8Array(HEADER_BYTES + 2).fill(0xee);
    encodeHeader(buf, 1, {
      kind: 4, flags: 2, contextId: 0x1234, srcEndpoint: 0x01020304, dstEndpoint: 0xa0b0c0d0, tag: -2,
      seq: 5, aux: 0xdeadbeef, aux2: 0x7fffffff, payloadLength: 999,
    }, 0x00010203);
    expect(Array.from(buf)).toEqual([
      0xee,
      4, 2, 0x34, 0x12,
      0x04, 0x03, 0x02, 0x01,
      0xd0, 0xc0, 0xb0, 0xa0,
      0xfe, 0xff, 0xff, 0xff,
      5, 0, 0, 0,
      0xef, 0xbe, 0xad, 0xde,
      0xff, 0xff, 0xff, 0x7f,
      0x03, 0x02, 0x01, 0x00, // the payloadLength argument, not h.payloadLength
      0xee,
    ]);
  });

  it('round-trips extreme values into a reused header', () => {
    const buf = new Uint8Array(HEADER_BYTES);
    const out = { ...newFrameHeader(), aux: 77 };
    const cases = [
      { kind: 255, flags: 255, contextId: 0xffff, srcEndpoint: 0xffffffff, dstEndpoint: 0, tag: -2147483648, seq: 0xffffffff, aux: 0, aux2: 1, payloadLength: 0xffffffff },
      { kind: 0, flags: 0, contextId: 0, srcEndpoint: 0, dstEndpoint: 0xffffffff, tag: 2147483647, seq: 0, aux: 0x80000000, aux2: 0, payloadLength: 0 },
    ];
    for (const h of cases) {
      encodeHeader(buf, 0, h, h.payloadLength);
      decodeHeader(buf, 0, out);
      expect(out).toEqual(h);
      expect(readPayloadLength(buf, 0)).toBe(h.payloadLength);
    }
  });
});
