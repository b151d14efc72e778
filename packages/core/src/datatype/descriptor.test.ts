import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_COUNT, ERR_INTERN, ERR_TYPE } from '../util/index.ts';
import { decodeDescriptor, encodeDescriptor } from './descriptor-codec.ts';
import {
  createContiguous,
  createHvector,
  createIndexed,
  createResized,
  createStruct,
  createSubarray,
  createVector,
  descriptorToString,
  predefinedDescriptor,
  type TypeDescriptor,
} from './descriptor.ts';
import { ALL_TYPE_CODES, TYPE_CODES } from './predefined.ts';
import { typeMapOf } from './type-map.ts';

const INT32 = predefinedDescriptor(TYPE_CODES.INT32);
const FLOAT64 = predefinedDescriptor(TYPE_CODES.FLOAT64);

function mpiErr(errorClass: number, call: string): unknown {
  return expect.objectContaining({ errorClass, call });
}

describe('constructor argument checks', () => {
  const bad = (f: () => unknown, errorClass: number, call: string, text?: RegExp): void => {
    let err: unknown;
    try {
      f();
    } catch (e) {
      err = e;
    }
    expect(err).toEqual(mpiErr(errorClass, call));
    if (text !== undefined) expect((err as Error).message).toMatch(text);
  };
  it('contiguous', () => {
    bad(() => createContiguous(-1, INT32), ERR_COUNT, 'Datatype.contiguous', /count must be an integer >= 0, got -1/);
    bad(() => createContiguous(1.5, INT32), ERR_COUNT, 'Datatype.contiguous');
    bad(() => createContiguous(2, null as unknown as TypeDescriptor), ERR_TYPE, 'Datatype.contiguous', /base must be a datatype/);
  });
  it('vector and hvector', () => {
    bad(() => createVector(-1, 1, 1, INT32), ERR_COUNT, 'Datatype.vector');
    bad(() => createVector(1, -1, 1, INT32), ERR_ARG, 'Datatype.vector', /blocklength/);
    bad(() => createVector(1, 1, 0.5, INT32), ERR_ARG, 'Datatype.vector', /stride must be an integer/);
    bad(() => createHvector(1, 1, Number.NaN, INT32), ERR_ARG, 'Datatype.hvector', /strideBytes/);
    bad(() => createHvector(1, 1, 1, {} as TypeDescriptor), ERR_TYPE, 'Datatype.hvector');
    expect(createVector(2, 1, -3, INT32).stride).toBe(-3);
  });
  it('indexed', () => {
    bad(() => createIndexed([1, 2], [0], INT32), ERR_ARG, 'Datatype.indexed', /displacements has 1 entries but blocklengths has 2/);
    bad(() => createIndexed([1, -2], [0, 1], INT32), ERR_ARG, 'Datatype.indexed', /blocklengths\[1\]/);
    bad(() => createIndexed([1], ['0' as unknown as number], INT32), ERR_ARG, 'Datatype.indexed', /displacements\[0\] must be an integer, got "0"/);
    bad(() => createIndexed(5 as unknown as number[], [], INT32), ERR_ARG, 'Datatype.indexed', /must be an array/);
  });
  it('struct', () => {
    bad(() => createStruct([1], [0, 4], [INT32]), ERR_ARG, 'Datatype.struct');
    bad(() => createStruct([1], [0], []), ERR_ARG, 'Datatype.struct', /types has 0 entries/);
    bad(() => createStruct([1], [0], [undefined as unknown as TypeDescriptor]), ERR_TYPE, 'Datatype.struct', /types\[0\]/);
  });
  it('subarray', () => {
    const call = 'Datatype.subarray';
    bad(() => createSubarray([], [], [], 'C', INT32), ERR_ARG, call, /at least one dimension/);
    bad(() => createSubarray([4], [2, 2], [0], 'C', INT32), ERR_ARG, call);
    bad(() => createSubarray([0], [0], [0], 'C', INT32), ERR_ARG, call, /sizes\[0\] must be >= 1/);
    bad(() => createSubarray([4], [5], [0], 'C', INT32), ERR_ARG, call, /subsizes\[0\] must be in 0..4/);
    bad(() => createSubarray([4, 4], [2, 2], [0, 3], 'C', INT32), ERR_ARG, call, /starts\[1\] must be in 0..2/);
    bad(() => createSubarray([4], [2], [0], 'X' as 'C', INT32), ERR_ARG, call, /order must be 'C' or 'F'/);
  });
  it('resized', () => {
    bad(() => createResized(INT32, 0.5, 4), ERR_ARG, 'Datatype.resized', /lowerBound/);
    bad(() => createResized(INT32, 0, -4), ERR_ARG, 'Datatype.resized', /extent must be an integer >= 0/);
  });
  it('predefined codes', () => {
    bad(() => predefinedDescriptor(0), ERR_TYPE, 'Datatype');
    bad(() => predefinedDescriptor(99), ERR_TYPE, 'Datatype');
    expect(predefinedDescriptor(TYPE_CODES.INT32)).toBe(INT32);
  });
  it('descriptors are frozen and copy their arrays', () => {
    const bl = [1, 2];
    const d = createIndexed(bl, [0, 4], INT32);
    bl[0] = 99;
    expect(d.blocklengths).toEqual([1, 2]);
    expect(Object.isFrozen(d)).toBe(true);
    expect(Object.isFrozen(d.blocklengths)).toBe(true);
  });
});

describe('descriptorToString', () => {
  it('reads like the constructor calls', () => {
    expect(descriptorToString(createVector(2, 3, 4, INT32))).toBe('vector(2, 3, 4, INT32)');
    expect(descriptorToString(createStruct([1, 1], [0, 8], [FLOAT64, INT32]))).toBe('struct([1, 1], [0, 8], [FLOAT64, INT32])');
    expect(descriptorToString(createSubarray([4, 5], [2, 3], [1, 2], 'F', INT32))).toBe("subarray([4, 5], [2, 3], [1, 2], 'F', INT32)");
    expect(descriptorToString(createResized(createContiguous(2, INT32), -4, 12))).toBe('resized(contiguous(2, INT32), -4, 12)');
    expect(descriptorToString(createHvector(1, 2, 3, INT32))).toBe('hvector(1, 2, 3, INT32)');
    const long = createIndexed(new Array(10).fill(1), [...Array(10).keys()], INT32);
    expect(descriptorToString(long)).toBe('indexed([1, 1, 1, 1, 1, 1, 1, 1, ... (10)], [0, 1, 2, 3, 4, 5, 6, 7, ... (10)], INT32)');
    const wide = createStruct(new Array(9).fill(1), new Array(9).fill(0), new Array(9).fill(INT32));
    expect(descriptorToString(wide)).toContain('[... (9)]');
  });
});

describe('descriptor codec', () => {
  const dc = createStruct([1, 1], [0, 8], [FLOAT64, predefinedDescriptor(TYPE_CODES.INT8)]);
  const samples: TypeDescriptor[] = [
    ...ALL_TYPE_CODES.map((c) => predefinedDescriptor(c)),
    createContiguous(0, INT32),
    createVector(3, 1, -2, dc),
    createHvector(2, 5, -(2 ** 40), INT32),
    createIndexed([3, 1, 0], [4, 0, -7], dc),
    createStruct([2, 1, 3], [0, 16, 26], [predefinedDescriptor(TYPE_CODES.FLOAT32), dc, INT32]),
    createSubarray([4, 5, 6], [2, 3, 0], [1, 2, 6], 'F', createVector(2, 1, 2, INT32)),
    createResized(createSubarray([9], [3], [3], 'C', dc), -(2 ** 53 - 1), 2 ** 53 - 1),
    createStruct([], [], []),
  ];
  it.each(samples.map((d) => [descriptorToString(d), d] as const))('round trip: %s', (_s, d) => {
    const bytes = encodeDescriptor(d);
    const back = decodeDescriptor(bytes);
    expect(back).toEqual(d);
    expect(encodeDescriptor(back)).toEqual(bytes);
    if (d.kind === 'predefined') expect(back).toBe(d);
  });
  it('is compact', () => {
    expect(encodeDescriptor(INT32).length).toBe(3);
    expect(encodeDescriptor(createVector(2, 3, 4, INT32)).length).toBe(7);
  });
  it('a decoded descriptor gets the same layout', () => {
    const d = createIndexed([3, 1], [4, 0], dc);
    const m1 = typeMapOf(d);
    const m2 = typeMapOf(decodeDescriptor(encodeDescriptor(d)));
    expect(m2).not.toBe(m1);
    expect({ ...m2, descriptor: null }).toEqual({ ...m1, descriptor: null });
  });
  it('rejects malformed bytes with ERR_INTERN', () => {
    const call = 'decodeDescriptor';
    const good = encodeDescriptor(createVector(2, 3, 4, INT32));
    expect(() => decodeDescriptor(new Uint8Array(0))).toThrow(expect.objectContaining({ errorClass: ERR_INTERN, call }));
    expect(() => decodeDescriptor(Uint8Array.of(2, 0, 10))).toThrow(/unknown version/);
    expect(() => decodeDescriptor(good.subarray(0, 4))).toThrow(/unexpected end/);
    expect(() => decodeDescriptor(Uint8Array.of(...good, 0))).toThrow(/trailing bytes/);
    expect(() => decodeDescriptor(Uint8Array.of(1, 42))).toThrow(/unknown kind tag 42/);
    expect(() => decodeDescriptor(Uint8Array.of(1, 0, 200))).toThrow(expect.objectContaining({ errorClass: ERR_INTERN }));
    expect(() => decodeDescriptor(Uint8Array.of(1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))).toThrow(/varint too long/);
    expect(() => decodeDescriptor(Uint8Array.of(1, 4, 100, 0))).toThrow(/bad array length/);
    // a well-formed encoding of invalid arguments (count -1)
    expect(() => decodeDescriptor(Uint8Array.of(1, 1, 0x41, 0, 10))).toThrow(expect.objectContaining({ errorClass: ERR_INTERN }));
  });
});
