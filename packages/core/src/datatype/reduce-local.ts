/**
 * Local reduction on packed buffers: inout[i] = in[i] op inout[i].
 *
 * Contract: the caller (coll/ or the API layer) has already called checkOp
 * once for the operation; `inBytes` and `inoutBytes` hold packed elements of
 * the predefined type (count elements, or count (value, index) pairs for
 * MINLOC / MAXLOC). `in` is the left operand: the contribution of the lower
 * ranks, which matters only for the tie rule of MINLOC / MAXLOC here and for
 * non-commutative user ops (user-op.ts). Typed-array views need an aligned
 * byteOffset; unaligned operands go through a per-thread scratch buffer that
 * grows to the largest size seen (inout is copied back).
 */
import { assert } from '../util/index.ts';
import { kernelFor, type Kernel } from './kernels.ts';
import { checkOp, isLocOp, type OpCode } from './ops.ts';
import { elementArrayOf, typeSize, type ElementArray, type TypeCode } from './predefined.ts';

let scratchA = new ArrayBuffer(0);
let scratchB = new ArrayBuffer(0);

/**
 * Operands of at most this many bytes (an 8-byte allreduce's) are copied into two fixed scratch
 * arrays instead of being viewed where they lie. A view needs the operand's ArrayBuffer, and V8
 * keeps a small typed array (a received 8-byte payload) inside the JS heap until `.buffer` is read,
 * which then moves it out: about 1.5-3 µs per operand against 0.2-0.8 µs for the copy (machine A,
 * 8-byte FLOAT64 SUM, issue 15).
 */
const SMALL_BYTES = 64;
const smallA = new ArrayBuffer(SMALL_BYTES);
const smallB = new ArrayBuffer(SMALL_BYTES);
const smallA8 = new Uint8Array(smallA);
const smallB8 = new Uint8Array(smallB);
/** Per type code: element views of smallA / smallB, made on first use. */
const smallViewsA: (ElementArray | undefined)[] = [];
const smallViewsB: (ElementArray | undefined)[] = [];

/**
 * A typed array of `length` elements of `type` over `bytes`: a view when the
 * offset is aligned, else null.
 */
export function alignedView(type: TypeCode, bytes: Uint8Array, length: number): ElementArray | null {
  const size = typeSize(type);
  if (bytes.byteOffset % size !== 0) return null;
  return new (elementArrayOf(type))(bytes.buffer as ArrayBuffer, bytes.byteOffset, length);
}

/** A fresh typed array holding a copy of the first `length` elements in `bytes`. */
export function copyElements(type: TypeCode, bytes: Uint8Array, length: number): ElementArray {
  const out = new (elementArrayOf(type))(length);
  new Uint8Array(out.buffer).set(bytes.subarray(0, length * typeSize(type)));
  return out;
}

function scratchView(which: 0 | 1, type: TypeCode, bytes: Uint8Array, length: number): ElementArray {
  const n = length * typeSize(type);
  let buf = which === 0 ? scratchA : scratchB;
  if (buf.byteLength < n) {
    buf = new ArrayBuffer(Math.max(n, buf.byteLength * 2, 64));
    if (which === 0) scratchA = buf;
    else scratchB = buf;
  }
  new Uint8Array(buf, 0, n).set(bytes.subarray(0, n));
  return new (elementArrayOf(type))(buf, 0, length);
}

/**
 * inout = in op inout, element-wise over `count` packed elements of `type`
 * (`count` pairs for MINLOC / MAXLOC).
 * @param op a predefined op code.
 * @param type the element type.
 * @throws MPIError(ERR_OP) when op is not defined on type (call 'reduce'); callers normally check first with checkOp.
 */
export function reduceLocal(op: OpCode, type: TypeCode, inBytes: Uint8Array, inoutBytes: Uint8Array, count: number): void {
  const kernel = kernelFor(op, type);
  if (kernel === undefined) {
    checkOp('reduce', op, type);
    return;
  }
  const length = isLocOp(op) ? 2 * count : count;
  const n = length * typeSize(type);
  assert(inBytes.length >= n && inoutBytes.length >= n, 'reduceLocal: operand shorter than count');
  if (length === 0) return;
  if (n <= SMALL_BYTES) {
    reduceSmall(kernel, smallView(0, type), smallView(1, type), inBytes, inoutBytes, count, n);
    return;
  }
  const a = alignedView(type, inBytes, length) ?? scratchView(0, type, inBytes, length);
  const o = alignedView(type, inoutBytes, length);
  if (o !== null) {
    kernel(a, o, count);
    return;
  }
  const s = scratchView(1, type, inoutBytes, length);
  kernel(a, s, count);
  inoutBytes.set(new Uint8Array(s.buffer, 0, n));
}

/**
 * reduceLocal for one (op, type), resolved once: inout = in op inout over whole items, the item count
 * taken from `in`'s length. A predefined op's ByteOp (api/op.ts byteOpOf) combines through it in every
 * collective, so the kernel, the element views and the item size are looked up here rather than on
 * each combine: an 8-byte allreduce's combine is then two calls (this and the kernel) instead of eight,
 * which its first calls run unoptimised (issue 40). `op` must be defined on `type` (checkOp first).
 */
export function byteReducer(op: OpCode, type: TypeCode): (inBytes: Uint8Array, inoutBytes: Uint8Array) => void {
  const kernel = kernelFor(op, type);
  const unit = (isLocOp(op) ? 2 : 1) * typeSize(type);
  if (kernel === undefined) return (inBytes, inoutBytes) => reduceLocal(op, type, inBytes, inoutBytes, inBytes.length / unit);
  const a = smallView(0, type);
  const o = smallView(1, type);
  return (inBytes, inoutBytes) => {
    const n = inBytes.length;
    // Anything but a short operand (long, or an inout shorter than in: reduceLocal asserts) is reduceLocal's.
    if (n > SMALL_BYTES || inoutBytes.length < n) reduceLocal(op, type, inBytes, inoutBytes, n / unit);
    else reduceSmall(kernel, a, o, inBytes, inoutBytes, n / unit, n);
  };
}

/** A fixed scratch array's element view for `type` (0: smallA, 1: smallB; made at first use). */
function smallView(which: 0 | 1, type: TypeCode): ElementArray {
  const views = which === 0 ? smallViewsA : smallViewsB;
  return (views[type] ??= new (elementArrayOf(type))(which === 0 ? smallA : smallB));
}

/** reduceLocal for operands of `n` <= SMALL_BYTES bytes: through the fixed scratch arrays (`a`, `o`: their views for the type), no allocation. */
function reduceSmall(kernel: Kernel, a: ElementArray, o: ElementArray, inBytes: Uint8Array, inoutBytes: Uint8Array, count: number, n: number): void {
  for (let i = 0; i < n; i++) {
    smallA8[i] = inBytes[i]!;
    smallB8[i] = inoutBytes[i]!;
  }
  kernel(a, o, count);
  for (let i = 0; i < n; i++) inoutBytes[i] = smallB8[i]!;
}
