// Views flattened into byte runs (view-map.ts) and the external32 swap (external32.ts), against
// hand-computed layouts: a vector, a 2-D subarray, a struct with a gap, the linear byte view.
import { describe, expect, it } from 'vitest';
import { TYPE_CODES, createStruct, createSubarray, createVector, predefinedDescriptor, typeMapOf } from '../datatype/index.ts';
import { swapPacked } from './external32.ts';
import { byteViewMap, fileByteOf, makeViewMap, runsOf } from './view-map.ts';

const I32 = predefinedDescriptor(TYPE_CODES.INT32);
const F64 = predefinedDescriptor(TYPE_CODES.FLOAT64);

describe('makeViewMap / runsOf', () => {
  it('the byte view is linear: one run at disp + position', () => {
    const v = byteViewMap();
    expect(runsOf(v, 10, 1000)).toEqual({ offsets: [10], lengths: [1000] });
    expect(fileByteOf(v, 7)).toBe(7);
  });

  it('a contiguous filetype tiles into one run, whatever the etype', () => {
    const v = makeViewMap(100, 4, typeMapOf(I32));
    expect(v.isLinear).toBe(true);
    expect(runsOf(v, 8, 40)).toEqual({ offsets: [108], lengths: [40] });
  });

  it('a vector filetype: blocks of 2 INT32 every 5, tiled by its extent', () => {
    // vector(2, 2, 5): blocks at 0 and 20 bytes, 8 bytes each; extent 28 (ends after the second block)
    const v = makeViewMap(4, 4, typeMapOf(createVector(2, 2, 5, I32)));
    expect(v.tileSize).toBe(16);
    expect(v.tileExtent).toBe(28);
    // data 4..36: rest of block 0 of tile 0 (8..12), block 1 (24..32) touching tile 1's block 0 (tile 1 starts at
    // 4 + 28 = 32: 32..40), tile 1's block 1 (52..60) touching tile 2's block 0 (60..64)
    expect(runsOf(v, 4, 32)).toEqual({ offsets: [8, 24, 52], lengths: [4, 16, 12] });
    expect(fileByteOf(v, 16)).toBe(32);
    expect(fileByteOf(v, 20)).toBe(36);
  });

  it('a 2-D subarray: one run per row of the tile', () => {
    // 4 x 6 FLOAT64, the 2 x 3 block at (1, 2)
    const v = makeViewMap(0, 8, typeMapOf(createSubarray([4, 6], [2, 3], [1, 2], 'C', F64)));
    expect(runsOf(v, 0, 48)).toEqual({ offsets: [64, 112], lengths: [24, 24] });
    // the second tile starts one whole array (192 bytes) later
    expect(runsOf(v, 48, 8)).toEqual({ offsets: [192 + 64], lengths: [8] });
    expect(fileByteOf(v, 24)).toBe(112);
  });

  it('a struct with a gap keeps the gap', () => {
    const v = makeViewMap(0, 1, typeMapOf(createStruct([1, 1], [0, 16], [I32, F64])));
    expect(runsOf(v, 0, 12)).toEqual({ offsets: [0, 16], lengths: [4, 8] });
    expect(runsOf(v, 2, 0)).toEqual({ offsets: [], lengths: [] });
  });
});

describe('swapPacked (external32)', () => {
  it('swaps each element by its size and is its own inverse', () => {
    const map = typeMapOf(createStruct([1, 1, 1], [0, 4, 8], [I32, predefinedDescriptor(TYPE_CODES.INT16), F64]));
    const bytes = Uint8Array.from({ length: 14 }, (_, i) => i);
    swapPacked(bytes, 1, map);
    expect(Array.from(bytes)).toEqual([3, 2, 1, 0, 5, 4, 13, 12, 11, 10, 9, 8, 7, 6]);
    swapPacked(bytes, 1, map);
    expect(Array.from(bytes)).toEqual(Array.from({ length: 14 }, (_, i) => i));
  });

  it('a uniform type swaps the whole stream at once', () => {
    const values = Int32Array.of(0x01020304, -2);
    const bytes = new Uint8Array(values.buffer.slice(0));
    swapPacked(bytes, 2, typeMapOf(I32));
    const dv = new DataView(bytes.buffer);
    expect([dv.getInt32(0, false), dv.getInt32(4, false)]).toEqual([0x01020304, -2]);
  });
});
