import { describe, expect, it } from 'vitest';
import { ERR_OP } from '../util/index.ts';
import { kernelFor } from './kernels.ts';
import { ALL_OP_CODES, checkOp, isOpAllowed, isOpCode, OP_CODES, opName, type OpCode } from './ops.ts';
import { ALL_TYPE_CODES, elementArrayOf, isBigIntType, isFloatType, TYPE_CODES, typeName, typeSize, type TypeCode } from './predefined.ts';
import { byteReducer, reduceLocal } from './reduce-local.ts';

const ARITH = [OP_CODES.SUM, OP_CODES.PROD, OP_CODES.MIN, OP_CODES.MAX];
const LOGIC = [OP_CODES.LAND, OP_CODES.LOR, OP_CODES.LXOR];
const BITS = [OP_CODES.BAND, OP_CODES.BOR, OP_CODES.BXOR];
const INTS = [1, 2, 3, 4, 5, 6, 7, 8] as TypeCode[];
const FLOATS = [TYPE_CODES.FLOAT32, TYPE_CODES.FLOAT64] as TypeCode[];

/** The allowed pairs, written out from MPI 3.1 §5.9.2 independently of ops.ts. */
function expectedAllowed(op: OpCode, t: TypeCode): boolean {
  if ((ARITH as number[]).includes(op)) return INTS.includes(t) || FLOATS.includes(t);
  if ((LOGIC as number[]).includes(op)) return INTS.includes(t);
  if ((BITS as number[]).includes(op)) return INTS.includes(t) || t === TYPE_CODES.BYTE;
  return t === TYPE_CODES.INT32 || t === TYPE_CODES.FLOAT64;
}

let seed = 12345;
function rand(): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
}

function randomBytes(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

/** Random operands: full-range integers with some zeros and equal pairs; floats with signs and zeros. */
function operands(t: TypeCode, n: number): [Uint8Array, Uint8Array] {
  const size = typeSize(t);
  const a = randomBytes(n * size);
  const o = randomBytes(n * size);
  if (isFloatType(t)) {
    const A = new (elementArrayOf(t) as Float64ArrayConstructor)(a.buffer);
    const O = new (elementArrayOf(t) as Float64ArrayConstructor)(o.buffer);
    for (let i = 0; i < n; i++) {
      A[i] = Math.round((rand() - 0.5) * 2000) / 8;
      O[i] = i % 5 === 0 ? A[i]! : Math.round((rand() - 0.5) * 2000) / 8;
    }
  }
  for (let i = 0; i < n; i += 7) {
    a.fill(0, i * size, (i + 1) * size); // some zeros for the logical ops
    if (i + 3 < n) o.copyWithin((i + 3) * size, (i + 3) * size, (i + 4) * size);
  }
  return [a, o];
}

/** Sequential reference: exact BigInt arithmetic wrapped to the type's width, or doubles rounded to the type. */
function reference(op: OpCode, t: TypeCode, a: Uint8Array, o: Uint8Array, n: number): Uint8Array {
  const Ctor = elementArrayOf(t);
  const A = new Ctor(a.slice().buffer) as unknown as ArrayLike<number | bigint>;
  const out = new Ctor(o.slice().buffer) as unknown as { [i: number]: number | bigint; length: number };
  if (op === OP_CODES.MINLOC || op === OP_CODES.MAXLOC) {
    for (let i = 0; i < 2 * n; i += 2) {
      const u = A[i]!;
      const v = out[i]!;
      const better = op === OP_CODES.MINLOC ? u < v : u > v;
      if (better) {
        out[i] = u;
        out[i + 1] = A[i + 1]!;
      } else if (u === v && A[i + 1]! < out[i + 1]!) out[i + 1] = A[i + 1]!;
    }
    return new Uint8Array((out as unknown as Uint8Array).buffer);
  }
  const bits = typeSize(t) * 8;
  const signed = [1, 3, 5, 7].includes(t);
  for (let i = 0; i < n; i++) {
    if (isFloatType(t)) {
      const x = A[i] as number;
      const y = out[i] as number;
      // MIN / MAX as kernels.ts documents (MPICH's MPL_MIN / MPL_MAX): a tie keeps the right operand, so -0 vs 0 too.
      const r = op === OP_CODES.SUM ? x + y : op === OP_CODES.PROD ? x * y : op === OP_CODES.MIN ? (x < y ? x : y) : x > y ? x : y;
      out[i] = t === TYPE_CODES.FLOAT32 ? Math.fround(r) : r;
      continue;
    }
    const x = BigInt(A[i]!);
    const y = BigInt(out[i]!);
    let r: bigint;
    switch (op) {
      case OP_CODES.SUM: r = x + y; break;
      case OP_CODES.PROD: r = x * y; break;
      case OP_CODES.MIN: r = x < y ? x : y; break;
      case OP_CODES.MAX: r = x > y ? x : y; break;
      case OP_CODES.LAND: r = x !== 0n && y !== 0n ? 1n : 0n; break;
      case OP_CODES.LOR: r = x !== 0n || y !== 0n ? 1n : 0n; break;
      case OP_CODES.LXOR: r = (x !== 0n) !== (y !== 0n) ? 1n : 0n; break;
      case OP_CODES.BAND: r = x & y; break;
      case OP_CODES.BOR: r = x | y; break;
      default: r = x ^ y;
    }
    r = signed ? BigInt.asIntN(bits, r) : BigInt.asUintN(bits, r);
    out[i] = isBigIntType(t) ? r : Number(r);
  }
  return new Uint8Array((out as unknown as Uint8Array).buffer);
}

const PAIRS: [string, OpCode, TypeCode][] = [];
const FORBIDDEN: [string, OpCode, TypeCode][] = [];
for (const op of ALL_OP_CODES) {
  for (const t of ALL_TYPE_CODES) {
    (expectedAllowed(op, t) ? PAIRS : FORBIDDEN).push([`${opName(op)} on ${typeName(t)}`, op, t]);
  }
}

describe('op table', () => {
  it('codes are stable', () => {
    expect(OP_CODES).toEqual({
      SUM: 1, PROD: 2, MIN: 3, MAX: 4, LAND: 5, LOR: 6, LXOR: 7, BAND: 8, BOR: 9, BXOR: 10, MINLOC: 11, MAXLOC: 12,
    });
    expect(isOpCode(0)).toBe(false);
    expect(isOpCode(13)).toBe(false);
    expect(() => opName(99 as OpCode)).toThrow(RangeError);
  });
  it('has 12 * 11 pairs, split as MPI says', () => {
    expect(PAIRS.length + FORBIDDEN.length).toBe(132);
    expect(PAIRS.length).toBe(4 * 10 + 3 * 8 + 3 * 9 + 2 * 2);
  });
  it.each(PAIRS)('allowed: %s', (_n, op, t) => {
    expect(isOpAllowed(op, t)).toBe(true);
    expect(() => checkOp('Allreduce', op, t)).not.toThrow();
    expect(kernelFor(op, t)).toBeTypeOf('function');
  });
  it.each(FORBIDDEN)('forbidden: %s -> ERR_OP', (_n, op, t) => {
    expect(isOpAllowed(op, t)).toBe(false);
    let e: unknown;
    try {
      checkOp('Allreduce', op, t);
    } catch (x) {
      e = x;
    }
    expect(e).toEqual(expect.objectContaining({ errorClass: ERR_OP, call: 'Allreduce' }));
    expect((e as Error).message).toContain(`${opName(op)} is not defined on ${typeName(t)}`);
    expect(kernelFor(op, t)).toBeUndefined();
    expect(() => reduceLocal(op, t, new Uint8Array(16), new Uint8Array(16), 1)).toThrow(
      expect.objectContaining({ errorClass: ERR_OP, call: 'reduce' }),
    );
  });
  it('mixed structs and unknown ops are ERR_OP', () => {
    expect(() => checkOp('Reduce', OP_CODES.SUM, null)).toThrow(/struct datatype with mixed element types/);
    expect(() => checkOp('Reduce', 77, TYPE_CODES.INT32)).toThrow(expect.objectContaining({ errorClass: ERR_OP }));
    expect(isOpAllowed(OP_CODES.SUM, null)).toBe(false);
    expect(isOpAllowed(77 as OpCode, TYPE_CODES.INT32)).toBe(false);
  });
});

describe('reduceLocal against a sequential computation', () => {
  // Counts around the unrolled kernels' step of 4: every remainder, and a count below one step; 1, 8 and 9
  // around the small-operand path (64 bytes: 8 FLOAT64).
  it.each(PAIRS.flatMap(([name, op, t]) => [1, 3, 8, 9, 61, 62, 64, 67].map((N) => [`${name}, count ${N}`, op, t, N] as const)))('%s', (_n, op, t, N) => {
    const isLoc = op === OP_CODES.MINLOC || op === OP_CODES.MAXLOC;
    const len = isLoc ? 2 * N : N;
    const [a, o] = operands(t, len);
    if (isLoc) {
      // index fields: small integers, with value ties between the operands
      const A = new (elementArrayOf(t) as Float64ArrayConstructor)(a.buffer);
      const O = new (elementArrayOf(t) as Float64ArrayConstructor)(o.buffer);
      for (let i = 0; i < len; i += 2) {
        A[i] = Math.floor(rand() * 5);
        O[i] = Math.floor(rand() * 5);
        A[i + 1] = Math.floor(rand() * 100);
        O[i + 1] = Math.floor(rand() * 100);
      }
    }
    const expected = reference(op, t, a, o, N);
    const aBefore = a.slice();
    // aligned, in place
    const inout = o.slice();
    reduceLocal(op, t, a, inout, N);
    expect(inout).toEqual(expected);
    expect(a).toEqual(aBefore);
    // unaligned operands (byteOffset 1) go through the scratch buffers
    const bigA = new Uint8Array(a.length + 1);
    bigA.set(a, 1);
    const bigO = new Uint8Array(o.length + 3);
    bigO.set(o, 1);
    reduceLocal(op, t, bigA.subarray(1), bigO.subarray(1), N);
    if (typeSize(t) > 1) expect(bigO.subarray(1, 1 + o.length)).toEqual(expected);
    expect(bigO[0]).toBe(0);
    expect(bigO[o.length + 1]).toBe(0);
    // count 0 changes nothing
    const untouched = o.slice();
    reduceLocal(op, t, a, untouched, 0);
    expect(untouched).toEqual(o);
    // byteReducer (a ByteOp's combine: the count from in's length), aligned and not, twice on one reducer
    const combine = byteReducer(op, t);
    for (const at of [0, 1]) {
      const inB = new Uint8Array(a.length + at);
      inB.set(a, at);
      const outB = new Uint8Array(o.length + at + 2);
      outB.set(o, at);
      combine(inB.subarray(at), outB.subarray(at, at + o.length));
      expect(outB.subarray(at, at + o.length)).toEqual(expected);
      expect(outB[at + o.length]).toBe(0);
      expect(inB.subarray(at)).toEqual(aBefore);
    }
    const empty = o.slice();
    combine(a.subarray(0, 0), empty);
    expect(empty).toEqual(o);
  });
});

describe('specific semantics', () => {
  it('MINLOC / MAXLOC ties keep the lower index, whichever operand holds it', () => {
    const a = Float64Array.of(3, 7, 3, 2, 1, 5, 9, 9);
    const o = Float64Array.of(3, 4, 3, 8, 2, 0, 9, 1);
    const r = o.slice();
    reduceLocal(OP_CODES.MINLOC, TYPE_CODES.FLOAT64, new Uint8Array(a.buffer), new Uint8Array(r.buffer), 4);
    expect(Array.from(r)).toEqual([3, 4, 3, 2, 1, 5, 9, 1]);
    const m = Int32Array.of(5, 9, 5, 2, 1, 1);
    const n = Int32Array.of(5, 3, 6, 7, 1, 0);
    reduceLocal(OP_CODES.MAXLOC, TYPE_CODES.INT32, new Uint8Array(m.buffer), new Uint8Array(n.buffer), 3);
    expect(Array.from(n)).toEqual([5, 3, 6, 7, 1, 0]);
  });
  it('integer arithmetic wraps like C', () => {
    const a = Int32Array.of(2 ** 31 - 1, 65537, -(2 ** 31));
    const o = Int32Array.of(1, 65537, -1);
    reduceLocal(OP_CODES.SUM, TYPE_CODES.INT32, new Uint8Array(a.buffer), new Uint8Array(o.slice().buffer), 3);
    const p = o.slice();
    reduceLocal(OP_CODES.PROD, TYPE_CODES.INT32, new Uint8Array(a.buffer), new Uint8Array(p.buffer), 3);
    expect(Array.from(p)).toEqual([2 ** 31 - 1, Math.imul(65537, 65537), -(2 ** 31)]);
    const u = BigUint64Array.of(2n ** 64n - 1n);
    const v = BigUint64Array.of(2n);
    reduceLocal(OP_CODES.SUM, TYPE_CODES.UINT64, new Uint8Array(u.buffer), new Uint8Array(v.buffer), 1);
    expect(v[0]).toBe(1n);
  });
  it('logical ops give 0 or 1', () => {
    const a = Int16Array.of(0, 5, -3, 0);
    const o = Int16Array.of(0, 0, 7, 9);
    reduceLocal(OP_CODES.LOR, TYPE_CODES.INT16, new Uint8Array(a.buffer), new Uint8Array(o.buffer), 4);
    expect(Array.from(o)).toEqual([0, 1, 1, 1]);
  });
  it('works on SharedArrayBuffer-backed bytes', () => {
    const sab = new SharedArrayBuffer(32);
    const a = new Float64Array(sab, 0, 2);
    const o = new Float64Array(sab, 16, 2);
    a.set([1.5, 2]);
    o.set([3, 4]);
    reduceLocal(OP_CODES.PROD, TYPE_CODES.FLOAT64, new Uint8Array(sab, 0, 16), new Uint8Array(sab, 16, 16), 2);
    expect(Array.from(o)).toEqual([4.5, 8]);
  });
  it('asserts that the operands hold count elements', () => {
    expect(() => reduceLocal(OP_CODES.SUM, TYPE_CODES.INT32, new Uint8Array(4), new Uint8Array(8), 2)).toThrow(/shorter than count/);
  });
});
