/**
 * The dense-datatype path of buffer resolution (buffer.ts denseBytesOf): for every spec it takes,
 * it must give the same bytes as resolveBuf's contiguous alias, and it must decline every spec
 * resolveBuf rejects, so that the error still comes from resolveBuf. Pure: types made before init
 * have no object-table record.
 */
import { describe, expect, it } from 'vitest';
import { Datatype, BYTE, FLOAT64, INT32 } from './datatype.ts';
import { denseBytesOf, resolveBuf, bytesOfBuf, type BufSpec } from './buffer.ts';
import { MPIError } from '../util/index.ts';

const triple = Datatype.contiguous(3, INT32).commit();
const shifted = Datatype.resized(Datatype.hvector(1, 2, 0, INT32), 0, 8).commit(); // dense: one run of 8 bytes
const offset = Datatype.struct([2], [4], [INT32]).commit(); // one run of 8 bytes from byte 4 (trueLb 4), extent 8: dense
const column = Datatype.vector(3, 1, 4, FLOAT64).commit();

function sameAsResolveBuf(spec: BufSpec): void {
  const fast = denseBytesOf(spec);
  const rb = resolveBuf(spec, 'Send', 'buf');
  expect(fast).not.toBeNull();
  expect(rb.contiguous).not.toBeNull();
  expect(fast!.buffer).toBe(rb.contiguous!.buffer);
  expect(fast!.byteOffset).toBe(rb.contiguous!.byteOffset);
  expect(fast!.byteLength).toBe(rb.contiguous!.byteLength);
}

describe('denseBytesOf', () => {
  it('aliases the user memory exactly as resolveBuf does, for counts given and omitted', () => {
    const i32 = new Int32Array(12);
    sameAsResolveBuf([i32, 4, triple]);
    sameAsResolveBuf([i32, 2, triple]);
    sameAsResolveBuf([i32, 0, triple]);
    sameAsResolveBuf([i32, triple]);
    sameAsResolveBuf([new Int32Array(11), triple]); // 3 whole items fit, the rest is left
    sameAsResolveBuf([i32.subarray(1), 3, triple]);
    sameAsResolveBuf([i32, 6, shifted]);
    sameAsResolveBuf([new Uint8Array(10), 4, BYTE]);
    sameAsResolveBuf([new Float64Array(3), FLOAT64]);
    sameAsResolveBuf([new Int32Array(4), 1, offset]);
    sameAsResolveBuf([new Int32Array(6), offset]); // 2 items: the third would end past the view
  });

  it('returns a Uint8Array that holds exactly the items as is, without a new view', () => {
    const u8 = new Uint8Array(12);
    expect(denseBytesOf([u8, 4, Datatype.contiguous(3, BYTE).commit()])).toBe(u8);
    expect(denseBytesOf([new Uint8Array(0), 0, triple])).not.toBeNull();
    expect(bytesOfBuf([u8, 12, BYTE], 'Send', 'buf')).toBe(u8);
  });

  it('declines layouts with gaps, which are packed', () => {
    expect(column._dense).toBeNull();
    expect(denseBytesOf([new Float64Array(12), 1, column])).toBeNull();
    const gap = Datatype.resized(INT32, 0, 8).commit();
    expect(gap._dense).toBeNull();
    expect(denseBytesOf([new Int32Array(4), 2, gap])).toBeNull();
  });

  it('declines every spec resolveBuf rejects, so that its error is thrown', () => {
    const bad: unknown[] = [
      [new Int32Array(5), 2, triple], // too short
      [new Int32Array(6), -1, triple],
      [new Int32Array(6), 1.5, triple],
      [new Int32Array(6), '1', triple],
      [[1, 2, 3], 1, triple],
      [new Int32Array(6), 1, 'INT32'],
      [new Int32Array(6), 1, Datatype.contiguous(2, INT32)], // not committed
      [new Int32Array(6)],
      [new Int32Array(6), 1, 2, triple],
    ];
    for (const spec of bad) {
      expect(denseBytesOf(spec)).toBeNull();
      expect(() => resolveBuf(spec, 'Send', 'buf')).toThrow(MPIError);
    }
  });

  it('declines a freed type', () => {
    const t = Datatype.contiguous(2, INT32).commit();
    const spec: BufSpec = [new Int32Array(2), 1, t];
    expect(denseBytesOf(spec)).not.toBeNull();
    t.free();
    expect(denseBytesOf(spec)).toBeNull();
    expect(() => bytesOfBuf(spec, 'Send', 'buf')).toThrow(/freed/);
  });
});
