import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_COUNT, ERR_OP } from '../util/index.ts';
import { OP_CODES } from './ops.ts';
import { reduceValues } from './reduce-values.ts';

const { SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC } = OP_CODES;

function err(errorClass: number, call = 'reduce'): unknown {
  return expect.objectContaining({ errorClass, call });
}

describe('reduceValues on numbers, bigints and booleans', () => {
  it('numbers', () => {
    expect(reduceValues(SUM, 1.5, 2)).toBe(3.5);
    expect(reduceValues(PROD, 3, -2)).toBe(-6);
    expect(reduceValues(MIN, 3, -2)).toBe(-2);
    expect(reduceValues(MAX, 3, -2)).toBe(3);
    expect(reduceValues(LAND, 3, 0)).toBe(0);
    expect(reduceValues(LAND, 3, -1)).toBe(1);
    expect(reduceValues(LOR, 0, 0)).toBe(0);
    expect(reduceValues(LOR, 0, 2)).toBe(1);
    expect(reduceValues(LXOR, 4, 2)).toBe(0);
    expect(reduceValues(LXOR, 4, 0)).toBe(1);
    expect(reduceValues(BAND, 12, 10)).toBe(8);
    expect(reduceValues(BOR, 12, 10)).toBe(14);
    expect(reduceValues(BXOR, 12, 10)).toBe(6);
    expect(reduceValues(BAND, -1, 7)).toBe(7);
  });
  it('bitwise ops on integers beyond 32 bits', () => {
    expect(reduceValues(BOR, 2 ** 40, 1)).toBe(2 ** 40 + 1);
    expect(reduceValues(BAND, 2 ** 52 + 3, 2 ** 52 + 6)).toBe(2 ** 52 + 2);
    expect(reduceValues(BXOR, -(2 ** 40), 2 ** 40)).toBe(-(2 ** 41));
  });
  it('bitwise ops refuse non-integers', () => {
    expect(() => reduceValues(BAND, 1.5, 1)).toThrow(err(ERR_OP));
    expect(() => reduceValues(BOR, 2 ** 60, 1, 'allreduce')).toThrow(err(ERR_OP, 'allreduce'));
  });
  it('bigints do not wrap', () => {
    expect(reduceValues(SUM, 2n ** 64n, 1n)).toBe(2n ** 64n + 1n);
    expect(reduceValues(PROD, 3n, -4n)).toBe(-12n);
    expect(reduceValues(MIN, 3n, -4n)).toBe(-4n);
    expect(reduceValues(MAX, 3n, -4n)).toBe(3n);
    expect(reduceValues(LAND, 3n, 0n)).toBe(0n);
    expect(reduceValues(LOR, 3n, 0n)).toBe(1n);
    expect(reduceValues(LXOR, 3n, 5n)).toBe(0n);
    expect(reduceValues(BAND, 12n, 10n)).toBe(8n);
    expect(reduceValues(BOR, 12n, 10n)).toBe(14n);
    expect(reduceValues(BXOR, 12n, 10n)).toBe(6n);
  });
  it('booleans with the logical ops', () => {
    expect(reduceValues(LAND, true, false)).toBe(false);
    expect(reduceValues(LOR, true, false)).toBe(true);
    expect(reduceValues(LXOR, true, true)).toBe(false);
    expect(() => reduceValues(SUM, true, false)).toThrow(err(ERR_OP));
  });
  it('MINLOC / MAXLOC need pairs', () => {
    expect(() => reduceValues(MINLOC, 1, 2)).toThrow(/needs \[value, index\] pairs, got numbers/);
    expect(() => reduceValues(MAXLOC, 1n, 2n)).toThrow(err(ERR_OP));
    expect(() => reduceValues(MAXLOC, 'a', 'b')).toThrow(/pairs or arrays of them, got string and string/);
  });
  it('other values are ERR_OP', () => {
    expect(() => reduceValues(SUM, 'a', 'b')).toThrow(err(ERR_OP));
    expect(() => reduceValues(SUM, 1, 1n as unknown as number)).toThrow(/got number and bigint/);
    expect(() => reduceValues(SUM, [1], [2])).toThrow(/got array and array/);
    expect(() => reduceValues(SUM, null, null)).toThrow(/got null and null/);
    expect(() => reduceValues(99, 1, 2)).toThrow(/99 is not a predefined op/);
  });
});

describe('reduceValues on pairs', () => {
  it('MINLOC and MAXLOC on [value, index]', () => {
    expect(reduceValues(MINLOC, [3, 1], [2, 0])).toEqual([2, 0]);
    expect(reduceValues(MINLOC, [1, 1], [2, 0])).toEqual([1, 1]);
    expect(reduceValues(MAXLOC, [3, 1], [2, 0])).toEqual([3, 1]);
    expect(reduceValues(MAXLOC, [1, 1], [2, 0])).toEqual([2, 0]);
    expect(reduceValues(MAXLOC, [5n, 1], [2n, 0])).toEqual([5n, 1]);
  });
  it('ties keep the lower index on either side', () => {
    expect(reduceValues(MINLOC, [7, 4], [7, 2])).toEqual([7, 2]);
    expect(reduceValues(MINLOC, [7, 1], [7, 2])).toEqual([7, 1]);
    expect(reduceValues(MAXLOC, [7, 4], [7, 2])).toEqual([7, 2]);
  });
  it('arrays of pairs, element-wise, as new arrays', () => {
    const a: [number, number][] = [[1, 0], [5, 0], [3, 0]];
    const b: [number, number][] = [[2, 1], [4, 1], [3, 1]];
    expect(reduceValues(MINLOC, a, b)).toEqual([[1, 0], [4, 1], [3, 0]]);
    expect(reduceValues(MAXLOC, a, b)).toEqual([[2, 1], [5, 0], [3, 0]]);
    expect(b).toEqual([[2, 1], [4, 1], [3, 1]]);
    expect(() => reduceValues(MINLOC, a, b.slice(1))).toThrow(err(ERR_ARG));
  });
});

describe('reduceValues on typed arrays', () => {
  it('element-wise into b, in place', () => {
    const a = Float64Array.of(1, 2, 3);
    const b = Float64Array.of(10, 20, 30);
    expect(reduceValues(SUM, a, b)).toBe(b);
    expect(Array.from(b)).toEqual([11, 22, 33]);
    expect(Array.from(a)).toEqual([1, 2, 3]);
  });
  it('wraps like the buffer forms', () => {
    const b = Int8Array.of(100);
    reduceValues(SUM, Int8Array.of(100), b);
    expect(b[0]).toBe(-56);
    const u = BigInt64Array.of(2n ** 62n);
    reduceValues(PROD, BigInt64Array.of(4n), u);
    expect(u[0]).toBe(0n);
  });
  it('Uint8ClampedArray reduces as UINT8, DataView as BYTE', () => {
    const c = Uint8ClampedArray.of(200);
    reduceValues(SUM, Uint8ClampedArray.of(100), c);
    expect(c[0]).toBe(44);
    const d = new DataView(Uint8Array.of(0b1100).buffer);
    reduceValues(BXOR, new DataView(Uint8Array.of(0b1010).buffer), d);
    expect(d.getUint8(0)).toBe(0b0110);
    expect(() => reduceValues(SUM, new DataView(new ArrayBuffer(1)), new DataView(new ArrayBuffer(1)))).toThrow(
      /SUM is not defined on BYTE/,
    );
  });
  it('views at unaligned or shared offsets', () => {
    const buf = new ArrayBuffer(64);
    const a = new Float32Array(buf, 4, 3);
    const b = new Float32Array(buf, 20, 3);
    a.set([1, 2, 3]);
    b.set([4, 5, 6]);
    reduceValues(MAX, a, b);
    expect(Array.from(b)).toEqual([4, 5, 6]);
  });
  it('MINLOC on interleaved pairs of Float64Array / Int32Array', () => {
    const b = Int32Array.of(5, 1, 2, 9);
    reduceValues(MINLOC, Int32Array.of(5, 0, 3, 0), b);
    expect(Array.from(b)).toEqual([5, 0, 2, 9]);
    expect(() => reduceValues(MINLOC, Int32Array.of(1, 2, 3), Int32Array.of(1, 2, 3))).toThrow(err(ERR_COUNT));
    expect(() => reduceValues(MINLOC, Int16Array.of(1, 2), Int16Array.of(1, 2))).toThrow(err(ERR_OP));
  });
  it('mismatched kinds or lengths are ERR_ARG', () => {
    expect(() => reduceValues<ArrayBufferView>(SUM, Float64Array.of(1), Float32Array.of(1, 2))).toThrow(err(ERR_ARG));
    expect(() => reduceValues(SUM, Float64Array.of(1), Float64Array.of(1, 2))).toThrow(/every rank must contribute/);
  });
  it('forbidden ops on typed arrays are ERR_OP', () => {
    expect(() => reduceValues(BAND, Float64Array.of(1), Float64Array.of(1))).toThrow(/BAND is not defined on FLOAT64/);
  });
});
