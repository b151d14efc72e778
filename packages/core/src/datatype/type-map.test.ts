import { describe, expect, it } from 'vitest';
import { ERR_ARG } from '../util/index.ts';
import {
  createContiguous,
  createHvector,
  createIndexed,
  createResized,
  createStruct,
  createSubarray,
  createVector,
  predefinedDescriptor,
  type TypeDescriptor,
} from './descriptor.ts';
import { ALL_TYPE_CODES, TYPE_CODES, typeSize } from './predefined.ts';
import { typeInfoOf, typeMapOf, type TypeMap } from './type-map.ts';

const INT8 = predefinedDescriptor(TYPE_CODES.INT8);
const INT32 = predefinedDescriptor(TYPE_CODES.INT32);
const FLOAT32 = predefinedDescriptor(TYPE_CODES.FLOAT32);
const FLOAT64 = predefinedDescriptor(TYPE_CODES.FLOAT64);
/** The MPI 3.1 §4.1 running example: {(double, 0), (char, 8)}, extent 16. */
const DC = createStruct([1, 1], [0, 8], [FLOAT64, INT8]);

function bounds(d: TypeDescriptor): Record<string, number> {
  const m = typeInfoOf(d);
  return { size: m.size, extent: m.extent, lb: m.lb, ub: m.ub, trueLb: m.trueLb, trueUb: m.trueUb };
}

function blocks(m: TypeMap): [number, number][] {
  return Array.from(m.blockOffsets, (o, j) => [o, m.blockLengths[j]!]);
}

describe('predefined types', () => {
  it.each(ALL_TYPE_CODES)('code %i has size = extent = its element size, lb 0', (code) => {
    const d = predefinedDescriptor(code);
    const m = typeMapOf(d);
    const s = typeSize(code);
    expect(bounds(d)).toEqual({ size: s, extent: s, lb: 0, ub: s, trueLb: 0, trueUb: s });
    expect(m.typeCode).toBe(code);
    expect(m.isContiguous).toBe(true);
    expect(m.elementCount).toBe(1);
    expect(m.alignment).toBe(s);
    expect(Array.from(m.blockTypes)).toEqual([code]);
  });
});

describe('contiguous', () => {
  it('merges into one block', () => {
    const d = createContiguous(3, INT32);
    expect(bounds(d)).toEqual({ size: 12, extent: 12, lb: 0, ub: 12, trueLb: 0, trueUb: 12 });
    expect(blocks(typeMapOf(d))).toEqual([[0, 12]]);
    expect(typeMapOf(d).typeCode).toBe(TYPE_CODES.INT32);
    expect(typeMapOf(d).elementCount).toBe(3);
  });
  it('MPI example: contiguous(3) of {(double,0),(char,8)}', () => {
    const d = createContiguous(3, DC);
    expect(bounds(d)).toEqual({ size: 27, extent: 48, lb: 0, ub: 48, trueLb: 0, trueUb: 41 });
    const m = typeMapOf(d);
    expect(blocks(m)).toEqual([[0, 8], [8, 1], [16, 8], [24, 1], [32, 8], [40, 1]]);
    expect(Array.from(m.blockTypes)).toEqual([10, 1, 10, 1, 10, 1]);
    expect(m.typeCode).toBeNull();
    expect(m.isContiguous).toBe(false);
  });
  it('count 0 is empty but keeps its element type', () => {
    const d = createContiguous(0, INT32);
    expect(bounds(d)).toEqual({ size: 0, extent: 0, lb: 0, ub: 0, trueLb: 0, trueUb: 0 });
    expect(typeMapOf(d).typeCode).toBe(TYPE_CODES.INT32);
    expect(typeMapOf(d).blockCount).toBe(0);
    expect(typeMapOf(d).isContiguous).toBe(true);
  });
});

describe('vector and hvector', () => {
  it('vector(2, 3, 4, INT32)', () => {
    const d = createVector(2, 3, 4, INT32);
    expect(bounds(d)).toEqual({ size: 24, extent: 28, lb: 0, ub: 28, trueLb: 0, trueUb: 28 });
    expect(blocks(typeMapOf(d))).toEqual([[0, 12], [16, 12]]);
  });
  it('MPI example: vector(2, 3, 4) of {(double,0),(char,8)}', () => {
    const d = createVector(2, 3, 4, DC);
    // entries up to (char, 104); the base extent 16 carries the struct padding
    expect(bounds(d)).toEqual({ size: 54, extent: 112, lb: 0, ub: 112, trueLb: 0, trueUb: 105 });
    expect(typeMapOf(d).blockCount).toBe(12);
  });
  it('MPI example: vector(3, 1, -2) of {(double,0),(char,8)} (negative stride)', () => {
    const d = createVector(3, 1, -2, DC);
    expect(bounds(d)).toEqual({ size: 27, extent: 80, lb: -64, ub: 16, trueLb: -64, trueUb: 9 });
    expect(blocks(typeMapOf(d))).toEqual([[0, 8], [8, 1], [-32, 8], [-24, 1], [-64, 8], [-56, 1]]);
  });
  it('stride equal to blocklength merges into one contiguous block', () => {
    const m = typeMapOf(createVector(3, 2, 2, INT32));
    expect(blocks(m)).toEqual([[0, 24]]);
    expect(m.isContiguous).toBe(true);
  });
  it('stride 0 repeats the same block', () => {
    const d = createVector(3, 1, 0, INT32);
    expect(bounds(d)).toEqual({ size: 12, extent: 4, lb: 0, ub: 4, trueLb: 0, trueUb: 4 });
    expect(blocks(typeMapOf(d))).toEqual([[0, 4], [0, 4], [0, 4]]);
  });
  it('hvector does not pad: hvector(2, 1, 12, FLOAT64) has extent 20', () => {
    const d = createHvector(2, 1, 12, FLOAT64);
    expect(bounds(d)).toEqual({ size: 16, extent: 20, lb: 0, ub: 20, trueLb: 0, trueUb: 20 });
  });
  it('hvector with a negative byte stride', () => {
    const d = createHvector(3, 2, -10, INT32);
    expect(bounds(d)).toEqual({ size: 24, extent: 28, lb: -20, ub: 8, trueLb: -20, trueUb: 8 });
    expect(blocks(typeMapOf(d))).toEqual([[0, 8], [-10, 8], [-20, 8]]);
  });
  it('count 0 or blocklength 0 is empty', () => {
    expect(bounds(createVector(0, 3, 4, INT32)).extent).toBe(0);
    expect(bounds(createVector(3, 0, 4, INT32)).size).toBe(0);
  });
});

describe('indexed', () => {
  it('MPI example: indexed([3, 1], [4, 0]) of {(double,0),(char,8)}', () => {
    const d = createIndexed([3, 1], [4, 0], DC);
    expect(bounds(d)).toEqual({ size: 36, extent: 112, lb: 0, ub: 112, trueLb: 0, trueUb: 105 });
    // type-map order: the block at displacement 4 comes first
    expect(blocks(typeMapOf(d))).toEqual([[64, 8], [72, 1], [80, 8], [88, 1], [96, 8], [104, 1], [0, 8], [8, 1]]);
  });
  it('negative displacements and empty blocks', () => {
    const d = createIndexed([2, 0, 1], [-3, 100, 5], INT32);
    expect(bounds(d)).toEqual({ size: 12, extent: 36, lb: -12, ub: 24, trueLb: -12, trueUb: 24 });
    expect(blocks(typeMapOf(d))).toEqual([[-12, 8], [20, 4]]);
  });
  it('does not pad like struct does', () => {
    const d = createIndexed([1], [0], createHvector(2, 1, 12, FLOAT64));
    expect(bounds(d).extent).toBe(20);
  });
  it('merges adjacent blocks', () => {
    expect(blocks(typeMapOf(createIndexed([2, 3], [0, 2], INT8)))).toEqual([[0, 5]]);
  });
});

describe('struct', () => {
  it('the running example {(double,0),(char,8)}: size 9, extent 16 (alignment epsilon)', () => {
    expect(bounds(DC)).toEqual({ size: 9, extent: 16, lb: 0, ub: 16, trueLb: 0, trueUb: 9 });
    expect(typeInfoOf(DC).alignment).toBe(8);
    expect(typeInfoOf(DC).elementCount).toBe(2);
  });
  it('MPI example: struct([2, 1, 3], [0, 16, 26], [float, Type1, char])', () => {
    const d = createStruct([2, 1, 3], [0, 16, 26], [FLOAT32, DC, INT8]);
    expect(bounds(d)).toEqual({ size: 20, extent: 32, lb: 0, ub: 32, trueLb: 0, trueUb: 29 });
    const m = typeMapOf(d);
    expect(blocks(m)).toEqual([[0, 8], [16, 8], [24, 1], [26, 3]]);
    expect(Array.from(m.blockTypes)).toEqual([9, 10, 1, 1]);
    expect(m.typeCode).toBeNull();
    expect(m.elementCount).toBe(7);
  });
  it('a homogeneous struct keeps its element type', () => {
    const d = createStruct([1, 2], [8, 0], [INT32, INT32]);
    const m = typeMapOf(d);
    expect(m.typeCode).toBe(TYPE_CODES.INT32);
    expect(bounds(d)).toEqual({ size: 12, extent: 12, lb: 0, ub: 12, trueLb: 0, trueUb: 12 });
    expect(blocks(m)).toEqual([[8, 4], [0, 8]]);
    expect(m.isContiguous).toBe(false); // out of order: packing reorders
  });
  it('adjacent members of different types are contiguous but kept as separate blocks', () => {
    const m = typeMapOf(createStruct([1, 1], [0, 4], [INT32, FLOAT32]));
    expect(m.blockCount).toBe(2);
    expect(m.isContiguous).toBe(true);
  });
  it('negative displacements and padding relative to lb', () => {
    const d = createStruct([1, 1], [-8, 4], [FLOAT64, INT8]);
    // entries [-8, 0) and [4, 5): lb -8, ub 5 -> extent 13 padded to 16
    expect(bounds(d)).toEqual({ size: 9, extent: 16, lb: -8, ub: 8, trueLb: -8, trueUb: 5 });
  });
  it('zero-length members contribute nothing', () => {
    const d = createStruct([0, 1], [1000, 4], [FLOAT64, INT32]);
    expect(bounds(d)).toEqual({ size: 4, extent: 4, lb: 4, ub: 8, trueLb: 4, trueUb: 8 });
    expect(typeInfoOf(d).alignment).toBe(4);
  });
  it('no members is empty', () => {
    const d = createStruct([], [], []);
    expect(bounds(d)).toEqual({ size: 0, extent: 0, lb: 0, ub: 0, trueLb: 0, trueUb: 0 });
    expect(typeInfoOf(d).typeCode).toBeNull();
  });
  it('explicit markers of a resized member win over other entries (§4.1.7)', () => {
    const d = createStruct([1, 1], [0, 100], [createResized(INT32, 0, 8), INT32]);
    expect(bounds(d)).toEqual({ size: 8, extent: 8, lb: 0, ub: 8, trueLb: 0, trueUb: 104 });
    expect(typeInfoOf(d).hasUbMarker).toBe(true);
  });
});

describe('resized', () => {
  it('resized(INT32, -4, 12) and contiguous(2) of it', () => {
    const r = createResized(INT32, -4, 12);
    expect(bounds(r)).toEqual({ size: 4, extent: 12, lb: -4, ub: 8, trueLb: 0, trueUb: 4 });
    const d = createContiguous(2, r);
    expect(bounds(d)).toEqual({ size: 8, extent: 24, lb: -4, ub: 20, trueLb: 0, trueUb: 16 });
    expect(blocks(typeMapOf(d))).toEqual([[0, 4], [12, 4]]);
  });
  it('shrinking the extent of the running example to 9 packs it tightly', () => {
    const r = createResized(DC, 0, 9);
    expect(bounds(createContiguous(2, r))).toEqual({ size: 18, extent: 18, lb: 0, ub: 18, trueLb: 0, trueUb: 18 });
    expect(typeMapOf(createContiguous(2, r)).isContiguous).toBe(true);
  });
  it('erases the old markers', () => {
    const r = createResized(createResized(INT32, -100, 500), 0, 4);
    expect(bounds(r)).toEqual({ size: 4, extent: 4, lb: 0, ub: 4, trueLb: 0, trueUb: 4 });
  });
  it('a resized empty type still has bounds', () => {
    const d = createResized(createContiguous(0, INT32), 0, 8);
    expect(bounds(d)).toEqual({ size: 0, extent: 8, lb: 0, ub: 8, trueLb: 0, trueUb: 0 });
    expect(bounds(createContiguous(3, d)).extent).toBe(24);
  });
});

describe('subarray', () => {
  it("C order: 2x3 block at (1, 2) of a 4x5 INT32 array", () => {
    const d = createSubarray([4, 5], [2, 3], [1, 2], 'C', INT32);
    expect(bounds(d)).toEqual({ size: 24, extent: 80, lb: 0, ub: 80, trueLb: 28, trueUb: 60 });
    expect(blocks(typeMapOf(d))).toEqual([[28, 12], [48, 12]]);
  });
  it("F order: the same block, column-major", () => {
    const d = createSubarray([4, 5], [2, 3], [1, 2], 'F', INT32);
    expect(bounds(d)).toEqual({ size: 24, extent: 80, lb: 0, ub: 80, trueLb: 36, trueUb: 76 });
    expect(blocks(typeMapOf(d))).toEqual([[36, 8], [52, 8], [68, 8]]);
  });
  it('3-d C order', () => {
    const d = createSubarray([2, 3, 4], [1, 2, 2], [1, 1, 2], 'C', INT32);
    expect(blocks(typeMapOf(d))).toEqual([[72, 8], [88, 8]]);
    expect(bounds(d).extent).toBe(96);
  });
  it('1-d and full subarrays are contiguous', () => {
    expect(blocks(typeMapOf(createSubarray([10], [4], [3], 'C', INT8)))).toEqual([[3, 4]]);
    const full = typeMapOf(createSubarray([3, 4], [3, 4], [0, 0], 'F', FLOAT64));
    expect(full.isContiguous).toBe(true);
    expect(full.size).toBe(96);
  });
  it('a subsize of 0 is empty with the full extent', () => {
    const d = createSubarray([4, 5], [0, 3], [4, 2], 'C', INT32);
    expect(bounds(d)).toEqual({ size: 0, extent: 80, lb: 0, ub: 80, trueLb: 0, trueUb: 0 });
    expect(typeMapOf(d).blockCount).toBe(0);
  });
  it('subarray of a derived base', () => {
    const d = createSubarray([3], [2], [1], 'C', DC);
    expect(bounds(d)).toEqual({ size: 18, extent: 48, lb: 0, ub: 48, trueLb: 16, trueUb: 41 });
  });
});

describe('limits and caching', () => {
  it('a layout beyond 2**53 bytes is ERR_ARG', () => {
    const d = createContiguous(2 ** 30, createContiguous(2 ** 30, FLOAT64));
    expect(() => typeInfoOf(d)).toThrow(expect.objectContaining({ errorClass: ERR_ARG, call: 'Datatype.contiguous' }));
  });
  it('caches per descriptor object', () => {
    const d = createVector(2, 1, 3, INT32);
    expect(typeMapOf(d)).toBe(typeMapOf(d));
    expect(typeInfoOf(d)).toBe(typeInfoOf(d));
    expect(Object.isFrozen(typeMapOf(d))).toBe(true);
  });
  it('prefix sums of block lengths', () => {
    const m = typeMapOf(createVector(3, 1, 2, INT32));
    expect(Array.from(m.blockPackedStarts)).toEqual([0, 4, 8, 12]);
  });
});
