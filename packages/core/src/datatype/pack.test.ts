import { describe, expect, it } from 'vitest';
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
import { contiguousView, packedSize, packInto, packRange, packToNew, unpackFrom, unpackRange } from './pack.ts';
import { TYPE_CODES, typeSize } from './predefined.ts';
import { typeInfoOf, typeMapOf } from './type-map.ts';

const INT8 = predefinedDescriptor(TYPE_CODES.INT8);
const INT16 = predefinedDescriptor(TYPE_CODES.INT16);
const INT32 = predefinedDescriptor(TYPE_CODES.INT32);
const FLOAT64 = predefinedDescriptor(TYPE_CODES.FLOAT64);

/** The MPI type map written out entry by entry, straight from the definitions of MPI 3.1 §4.1. */
function naiveTypemap(d: TypeDescriptor): [size: number, disp: number][] {
  const ext = (t: TypeDescriptor): number => typeInfoOf(t).extent;
  const shifted = (t: TypeDescriptor, by: number): [number, number][] => naiveTypemap(t).map(([s, x]) => [s, x + by]);
  const out: [number, number][] = [];
  switch (d.kind) {
    case 'predefined':
      return [[typeSize(d.code), 0]];
    case 'contiguous':
      for (let i = 0; i < d.count; i++) out.push(...shifted(d.base, i * ext(d.base)));
      return out;
    case 'vector':
      for (let i = 0; i < d.count; i++)
        for (let j = 0; j < d.blocklength; j++) out.push(...shifted(d.base, (i * d.stride + j) * ext(d.base)));
      return out;
    case 'hvector':
      for (let i = 0; i < d.count; i++)
        for (let j = 0; j < d.blocklength; j++) out.push(...shifted(d.base, i * d.strideBytes + j * ext(d.base)));
      return out;
    case 'indexed':
      d.blocklengths.forEach((bl, i) => {
        for (let j = 0; j < bl; j++) out.push(...shifted(d.base, (d.displacements[i]! + j) * ext(d.base)));
      });
      return out;
    case 'struct':
      d.types.forEach((t, i) => {
        for (let j = 0; j < d.blocklengths[i]!; j++) out.push(...shifted(t, d.byteDisplacements[i]! + j * ext(t)));
      });
      return out;
    case 'subarray': {
      const n = d.sizes.length;
      const dims = d.order === 'C' ? [...Array(n).keys()] : [...Array(n).keys()].reverse();
      const visit = (k: number, linear: number): void => {
        if (k === n) {
          out.push(...shifted(d.base, linear * ext(d.base)));
          return;
        }
        const dim = dims[k]!;
        let stride = 1;
        for (let q = k + 1; q < n; q++) stride *= d.sizes[dims[q]!]!;
        for (let i = 0; i < d.subsizes[dim]!; i++) visit(k + 1, linear + (d.starts[dim]! + i) * stride);
      };
      visit(0, 0);
      return out;
    }
    case 'resized':
      return naiveTypemap(d.base);
  }
}

function referencePack(user: Uint8Array, count: number, d: TypeDescriptor, origin = 0): Uint8Array {
  const out: number[] = [];
  const e = typeInfoOf(d).extent;
  const entries = naiveTypemap(d);
  for (let k = 0; k < count; k++) for (const [s, x] of entries) for (let b = 0; b < s; b++) out.push(user[origin + k * e + x + b]!);
  return Uint8Array.from(out);
}

function patterned(n: number): Uint8Array {
  const u = new Uint8Array(n);
  for (let i = 0; i < n; i++) u[i] = (i * 37 + 11) & 255;
  return u;
}

const DC = createStruct([1, 1], [0, 8], [FLOAT64, INT8]);

const CASES: [string, TypeDescriptor, number, number][] = [
  // name, type, count, origin (bytes before displacement 0 so negative offsets stay inside)
  ['INT32', INT32, 5, 0],
  ['contiguous', createContiguous(3, INT16), 4, 0],
  ['vector', createVector(3, 2, 5, INT32), 3, 0],
  ['vector of struct', createVector(2, 3, 4, DC), 2, 0],
  ['negative-stride vector', createVector(3, 1, -2, DC), 2, 64],
  ['hvector', createHvector(4, 3, 7, INT8), 3, 0],
  ['hvector of vector', createHvector(2, 1, 100, createVector(3, 1, 2, INT16)), 2, 0],
  ['indexed', createIndexed([3, 1, 0, 2], [4, 0, 9, -2], INT32), 3, 8],
  ['indexed of struct', createIndexed([3, 1], [4, 0], DC), 2, 0],
  ['struct', createStruct([2, 1, 3], [0, 16, 26], [INT32, DC, INT8]), 3, 0],
  ['struct with out-of-order members', createStruct([1, 2], [8, 0], [FLOAT64, INT16]), 3, 0],
  ['subarray C', createSubarray([4, 5], [2, 3], [1, 2], 'C', INT32), 2, 0],
  ['subarray F', createSubarray([4, 5, 3], [2, 3, 2], [1, 2, 0], 'F', INT16), 2, 0],
  ['subarray of struct', createSubarray([3, 3], [2, 2], [1, 0], 'C', DC), 2, 0],
  ['resized', createResized(INT32, -4, 12), 4, 4],
  ['resized struct, tight', createResized(DC, 0, 9), 5, 0],
  ['vector of resized', createVector(3, 2, 3, createResized(INT16, 0, 6)), 2, 0],
  ['empty', createContiguous(0, INT32), 3, 0],
];

describe('pack / unpack against the MPI type-map definition', () => {
  it.each(CASES)('%s', (_name, d, count, origin) => {
    // The engine addresses the user buffer from displacement 0, so a type that
    // reaches below 0 is shifted up by `origin` bytes (same extent, same order).
    const info = typeInfoOf(d);
    const shiftedType = origin === 0 ? d : createResized(createStruct([1], [origin], [d]), info.lb + origin, info.extent);
    const m = typeMapOf(shiftedType);
    expect(m.extent).toBe(info.extent);
    expect(m.trueLb).toBeGreaterThanOrEqual(0);
    const span = (count - 1) * m.extent + m.trueUb + 16;
    const whole = patterned(Math.max(span, 1));
    const user = whole;
    const packed = packToNew(user, count, m);
    expect(packed.length).toBe(packedSize(count, m));
    expect(packed).toEqual(referencePack(user, count, d, origin));

    // packInto at an offset
    const dst = new Uint8Array(packed.length + 5);
    expect(packInto(user, count, m, dst, 5)).toBe(packed.length);
    expect(dst.subarray(5)).toEqual(packed);

    // unpack into a zeroed buffer writes exactly the type's bytes
    const back = new Uint8Array(whole.length);
    unpackFrom(packed, 0, packed.length, m, back);
    expect(packToNew(back, count, m)).toEqual(packed);
    const touched = new Set<number>();
    const e = m.extent;
    for (let k = 0; k < count; k++)
      for (const [s, x] of naiveTypemap(d)) for (let b = 0; b < s; b++) touched.add(origin + k * e + x + b);
    for (let i = 0; i < back.length; i++) expect(back[i]).toBe(touched.has(i) ? whole[i] : 0);

    // chunked pack and unpack in uneven pieces give the same bytes
    const chunks = new Uint8Array(packed.length);
    const again = new Uint8Array(whole.length);
    for (let p = 0; p < packed.length; p += 7) {
      const q = Math.min(packed.length, p + 7);
      packRange(user, m, p, q, chunks, p);
      unpackRange(chunks, p, m, p, q, again);
    }
    expect(chunks).toEqual(packed);
    expect(again).toEqual(back);
  });
});

describe('partial unpack and fast paths', () => {
  it('a short message fills a prefix of the layout, entry by entry', () => {
    const m = typeMapOf(createVector(2, 2, 3, INT16)); // bytes [0,4) and [6,10)
    const dst = new Uint8Array(10);
    unpackFrom(Uint8Array.of(1, 2, 3, 4, 5, 6, 7), 0, 5, m, dst);
    expect(Array.from(dst)).toEqual([1, 2, 3, 4, 0, 0, 5, 0, 0, 0]);
  });
  it('contiguous types give a zero-copy view', () => {
    const user = patterned(64);
    const m = typeMapOf(createContiguous(4, INT32));
    const v = contiguousView(user, 2, m)!;
    expect(v.buffer).toBe(user.buffer);
    expect(v.byteOffset).toBe(0);
    expect(v.length).toBe(32);
    expect(contiguousView(user, 2, typeMapOf(createVector(2, 1, 2, INT32)))).toBeNull();
  });
  it('contiguous view of a resized type starts at its true lower bound', () => {
    const user = patterned(64);
    const m = typeMapOf(createResized(createHvector(1, 1, 0, INT32), -8, 4));
    expect(m.isContiguous).toBe(true);
    const v = contiguousView(user.subarray(8), 3, m)!;
    expect(v.byteOffset).toBe(8);
    expect(v.length).toBe(12);
  });
  it('large blocks take the set() path', () => {
    const d = createVector(3, 20, 30, INT32); // 80-byte blocks
    const user = patterned(400);
    expect(packToNew(user, 1, typeMapOf(d))).toEqual(referencePack(user, 1, d));
  });
  it('a vector with many small blocks', () => {
    const d = createVector(1000, 1, 3, FLOAT64);
    const m = typeMapOf(d);
    expect(m.blockCount).toBe(1000);
    const src = new Float64Array(3000).map((_, i) => i);
    const packed = new Float64Array(packToNew(new Uint8Array(src.buffer), 1, m).buffer);
    expect(packed[999]).toBe(2997);
  });
  it('rejects a destination that is too small', () => {
    expect(() => packInto(new Uint8Array(8), 3, typeMapOf(INT32), new Uint8Array(8))).toThrow(/destination too small/);
    expect(() => unpackFrom(new Uint8Array(2), 0, 4, typeMapOf(INT32), new Uint8Array(8))).toThrow(/source too small/);
  });
});
