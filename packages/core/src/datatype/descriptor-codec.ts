/**
 * A compact byte encoding of TypeDescriptor, so that a datatype can live in a
 * SharedArrayBuffer object table and be rebuilt in another thread.
 *
 * Format (version 1):
 *   descriptor := VERSION(1) node
 *   node       := kind:u8 fields...
 *   integers   := sign-magnitude LEB128 varints: the first byte holds 6 bits
 *                 and the sign (0x40), later bytes 7 bits; 0x80 = more follows
 *                 (exact for every safe integer)
 *   arrays     := length varint, then the entries
 *   order      := u8, 0 = 'C', 1 = 'F'
 * Field order per kind follows the constructor argument order of descriptor.ts;
 * nested bases are nodes, written in place.
 *
 * Decoding trusts the bytes (they were written by encodeDescriptor in this job)
 * and checks only that they are well formed: malformed input is an internal
 * error, MPIError(ERR_INTERN).
 */
import { ERR_INTERN, mpiError } from '../util/index.ts';
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

const VERSION = 1;

const KIND_TAGS = {
  predefined: 0,
  contiguous: 1,
  vector: 2,
  hvector: 3,
  indexed: 4,
  struct: 5,
  subarray: 6,
  resized: 7,
} as const;

class Writer {
  #bytes: number[] = [];
  u8(v: number): void {
    this.#bytes.push(v);
  }
  int(v: number): void {
    // First byte: 6 magnitude bits, the sign, the continuation bit; then 7 bits
    // a byte. (Plain zigzag would need 54-bit integers, which a double lacks.)
    let m = Math.abs(v);
    const low = (m % 64) | (v < 0 ? 64 : 0);
    m = Math.floor(m / 64);
    this.#bytes.push(m > 0 ? low | 128 : low);
    while (m > 0) {
      const b = m % 128;
      m = Math.floor(m / 128);
      this.#bytes.push(m > 0 ? b | 128 : b);
    }
  }
  ints(list: readonly number[]): void {
    this.int(list.length);
    for (const v of list) this.int(v);
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}

class Reader {
  readonly #bytes: Uint8Array;
  #pos = 0;
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }
  u8(): number {
    if (this.#pos >= this.#bytes.length) throw malformed('unexpected end of input');
    return this.#bytes[this.#pos++]!;
  }
  int(): number {
    const first = this.u8();
    const isNegative = (first & 64) !== 0;
    let m = first & 63;
    let scale = 64;
    let b = first;
    while (b >= 128) {
      if (scale > 2 ** 53) throw malformed('varint too long');
      b = this.u8();
      m += (b & 127) * scale;
      scale *= 128;
    }
    return isNegative ? -m : m;
  }
  ints(): number[] {
    const n = this.int();
    if (n < 0 || n > this.#bytes.length - this.#pos) throw malformed(`bad array length ${n}`);
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = this.int();
    return out;
  }
  get isAtEnd(): boolean {
    return this.#pos === this.#bytes.length;
  }
}

function malformed(detail: string): Error {
  return mpiError(ERR_INTERN, 'decodeDescriptor', `malformed datatype descriptor: ${detail}`);
}

function writeNode(w: Writer, d: TypeDescriptor): void {
  w.u8(KIND_TAGS[d.kind]);
  switch (d.kind) {
    case 'predefined':
      w.int(d.code);
      return;
    case 'contiguous':
      w.int(d.count);
      writeNode(w, d.base);
      return;
    case 'vector':
      w.int(d.count);
      w.int(d.blocklength);
      w.int(d.stride);
      writeNode(w, d.base);
      return;
    case 'hvector':
      w.int(d.count);
      w.int(d.blocklength);
      w.int(d.strideBytes);
      writeNode(w, d.base);
      return;
    case 'indexed':
      w.ints(d.blocklengths);
      w.ints(d.displacements);
      writeNode(w, d.base);
      return;
    case 'struct':
      w.ints(d.blocklengths);
      w.ints(d.byteDisplacements);
      for (const t of d.types) writeNode(w, t);
      return;
    case 'subarray':
      w.ints(d.sizes);
      w.ints(d.subsizes);
      w.ints(d.starts);
      w.u8(d.order === 'C' ? 0 : 1);
      writeNode(w, d.base);
      return;
    case 'resized':
      w.int(d.lowerBound);
      w.int(d.extent);
      writeNode(w, d.base);
      return;
  }
}

function readNode(r: Reader, depth: number): TypeDescriptor {
  if (depth > 1000) throw malformed('nesting too deep');
  const tag = r.u8();
  switch (tag) {
    case KIND_TAGS.predefined:
      return predefinedDescriptor(r.int());
    case KIND_TAGS.contiguous: {
      const count = r.int();
      return createContiguous(count, readNode(r, depth + 1));
    }
    case KIND_TAGS.vector: {
      const count = r.int();
      const blocklength = r.int();
      const stride = r.int();
      return createVector(count, blocklength, stride, readNode(r, depth + 1));
    }
    case KIND_TAGS.hvector: {
      const count = r.int();
      const blocklength = r.int();
      const strideBytes = r.int();
      return createHvector(count, blocklength, strideBytes, readNode(r, depth + 1));
    }
    case KIND_TAGS.indexed: {
      const bl = r.ints();
      const dl = r.ints();
      return createIndexed(bl, dl, readNode(r, depth + 1));
    }
    case KIND_TAGS.struct: {
      const bl = r.ints();
      const dl = r.ints();
      const types: TypeDescriptor[] = [];
      for (let i = 0; i < bl.length; i++) types.push(readNode(r, depth + 1));
      return createStruct(bl, dl, types);
    }
    case KIND_TAGS.subarray: {
      const sizes = r.ints();
      const subsizes = r.ints();
      const starts = r.ints();
      const order = r.u8() === 0 ? 'C' : 'F';
      return createSubarray(sizes, subsizes, starts, order, readNode(r, depth + 1));
    }
    case KIND_TAGS.resized: {
      const lowerBound = r.int();
      const extent = r.int();
      return createResized(readNode(r, depth + 1), lowerBound, extent);
    }
    default:
      throw malformed(`unknown kind tag ${tag}`);
  }
}

/** Encodes a descriptor into a compact, self-contained byte string. */
export function encodeDescriptor(d: TypeDescriptor): Uint8Array {
  const w = new Writer();
  w.u8(VERSION);
  writeNode(w, d);
  return w.finish();
}

/**
 * Rebuilds a descriptor written by encodeDescriptor (a fresh, frozen tree;
 * predefined leaves are the shared predefined descriptors).
 * @throws MPIError(ERR_INTERN) when the bytes are not a well-formed encoding.
 */
export function decodeDescriptor(bytes: Uint8Array): TypeDescriptor {
  const r = new Reader(bytes);
  const version = r.u8();
  if (version !== VERSION) throw malformed(`unknown version ${version}`);
  let d: TypeDescriptor;
  try {
    d = readNode(r, 0);
  } catch (err) {
    if (err instanceof Error && (err as { errorClass?: unknown }).errorClass === ERR_INTERN) throw err;
    throw malformed(err instanceof Error ? err.message : String(err));
  }
  if (!r.isAtEnd) throw malformed('trailing bytes');
  return d;
}
