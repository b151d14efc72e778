import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_OP } from '../util/index.ts';
import { TYPE_CODES, type ElementArray } from './predefined.ts';
import { applyUserOp, applyUserOpValues, checkUserOp, createUserOp, describeKind, type UserFunction } from './user-op.ts';

function err(errorClass: number, call = 'reduce'): unknown {
  return expect.objectContaining({ errorClass, call });
}

describe('user ops', () => {
  const sum: UserFunction = (inv, inout) => {
    const a = inv as Float64Array;
    const o = inout as Float64Array;
    for (let i = 0; i < o.length; i++) o[i] = a[i]! + o[i]!;
  };
  /** Non-commutative: o = a * 10 + o (shows the operand order). */
  const concat: UserFunction = (inv, inout) => {
    for (let i = 0; i < inout.length; i++) (inout as Int32Array)[i] = (inv as Int32Array)[i]! * 10 + (inout as Int32Array)[i]!;
  };

  it('createUserOp validates and freezes', () => {
    const op = createUserOp(sum);
    expect(op.commute).toBe(true);
    expect(createUserOp(sum, false).commute).toBe(false);
    expect(Object.isFrozen(op)).toBe(true);
    expect(() => createUserOp(42 as unknown as UserFunction)).toThrow(err(ERR_ARG, 'Op.create'));
    expect(() => createUserOp(sum, 'yes' as unknown as boolean)).toThrow(err(ERR_ARG, 'Op.create'));
  });
  it('applyUserOp on aligned packed bytes passes views of the element type', () => {
    const a = Int32Array.of(1, 2, 3);
    const o = Int32Array.of(4, 5, 6);
    const seen: unknown[] = [];
    applyUserOp(
      (inv, inout, dt) => {
        seen.push(inv.constructor, inout.length, dt, inout.buffer === o.buffer);
        concat(inv, inout, dt);
      },
      TYPE_CODES.INT32,
      new Uint8Array(a.buffer),
      new Uint8Array(o.buffer),
      3,
      'the-datatype',
    );
    expect(Array.from(o)).toEqual([14, 25, 36]);
    expect(seen).toEqual([Int32Array, 3, 'the-datatype', true]);
  });
  it('applyUserOp on unaligned bytes passes copies and writes inout back', () => {
    const inBytes = new Uint8Array(17);
    const outBytes = new Uint8Array(17);
    const av = new DataView(inBytes.buffer, 1);
    const ov = new DataView(outBytes.buffer, 1);
    av.setFloat64(0, 1.5, true);
    av.setFloat64(8, 2.5, true);
    ov.setFloat64(0, 10, true);
    ov.setFloat64(8, 20, true);
    let dt: unknown;
    applyUserOp((i, o, d) => { dt = d; sum(i, o, d); }, TYPE_CODES.FLOAT64, inBytes.subarray(1), outBytes.subarray(1), 2);
    expect(ov.getFloat64(0, true)).toBe(11.5);
    expect(ov.getFloat64(8, true)).toBe(22.5);
    expect(dt).toBe(TYPE_CODES.FLOAT64);
  });
  it('a user op on a mixed struct is ERR_OP', () => {
    expect(() => applyUserOp(sum, null, new Uint8Array(8), new Uint8Array(8), 1)).toThrow(err(ERR_OP, 'Op'));
    expect(() => checkUserOp('Allreduce', null)).toThrow(err(ERR_OP, 'Allreduce'));
    checkUserOp('Allreduce', TYPE_CODES.INT8);
  });
  it('exceptions from the user function propagate', () => {
    const boom: UserFunction = () => {
      throw new Error('boom');
    };
    expect(() => applyUserOp(boom, TYPE_CODES.INT8, new Uint8Array(1), new Uint8Array(1), 1)).toThrow('boom');
  });
  it('object forms: numbers as Float64Array(1), bigints as BigInt64Array(1), a from the lower rank', () => {
    const seen: unknown[] = [];
    const f: UserFunction = (inv: ElementArray, inout: ElementArray, dt) => {
      seen.push(inv.constructor, inv.length, dt);
      if (inout instanceof BigInt64Array) inout[0] = (inv as BigInt64Array)[0]! * 10n + inout[0]!;
      else (inout as Float64Array)[0] = (inv as Float64Array)[0]! * 10 + (inout as Float64Array)[0]!;
    };
    expect(applyUserOpValues(f, 1, 2)).toBe(12);
    expect(applyUserOpValues(f, 3n, 4n)).toBe(34n);
    expect(seen).toEqual([Float64Array, 1, TYPE_CODES.FLOAT64, BigInt64Array, 1, TYPE_CODES.INT64]);
    expect(applyUserOpValues(f, 1, 2, 'reduce', 'dt')).toBe(12);
  });
  it('object forms: typed arrays in place into b', () => {
    const b = Int32Array.of(1, 2);
    expect(applyUserOpValues(concat, Int32Array.of(3, 4), b)).toBe(b);
    expect(Array.from(b)).toEqual([31, 42]);
    expect(() => applyUserOpValues(concat, Int32Array.of(1), Int32Array.of(1, 2))).toThrow(err(ERR_ARG));
    expect(() => applyUserOpValues<ArrayBufferView>(concat, Int32Array.of(1), Float32Array.of(1))).toThrow(err(ERR_ARG));
    expect(() => applyUserOpValues(concat, 'x', 'y', 'scan')).toThrow(err(ERR_OP, 'scan'));
    expect(() => applyUserOpValues(concat, new DataView(new ArrayBuffer(1)), new DataView(new ArrayBuffer(1)))).toThrow(err(ERR_OP));
  });
  it('describeKind', () => {
    expect(describeKind(undefined)).toBe('undefined');
    expect(describeKind(new Uint16Array(1))).toBe('Uint16Array');
    expect(describeKind({})).toBe('object');
  });
});
