/**
 * The element-wise combination of an accumulate at its target (rma-target.ts): target[i] =
 * origin[i] op target[i] over basic elements of one kind. Pure, over bytes; the caller holds the
 * window's accumulate lock. Kept in device/ (not datatype/, which device/ may not import) because
 * channel engines apply accumulates; the kinds and ops are the predefined ones MPI allows in
 * accumulates (MPI 4.0 12.3.4: predefined ops, REPLACE, NO_OP; no MINLOC/MAXLOC here yet).
 */

/** Element kinds of accumulates (the api maps Datatypes onto them). */
export const ELEM = { INT8: 1, UINT8: 2, INT16: 3, UINT16: 4, INT32: 5, UINT32: 6, INT64: 7, UINT64: 8, FLOAT32: 9, FLOAT64: 10, BYTE: 11 } as const;

/** Size in bytes of each element kind (undefined: not a kind). */
export const ELEM_SIZE: readonly (number | undefined)[] = [undefined, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 1];

/** Accumulate ops. */
export const ACC_OP = { REPLACE: 0, NO_OP: 1, SUM: 2, PROD: 3, MIN: 4, MAX: 5, LAND: 6, LOR: 7, LXOR: 8, BAND: 9, BOR: 10, BXOR: 11 } as const;

type Num = number | bigint;
type Arr = { [i: number]: Num; readonly length: number };

function viewOf(elem: number, bytes: Uint8Array): Arr {
  const b = bytes.buffer;
  const o = bytes.byteOffset;
  const n = bytes.length / ELEM_SIZE[elem]!;
  switch (elem) {
    case ELEM.INT8: return new Int8Array(b, o, n);
    case ELEM.INT16: return new Int16Array(b, o, n);
    case ELEM.UINT16: return new Uint16Array(b, o, n);
    case ELEM.INT32: return new Int32Array(b, o, n);
    case ELEM.UINT32: return new Uint32Array(b, o, n);
    case ELEM.INT64: return new BigInt64Array(b, o, n);
    case ELEM.UINT64: return new BigUint64Array(b, o, n);
    case ELEM.FLOAT32: return new Float32Array(b, o, n);
    case ELEM.FLOAT64: return new Float64Array(b, o, n);
    default: return new Uint8Array(b, o, n);
  }
}

/** A view of elem over bytes: in place when aligned, else over an aligned copy (the caller copies back). */
function aligned(elem: number, bytes: Uint8Array): [Arr, Uint8Array] {
  if (bytes.byteOffset % ELEM_SIZE[elem]! === 0) return [viewOf(elem, bytes), bytes];
  const copy = bytes.slice();
  return [viewOf(elem, copy), copy];
}

function truth(x: Num): boolean {
  return typeof x === 'bigint' ? x !== 0n : x !== 0;
}

function one(x: Num, yes: boolean): Num {
  return typeof x === 'bigint' ? (yes ? 1n : 0n) : yes ? 1 : 0;
}

function combine(op: number, a: Num, t: Num): Num {
  switch (op) {
    case ACC_OP.REPLACE: return a;
    case ACC_OP.SUM: return (a as number) + (t as number);
    case ACC_OP.PROD: return (a as number) * (t as number);
    case ACC_OP.MIN: return a < t ? a : t;
    case ACC_OP.MAX: return a > t ? a : t;
    case ACC_OP.LAND: return one(t, truth(a) && truth(t));
    case ACC_OP.LOR: return one(t, truth(a) || truth(t));
    case ACC_OP.LXOR: return one(t, truth(a) !== truth(t));
    case ACC_OP.BAND: return (a as number) & (t as number);
    case ACC_OP.BOR: return (a as number) | (t as number);
    case ACC_OP.BXOR: return (a as number) ^ (t as number);
    default: return t;
  }
}

/** mem[disp .. disp + data.length) = data op mem[...], element by element of kind `elem`. */
export function accumulate(mem: Uint8Array, disp: number, data: Uint8Array, elem: number, op: number): void {
  if (op === ACC_OP.NO_OP) return;
  const region = mem.subarray(disp, disp + data.length);
  if (op === ACC_OP.REPLACE) {
    region.set(data);
    return;
  }
  const [t, tBytes] = aligned(elem, region);
  const [a] = aligned(elem, data);
  for (let i = 0; i < t.length; i++) t[i] = combine(op, a[i]!, t[i]!);
  if (tBytes !== region) region.set(tBytes);
}
