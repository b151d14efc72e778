// Over 600 lines: one monomorphic loop per (op, element type), written out so V8 keeps each one; the selecting table is at the bottom.
/**
 * The reduction inner loops: one function per (op, element type), so that
 * every loop sees a single typed-array kind and a single operator and stays
 * monomorphic in V8 (closures made by one factory would share type feedback
 * and go polymorphic). The table at the bottom selects a loop once per call.
 *
 * Every kernel computes `o[i] = a[i] op o[i]` for i < n: `a` is the left
 * operand (the contribution of the lower ranks), `o` the right one and the
 * result. Integer results wrap like C fixed-width arithmetic: the typed-array
 * store reduces modulo 2**bits, and 32-bit products use Math.imul (a double
 * product of two 32-bit values would lose low bits). FLOAT32 is computed in
 * double and rounded once on store, which equals float arithmetic for + and *.
 * Logical ops treat nonzero as true and store 0 or 1. MINLOC / MAXLOC work on
 * n interleaved (value, index) pairs (arrays of length 2n); on equal values the
 * lower index wins. MIN / MAX compare with < / > (a NaN operand on the left is
 * dropped, on the right kept), as MPICH's MPL_MIN / MPL_MAX do.
 *
 * SUM, PROD, MIN and MAX on the types that are not BigInt run four elements
 * per iteration: V8 neither unrolls nor vectorizes, and on 512 Ki-element
 * FLOAT64 arrays (Node 20, machine A of docs/notebook/performance-2026-11.md) the unrolled
 * loops take 0.66 instead of 1.0 ns per element for SUM and 0.55 instead of
 * 1.3 for MAX. The rest of the table is rarely hot: logical and bitwise ops,
 * and 64-bit integers, whose BigInt arithmetic costs far more than the loop.
 *
 * This file is written out longhand on purpose; the size is the point.
 */
import { OP_CODES, type OpCode } from './ops.ts';
import { TYPE_CODES, type ElementArray, type TypeCode } from './predefined.ts';

/** o[i] = a[i] op o[i] for i < n (n pairs for MINLOC / MAXLOC). */
export type Kernel = (a: ElementArray, o: ElementArray, n: number) => void;

function sumInt8(a: Int8Array, o: Int8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumInt16(a: Int16Array, o: Int16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumInt32(a: Int32Array, o: Int32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumFloat32(a: Float32Array, o: Float32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function sumFloat64(a: Float64Array, o: Float64Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! + o[i]!;
    o[i + 1] = a[i + 1]! + o[i + 1]!;
    o[i + 2] = a[i + 2]! + o[i + 2]!;
    o[i + 3] = a[i + 3]! + o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! + o[i]!;
}

function prodInt8(a: Int8Array, o: Int8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! * o[i]!;
    o[i + 1] = a[i + 1]! * o[i + 1]!;
    o[i + 2] = a[i + 2]! * o[i + 2]!;
    o[i + 3] = a[i + 3]! * o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! * o[i]!;
}

function prodUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! * o[i]!;
    o[i + 1] = a[i + 1]! * o[i + 1]!;
    o[i + 2] = a[i + 2]! * o[i + 2]!;
    o[i + 3] = a[i + 3]! * o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! * o[i]!;
}

function prodInt16(a: Int16Array, o: Int16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! * o[i]!;
    o[i + 1] = a[i + 1]! * o[i + 1]!;
    o[i + 2] = a[i + 2]! * o[i + 2]!;
    o[i + 3] = a[i + 3]! * o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! * o[i]!;
}

function prodUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! * o[i]!;
    o[i + 1] = a[i + 1]! * o[i + 1]!;
    o[i + 2] = a[i + 2]! * o[i + 2]!;
    o[i + 3] = a[i + 3]! * o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! * o[i]!;
}

function prodInt32(a: Int32Array, o: Int32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = Math.imul(a[i]!, o[i]!);
    o[i + 1] = Math.imul(a[i + 1]!, o[i + 1]!);
    o[i + 2] = Math.imul(a[i + 2]!, o[i + 2]!);
    o[i + 3] = Math.imul(a[i + 3]!, o[i + 3]!);
  }
  for (; i < n; i++) o[i] = Math.imul(a[i]!, o[i]!);
}

function prodUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = Math.imul(a[i]!, o[i]!);
    o[i + 1] = Math.imul(a[i + 1]!, o[i + 1]!);
    o[i + 2] = Math.imul(a[i + 2]!, o[i + 2]!);
    o[i + 3] = Math.imul(a[i + 3]!, o[i + 3]!);
  }
  for (; i < n; i++) o[i] = Math.imul(a[i]!, o[i]!);
}

function prodInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! * o[i]!;
}

function prodUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! * o[i]!;
}

function prodFloat32(a: Float32Array, o: Float32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! * o[i]!;
    o[i + 1] = a[i + 1]! * o[i + 1]!;
    o[i + 2] = a[i + 2]! * o[i + 2]!;
    o[i + 3] = a[i + 3]! * o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! * o[i]!;
}

function prodFloat64(a: Float64Array, o: Float64Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    o[i] = a[i]! * o[i]!;
    o[i + 1] = a[i + 1]! * o[i + 1]!;
    o[i + 2] = a[i + 2]! * o[i + 2]!;
    o[i + 3] = a[i + 3]! * o[i + 3]!;
  }
  for (; i < n; i++) o[i] = a[i]! * o[i]!;
}

function minInt8(a: Int8Array, o: Int8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minInt16(a: Int16Array, o: Int16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minInt32(a: Int32Array, o: Int32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minFloat32(a: Float32Array, o: Float32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function minFloat64(a: Float64Array, o: Float64Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 < o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 < o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 < o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x < o[i]!) o[i] = x;
  }
}

function maxInt8(a: Int8Array, o: Int8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxInt16(a: Int16Array, o: Int16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxInt32(a: Int32Array, o: Int32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxFloat32(a: Float32Array, o: Float32Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function maxFloat64(a: Float64Array, o: Float64Array, n: number): void {
  let i = 0;
  for (const m = n - 3; i < m; i += 4) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
    const x1 = a[i + 1]!;
    if (x1 > o[i + 1]!) o[i + 1] = x1;
    const x2 = a[i + 2]!;
    if (x2 > o[i + 2]!) o[i + 2] = x2;
    const x3 = a[i + 3]!;
    if (x3 > o[i + 3]!) o[i + 3] = x3;
  }
  for (; i < n; i++) {
    const x = a[i]!;
    if (x > o[i]!) o[i] = x;
  }
}

function landInt8(a: Int8Array, o: Int8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 && o[i] !== 0 ? 1 : 0;
}

function landUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 && o[i] !== 0 ? 1 : 0;
}

function landInt16(a: Int16Array, o: Int16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 && o[i] !== 0 ? 1 : 0;
}

function landUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 && o[i] !== 0 ? 1 : 0;
}

function landInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 && o[i] !== 0 ? 1 : 0;
}

function landUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 && o[i] !== 0 ? 1 : 0;
}

function landInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0n && o[i] !== 0n ? 1n : 0n;
}

function landUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0n && o[i] !== 0n ? 1n : 0n;
}

function lorInt8(a: Int8Array, o: Int8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 || o[i] !== 0 ? 1 : 0;
}

function lorUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 || o[i] !== 0 ? 1 : 0;
}

function lorInt16(a: Int16Array, o: Int16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 || o[i] !== 0 ? 1 : 0;
}

function lorUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 || o[i] !== 0 ? 1 : 0;
}

function lorInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 || o[i] !== 0 ? 1 : 0;
}

function lorUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0 || o[i] !== 0 ? 1 : 0;
}

function lorInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0n || o[i] !== 0n ? 1n : 0n;
}

function lorUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i] !== 0n || o[i] !== 0n ? 1n : 0n;
}

function lxorInt8(a: Int8Array, o: Int8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0) !== (o[i] !== 0) ? 1 : 0;
}

function lxorUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0) !== (o[i] !== 0) ? 1 : 0;
}

function lxorInt16(a: Int16Array, o: Int16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0) !== (o[i] !== 0) ? 1 : 0;
}

function lxorUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0) !== (o[i] !== 0) ? 1 : 0;
}

function lxorInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0) !== (o[i] !== 0) ? 1 : 0;
}

function lxorUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0) !== (o[i] !== 0) ? 1 : 0;
}

function lxorInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0n) !== (o[i] !== 0n) ? 1n : 0n;
}

function lxorUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = (a[i] !== 0n) !== (o[i] !== 0n) ? 1n : 0n;
}

function bandInt8(a: Int8Array, o: Int8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function bandUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function bandInt16(a: Int16Array, o: Int16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function bandUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function bandInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function bandUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function bandInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function bandUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! & o[i]!;
}

function borInt8(a: Int8Array, o: Int8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function borUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function borInt16(a: Int16Array, o: Int16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function borUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function borInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function borUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function borInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function borUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! | o[i]!;
}

function bxorInt8(a: Int8Array, o: Int8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function bxorUint8(a: Uint8Array, o: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function bxorInt16(a: Int16Array, o: Int16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function bxorUint16(a: Uint16Array, o: Uint16Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function bxorInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function bxorUint32(a: Uint32Array, o: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function bxorInt64(a: BigInt64Array, o: BigInt64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function bxorUint64(a: BigUint64Array, o: BigUint64Array, n: number): void {
  for (let i = 0; i < n; i++) o[i] = a[i]! ^ o[i]!;
}

function minlocInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0, e = 2 * n; i < e; i += 2) {
    const u = a[i]!;
    const v = o[i]!;
    if (u < v) {
      o[i] = u;
      o[i + 1] = a[i + 1]!;
    } else if (u === v) {
      const j = a[i + 1]!;
      if (j < o[i + 1]!) o[i + 1] = j;
    }
  }
}

function minlocFloat64(a: Float64Array, o: Float64Array, n: number): void {
  for (let i = 0, e = 2 * n; i < e; i += 2) {
    const u = a[i]!;
    const v = o[i]!;
    if (u < v) {
      o[i] = u;
      o[i + 1] = a[i + 1]!;
    } else if (u === v) {
      const j = a[i + 1]!;
      if (j < o[i + 1]!) o[i + 1] = j;
    }
  }
}

function maxlocInt32(a: Int32Array, o: Int32Array, n: number): void {
  for (let i = 0, e = 2 * n; i < e; i += 2) {
    const u = a[i]!;
    const v = o[i]!;
    if (u > v) {
      o[i] = u;
      o[i + 1] = a[i + 1]!;
    } else if (u === v) {
      const j = a[i + 1]!;
      if (j < o[i + 1]!) o[i + 1] = j;
    }
  }
}

function maxlocFloat64(a: Float64Array, o: Float64Array, n: number): void {
  for (let i = 0, e = 2 * n; i < e; i += 2) {
    const u = a[i]!;
    const v = o[i]!;
    if (u > v) {
      o[i] = u;
      o[i + 1] = a[i + 1]!;
    } else if (u === v) {
      const j = a[i + 1]!;
      if (j < o[i + 1]!) o[i + 1] = j;
    }
  }
}

const TABLE: (Kernel | undefined)[][] = [];

function put(op: OpCode, type: TypeCode, kernel: (a: never, o: never, n: number) => void): void {
  (TABLE[op] ??= [])[type] = kernel as Kernel;
}

put(OP_CODES.SUM, TYPE_CODES.INT8, sumInt8);
put(OP_CODES.SUM, TYPE_CODES.UINT8, sumUint8);
put(OP_CODES.SUM, TYPE_CODES.INT16, sumInt16);
put(OP_CODES.SUM, TYPE_CODES.UINT16, sumUint16);
put(OP_CODES.SUM, TYPE_CODES.INT32, sumInt32);
put(OP_CODES.SUM, TYPE_CODES.UINT32, sumUint32);
put(OP_CODES.SUM, TYPE_CODES.INT64, sumInt64);
put(OP_CODES.SUM, TYPE_CODES.UINT64, sumUint64);
put(OP_CODES.SUM, TYPE_CODES.FLOAT32, sumFloat32);
put(OP_CODES.SUM, TYPE_CODES.FLOAT64, sumFloat64);
put(OP_CODES.PROD, TYPE_CODES.INT8, prodInt8);
put(OP_CODES.PROD, TYPE_CODES.UINT8, prodUint8);
put(OP_CODES.PROD, TYPE_CODES.INT16, prodInt16);
put(OP_CODES.PROD, TYPE_CODES.UINT16, prodUint16);
put(OP_CODES.PROD, TYPE_CODES.INT32, prodInt32);
put(OP_CODES.PROD, TYPE_CODES.UINT32, prodUint32);
put(OP_CODES.PROD, TYPE_CODES.INT64, prodInt64);
put(OP_CODES.PROD, TYPE_CODES.UINT64, prodUint64);
put(OP_CODES.PROD, TYPE_CODES.FLOAT32, prodFloat32);
put(OP_CODES.PROD, TYPE_CODES.FLOAT64, prodFloat64);
put(OP_CODES.MIN, TYPE_CODES.INT8, minInt8);
put(OP_CODES.MIN, TYPE_CODES.UINT8, minUint8);
put(OP_CODES.MIN, TYPE_CODES.INT16, minInt16);
put(OP_CODES.MIN, TYPE_CODES.UINT16, minUint16);
put(OP_CODES.MIN, TYPE_CODES.INT32, minInt32);
put(OP_CODES.MIN, TYPE_CODES.UINT32, minUint32);
put(OP_CODES.MIN, TYPE_CODES.INT64, minInt64);
put(OP_CODES.MIN, TYPE_CODES.UINT64, minUint64);
put(OP_CODES.MIN, TYPE_CODES.FLOAT32, minFloat32);
put(OP_CODES.MIN, TYPE_CODES.FLOAT64, minFloat64);
put(OP_CODES.MAX, TYPE_CODES.INT8, maxInt8);
put(OP_CODES.MAX, TYPE_CODES.UINT8, maxUint8);
put(OP_CODES.MAX, TYPE_CODES.INT16, maxInt16);
put(OP_CODES.MAX, TYPE_CODES.UINT16, maxUint16);
put(OP_CODES.MAX, TYPE_CODES.INT32, maxInt32);
put(OP_CODES.MAX, TYPE_CODES.UINT32, maxUint32);
put(OP_CODES.MAX, TYPE_CODES.INT64, maxInt64);
put(OP_CODES.MAX, TYPE_CODES.UINT64, maxUint64);
put(OP_CODES.MAX, TYPE_CODES.FLOAT32, maxFloat32);
put(OP_CODES.MAX, TYPE_CODES.FLOAT64, maxFloat64);
put(OP_CODES.LAND, TYPE_CODES.INT8, landInt8);
put(OP_CODES.LAND, TYPE_CODES.UINT8, landUint8);
put(OP_CODES.LAND, TYPE_CODES.INT16, landInt16);
put(OP_CODES.LAND, TYPE_CODES.UINT16, landUint16);
put(OP_CODES.LAND, TYPE_CODES.INT32, landInt32);
put(OP_CODES.LAND, TYPE_CODES.UINT32, landUint32);
put(OP_CODES.LAND, TYPE_CODES.INT64, landInt64);
put(OP_CODES.LAND, TYPE_CODES.UINT64, landUint64);
put(OP_CODES.LOR, TYPE_CODES.INT8, lorInt8);
put(OP_CODES.LOR, TYPE_CODES.UINT8, lorUint8);
put(OP_CODES.LOR, TYPE_CODES.INT16, lorInt16);
put(OP_CODES.LOR, TYPE_CODES.UINT16, lorUint16);
put(OP_CODES.LOR, TYPE_CODES.INT32, lorInt32);
put(OP_CODES.LOR, TYPE_CODES.UINT32, lorUint32);
put(OP_CODES.LOR, TYPE_CODES.INT64, lorInt64);
put(OP_CODES.LOR, TYPE_CODES.UINT64, lorUint64);
put(OP_CODES.LXOR, TYPE_CODES.INT8, lxorInt8);
put(OP_CODES.LXOR, TYPE_CODES.UINT8, lxorUint8);
put(OP_CODES.LXOR, TYPE_CODES.INT16, lxorInt16);
put(OP_CODES.LXOR, TYPE_CODES.UINT16, lxorUint16);
put(OP_CODES.LXOR, TYPE_CODES.INT32, lxorInt32);
put(OP_CODES.LXOR, TYPE_CODES.UINT32, lxorUint32);
put(OP_CODES.LXOR, TYPE_CODES.INT64, lxorInt64);
put(OP_CODES.LXOR, TYPE_CODES.UINT64, lxorUint64);
put(OP_CODES.BAND, TYPE_CODES.INT8, bandInt8);
put(OP_CODES.BAND, TYPE_CODES.UINT8, bandUint8);
put(OP_CODES.BAND, TYPE_CODES.BYTE, bandUint8);
put(OP_CODES.BAND, TYPE_CODES.INT16, bandInt16);
put(OP_CODES.BAND, TYPE_CODES.UINT16, bandUint16);
put(OP_CODES.BAND, TYPE_CODES.INT32, bandInt32);
put(OP_CODES.BAND, TYPE_CODES.UINT32, bandUint32);
put(OP_CODES.BAND, TYPE_CODES.INT64, bandInt64);
put(OP_CODES.BAND, TYPE_CODES.UINT64, bandUint64);
put(OP_CODES.BOR, TYPE_CODES.INT8, borInt8);
put(OP_CODES.BOR, TYPE_CODES.UINT8, borUint8);
put(OP_CODES.BOR, TYPE_CODES.BYTE, borUint8);
put(OP_CODES.BOR, TYPE_CODES.INT16, borInt16);
put(OP_CODES.BOR, TYPE_CODES.UINT16, borUint16);
put(OP_CODES.BOR, TYPE_CODES.INT32, borInt32);
put(OP_CODES.BOR, TYPE_CODES.UINT32, borUint32);
put(OP_CODES.BOR, TYPE_CODES.INT64, borInt64);
put(OP_CODES.BOR, TYPE_CODES.UINT64, borUint64);
put(OP_CODES.BXOR, TYPE_CODES.INT8, bxorInt8);
put(OP_CODES.BXOR, TYPE_CODES.UINT8, bxorUint8);
put(OP_CODES.BXOR, TYPE_CODES.BYTE, bxorUint8);
put(OP_CODES.BXOR, TYPE_CODES.INT16, bxorInt16);
put(OP_CODES.BXOR, TYPE_CODES.UINT16, bxorUint16);
put(OP_CODES.BXOR, TYPE_CODES.INT32, bxorInt32);
put(OP_CODES.BXOR, TYPE_CODES.UINT32, bxorUint32);
put(OP_CODES.BXOR, TYPE_CODES.INT64, bxorInt64);
put(OP_CODES.BXOR, TYPE_CODES.UINT64, bxorUint64);
put(OP_CODES.MINLOC, TYPE_CODES.INT32, minlocInt32);
put(OP_CODES.MINLOC, TYPE_CODES.FLOAT64, minlocFloat64);
put(OP_CODES.MAXLOC, TYPE_CODES.INT32, maxlocInt32);
put(OP_CODES.MAXLOC, TYPE_CODES.FLOAT64, maxlocFloat64);

/**
 * The loop for (op, type), or undefined when MPI does not define op on type
 * (checkOp in ops.ts gives the error).
 */
export function kernelFor(op: OpCode, type: TypeCode): Kernel | undefined {
  return TABLE[op]?.[type];
}
