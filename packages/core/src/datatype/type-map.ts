/**
 * Derives the layout of a datatype from its descriptor: the bounds summary
 * (TypeInfo: size, extent, lb/ub, true lb/ub, element type) and the flattened
 * type map (TypeMap: TypeInfo plus the contiguous byte blocks in type-map
 * order). Source: MPI 3.1 §4.1 (type maps, §4.1.6 lb/ub/extent with the
 * alignment epsilon, §4.1.7 explicit bounds markers, §4.1.3 subarray).
 *
 * Rules, per constructor, for a base B replicated at displacements D (bytes):
 *   lb = min(D) + lb(B), ub = max(D) + ub(B)          (B's markers carry over)
 *   trueLb = min(D) + trueLb(B), trueUb = max(D) + trueUb(B)
 * struct combines members: when any member carries explicit bounds markers
 * (from resized or subarray), lb/ub are the extreme markers only (§4.1.7);
 * otherwise the extreme entries, and then ub is padded so that the extent is
 * a multiple of the largest member alignment (the epsilon of §4.1.6; the
 * alignment of a primitive is its size). Like MPICH and Open MPI, only struct
 * pads: a vector of FLOAT64 with a 12-byte stride keeps extent 20.
 * resized and subarray set explicit markers. A member with no entries and no
 * markers (count 0) contributes nothing; an empty type has lb = ub = 0.
 *
 * Blocks are in type-map order (the order pack uses), offsets relative to the
 * buffer origin (displacement 0), and a block is merged into the previous one
 * when it starts where that one ends and has the same primitive type.
 *
 * Both results are cached per thread in WeakMaps keyed by the descriptor
 * object; a descriptor decoded in another thread gets its own cache entry.
 */
import { ERR_ARG, ERR_NO_MEM, mpiError } from '../util/index.ts';
import type { TypeDescriptor } from './descriptor.ts';
import { typeSize, type TypeCode } from './predefined.ts';

/** The bounds summary of a datatype (cheap to compute; no blocks). */
export interface TypeInfo {
  /** The descriptor this was derived from. */
  readonly descriptor: TypeDescriptor;
  /** The primitive type of every entry, or null when entries differ (mixed struct) or there are none of any type. */
  readonly typeCode: TypeCode | null;
  /** Bytes of data in one item (sum of entry sizes). */
  readonly size: number;
  /** ub - lb: the distance between consecutive items of a count. */
  readonly extent: number;
  readonly lb: number;
  readonly ub: number;
  /** Lowest byte touched by an item (0 when size is 0). */
  readonly trueLb: number;
  /** One past the highest byte touched by an item (0 when size is 0). */
  readonly trueUb: number;
  /** trueUb - trueLb. */
  readonly trueExtent: number;
  /** Largest primitive alignment (1 for an empty type). */
  readonly alignment: number;
  /** True when lb / ub come from explicit markers (resized, subarray, or a struct member that has them). */
  readonly hasLbMarker: boolean;
  readonly hasUbMarker: boolean;
  /** Primitive elements per item. */
  readonly elementCount: number;
}

/** The flattened type map: TypeInfo plus the byte blocks of one item. */
export interface TypeMap extends TypeInfo {
  readonly blockCount: number;
  /** Byte offset of each block from the item origin (may be negative). */
  readonly blockOffsets: Float64Array;
  /** Byte length of each block. */
  readonly blockLengths: Float64Array;
  /** Primitive type code of each block's elements. */
  readonly blockTypes: Uint8Array;
  /** Prefix sums of blockLengths (length blockCount + 1): where each block starts in the packed item. */
  readonly blockPackedStarts: Float64Array;
  /**
   * True when `count` items occupy one gap-free run of count * size bytes
   * starting at trueLb (each block starts where the previous one ends, and
   * extent == size), or size is 0.
   */
  readonly isContiguous: boolean;
  /** True when the extent and every block offset and length are multiples of 4 (pack may copy 32-bit words). */
  readonly isWordAligned: boolean;
}

/**
 * Most blocks a flattened type may have (16 Mi blocks is about 280 MB of
 * tables). Beyond it, commit fails with ERR_NO_MEM instead of exhausting memory.
 */
export const MAX_TYPE_BLOCKS = 1 << 24;

const INFO_CACHE = new WeakMap<TypeDescriptor, TypeInfo>();
const MAP_CACHE = new WeakMap<TypeDescriptor, TypeMap>();

// ---------------------------------------------------------------- summary

interface Bounds {
  size: number;
  lb: number;
  ub: number;
  trueLb: number;
  trueUb: number;
  hasLb: boolean;
  hasUb: boolean;
  alignment: number;
  elementCount: number;
  /** No entries and no markers: contributes nothing to an enclosing type. */
  isEmpty: boolean;
}

const EMPTY: Bounds = {
  size: 0,
  lb: 0,
  ub: 0,
  trueLb: 0,
  trueUb: 0,
  hasLb: false,
  hasUb: false,
  alignment: 1,
  elementCount: 0,
  isEmpty: true,
};

/** Bounds of n >= 1 copies of `b` whose displacements range over [minDisp, maxDisp]. */
function replicate(b: TypeInfo, n: number, minDisp: number, maxDisp: number): Bounds {
  const isEmptyBase = b.size === 0 && !b.hasLbMarker && !b.hasUbMarker;
  if (n === 0 || isEmptyBase) return EMPTY;
  return {
    size: b.size * n,
    lb: minDisp + b.lb,
    ub: maxDisp + b.ub,
    trueLb: b.size > 0 ? minDisp + b.trueLb : 0,
    trueUb: b.size > 0 ? maxDisp + b.trueUb : 0,
    hasLb: b.hasLbMarker,
    hasUb: b.hasUbMarker,
    alignment: b.alignment,
    elementCount: b.elementCount * n,
    isEmpty: false,
  };
}

function hvectorBounds(b: TypeInfo, count: number, blocklength: number, strideBytes: number): Bounds {
  const last = (count - 1) * strideBytes;
  return replicate(b, count * blocklength, Math.min(0, last), Math.max(0, last) + (blocklength - 1) * b.extent);
}

function structBounds(members: readonly Bounds[], isPadded: boolean): Bounds {
  const live = members.filter((m) => !m.isEmpty);
  if (live.length === 0) return EMPTY;
  const withLb = live.filter((m) => m.hasLb);
  const withUb = live.filter((m) => m.hasUb);
  const data = live.filter((m) => m.size > 0);
  const lb = Math.min(...(withLb.length > 0 ? withLb : live).map((m) => m.lb));
  let ub = Math.max(...(withUb.length > 0 ? withUb : live).map((m) => m.ub));
  const alignment = Math.max(...live.map((m) => m.alignment));
  if (isPadded && withUb.length === 0) {
    const rem = (ub - lb) % alignment;
    if (rem !== 0) ub += alignment - rem;
  }
  return {
    size: live.reduce((s, m) => s + m.size, 0),
    lb,
    ub,
    trueLb: data.length > 0 ? Math.min(...data.map((m) => m.trueLb)) : 0,
    trueUb: data.length > 0 ? Math.max(...data.map((m) => m.trueUb)) : 0,
    hasLb: withLb.length > 0,
    hasUb: withUb.length > 0,
    alignment,
    elementCount: live.reduce((s, m) => s + m.elementCount, 0),
    isEmpty: false,
  };
}

function shift(b: Bounds, by: number): Bounds {
  if (b.isEmpty) return b;
  return { ...b, lb: b.lb + by, ub: b.ub + by, trueLb: b.size > 0 ? b.trueLb + by : 0, trueUb: b.size > 0 ? b.trueUb + by : 0 };
}

/** Subarray strides in base items per dimension, and the dimension order slowest-first. */
function subarrayGeometry(d: Extract<TypeDescriptor, { kind: 'subarray' }>): { dims: number[]; strides: number[] } {
  const n = d.sizes.length;
  const dims = d.order === 'C' ? [...Array(n).keys()] : [...Array(n).keys()].reverse();
  const strides = new Array<number>(n).fill(0);
  let s = 1;
  for (let k = n - 1; k >= 0; k--) {
    strides[dims[k]!] = s;
    s *= d.sizes[dims[k]!]!;
  }
  return { dims, strides };
}

function boundsOf(d: TypeDescriptor): Bounds {
  switch (d.kind) {
    case 'predefined': {
      const s = typeSize(d.code);
      return { size: s, lb: 0, ub: s, trueLb: 0, trueUb: s, hasLb: false, hasUb: false, alignment: s, elementCount: 1, isEmpty: false };
    }
    case 'contiguous':
      return hvectorBounds(typeInfoOf(d.base), 1, d.count, 0);
    case 'vector': {
      const b = typeInfoOf(d.base);
      return hvectorBounds(b, d.count, d.blocklength, d.stride * b.extent);
    }
    case 'hvector':
      return hvectorBounds(typeInfoOf(d.base), d.count, d.blocklength, d.strideBytes);
    case 'indexed': {
      const b = typeInfoOf(d.base);
      return structBounds(
        d.blocklengths.map((bl, i) => {
          const start = d.displacements[i]! * b.extent;
          return replicate(b, bl, start, start + (bl - 1) * b.extent);
        }),
        false,
      );
    }
    case 'struct':
      return structBounds(
        d.types.map((t, i) => shift(hvectorBounds(typeInfoOf(t), 1, d.blocklengths[i]!, 0), d.byteDisplacements[i]!)),
        true,
      );
    case 'subarray': {
      const b = typeInfoOf(d.base);
      const { strides } = subarrayGeometry(d);
      let n = 1;
      let first = 0;
      let last = 0;
      for (let k = 0; k < d.sizes.length; k++) {
        n *= d.subsizes[k]!;
        first += d.starts[k]! * strides[k]!;
        last += (d.starts[k]! + d.subsizes[k]! - 1) * strides[k]!;
      }
      const total = d.sizes.reduce((p, s) => p * s, 1);
      const inner = replicate(b, n, first * b.extent, last * b.extent);
      return { ...inner, lb: 0, ub: total * b.extent, hasLb: true, hasUb: true, isEmpty: false };
    }
    case 'resized': {
      const b = typeInfoOf(d.base);
      return {
        size: b.size,
        lb: d.lowerBound,
        ub: d.lowerBound + d.extent,
        trueLb: b.trueLb,
        trueUb: b.trueUb,
        hasLb: true,
        hasUb: true,
        alignment: b.alignment,
        elementCount: b.elementCount,
        isEmpty: false,
      };
    }
  }
}

function homogeneousCode(d: TypeDescriptor): TypeCode | null {
  switch (d.kind) {
    case 'predefined':
      return d.code;
    case 'struct': {
      if (d.types.length === 0) return null;
      const first = typeInfoOf(d.types[0]!).typeCode;
      for (const t of d.types) if (typeInfoOf(t).typeCode !== first) return null;
      return first;
    }
    default:
      return typeInfoOf(d.base).typeCode;
  }
}

/**
 * The bounds summary of a datatype (cached per thread). Cheap: no blocks are built.
 * @throws MPIError(ERR_ARG) when a size, bound or extent is not a safe integer
 *   (the layout is too large to address); the call named is 'Datatype.<kind>'.
 */
export function typeInfoOf(d: TypeDescriptor): TypeInfo {
  const cached = INFO_CACHE.get(d);
  if (cached !== undefined) return cached;
  const b = boundsOf(d);
  for (const v of [b.size, b.lb, b.ub, b.trueLb, b.trueUb, b.ub - b.lb]) {
    if (!Number.isSafeInteger(v)) {
      throw mpiError(ERR_ARG, `Datatype.${d.kind}`, `the datatype is too large: a size or bound (${v}) exceeds 2**53 bytes`);
    }
  }
  const info: TypeInfo = Object.freeze({
    descriptor: d,
    typeCode: homogeneousCode(d),
    size: b.size,
    extent: b.ub - b.lb,
    lb: b.lb,
    ub: b.ub,
    trueLb: b.trueLb,
    trueUb: b.trueUb,
    trueExtent: b.trueUb - b.trueLb,
    alignment: b.alignment,
    hasLbMarker: b.hasLb,
    hasUbMarker: b.hasUb,
    elementCount: b.elementCount,
  });
  INFO_CACHE.set(d, info);
  return info;
}

// ---------------------------------------------------------------- flattening

class BlockBuilder {
  offsets: number[] = [];
  lengths: number[] = [];
  types: number[] = [];
  #last = -1;

  add(offset: number, length: number, type: number): void {
    if (length === 0) return;
    const l = this.#last;
    if (l >= 0 && this.types[l] === type && this.offsets[l]! + this.lengths[l]! === offset) {
      this.lengths[l] = this.lengths[l]! + length;
      return;
    }
    if (l + 1 >= MAX_TYPE_BLOCKS) {
      throw mpiError(ERR_NO_MEM, 'Datatype.commit', `the datatype has more than ${MAX_TYPE_BLOCKS} separate blocks`);
    }
    this.offsets.push(offset);
    this.lengths.push(length);
    this.types.push(type);
    this.#last = l + 1;
  }

  /** Appends `n` consecutive items of `m` (each one extent apart) starting at `at`. */
  addItems(m: TypeMap, at: number, n: number): void {
    if (n === 0 || m.size === 0) return;
    if (m.isContiguous && m.blockCount === 1) {
      this.add(at + m.trueLb, n * m.size, m.blockTypes[0]!);
      return;
    }
    for (let k = 0; k < n; k++) {
      const base = at + k * m.extent;
      for (let j = 0; j < m.blockCount; j++) this.add(base + m.blockOffsets[j]!, m.blockLengths[j]!, m.blockTypes[j]!);
    }
  }
}

function flattenInto(d: TypeDescriptor, out: BlockBuilder): void {
  switch (d.kind) {
    case 'predefined':
      out.add(0, typeSize(d.code), d.code);
      return;
    case 'contiguous':
      out.addItems(typeMapOf(d.base), 0, d.count);
      return;
    case 'vector':
    case 'hvector': {
      const m = typeMapOf(d.base);
      const stride = d.kind === 'vector' ? d.stride * m.extent : d.strideBytes;
      if (m.isContiguous && m.blockCount === 1 && stride === d.blocklength * m.extent) {
        out.addItems(m, 0, d.count * d.blocklength);
        return;
      }
      for (let i = 0; i < d.count; i++) out.addItems(m, i * stride, d.blocklength);
      return;
    }
    case 'indexed': {
      const m = typeMapOf(d.base);
      for (let i = 0; i < d.blocklengths.length; i++) out.addItems(m, d.displacements[i]! * m.extent, d.blocklengths[i]!);
      return;
    }
    case 'struct':
      for (let i = 0; i < d.types.length; i++) out.addItems(typeMapOf(d.types[i]!), d.byteDisplacements[i]!, d.blocklengths[i]!);
      return;
    case 'subarray': {
      const m = typeMapOf(d.base);
      const { dims, strides } = subarrayGeometry(d);
      if (d.subsizes.some((s) => s === 0)) return;
      const n = dims.length;
      const innermost = dims[n - 1]!;
      const run = d.subsizes[innermost]!;
      // Odometer over the outer dimensions, slowest first.
      const idx = new Array<number>(n - 1).fill(0);
      for (;;) {
        let item = d.starts[innermost]!;
        for (let k = 0; k < n - 1; k++) item += (d.starts[dims[k]!]! + idx[k]!) * strides[dims[k]!]!;
        out.addItems(m, item * m.extent, run);
        let k = n - 2;
        while (k >= 0) {
          idx[k] = idx[k]! + 1;
          if (idx[k]! < d.subsizes[dims[k]!]!) break;
          idx[k] = 0;
          k--;
        }
        if (k < 0) return;
      }
    }
    case 'resized': {
      const m = typeMapOf(d.base);
      for (let j = 0; j < m.blockCount; j++) out.add(m.blockOffsets[j]!, m.blockLengths[j]!, m.blockTypes[j]!);
      return;
    }
  }
}

function isChained(offsets: readonly number[], lengths: readonly number[]): boolean {
  for (let j = 1; j < offsets.length; j++) if (offsets[j] !== offsets[j - 1]! + lengths[j - 1]!) return false;
  return true;
}

/**
 * The flattened type map of a datatype (cached per thread). Building it is
 * what commit does; it costs time and memory proportional to the number of
 * separate blocks.
 * @throws MPIError(ERR_NO_MEM) when the type has more than MAX_TYPE_BLOCKS blocks.
 * @throws MPIError(ERR_ARG) as typeInfoOf.
 */
export function typeMapOf(d: TypeDescriptor): TypeMap {
  const cached = MAP_CACHE.get(d);
  if (cached !== undefined) return cached;
  const info = typeInfoOf(d);
  const out = new BlockBuilder();
  flattenInto(d, out);
  const blockCount = out.offsets.length;
  const blockLengths = Float64Array.from(out.lengths);
  const blockPackedStarts = new Float64Array(blockCount + 1);
  for (let j = 0; j < blockCount; j++) blockPackedStarts[j + 1] = blockPackedStarts[j]! + blockLengths[j]!;
  const map: TypeMap = Object.freeze({
    ...info,
    blockCount,
    blockOffsets: Float64Array.from(out.offsets),
    blockLengths,
    blockTypes: Uint8Array.from(out.types),
    blockPackedStarts,
    isContiguous: info.size === 0 || (info.size === info.extent && isChained(out.offsets, out.lengths)),
    isWordAligned: info.extent % 4 === 0 && out.offsets.every((o) => o % 4 === 0) && out.lengths.every((l) => l % 4 === 0),
  });
  MAP_CACHE.set(d, map);
  return map;
}
