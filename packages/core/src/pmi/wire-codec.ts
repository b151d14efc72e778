/**
 * The bytes of the wire-up protocol's messages (protocol.ts): MessagePack, the subset its messages
 * use (nil, booleans, numbers, strings, binaries, arrays, maps with string keys), written and read
 * here rather than by msgpackr. Every rank runs the wire-up at init; msgpackr (with its optional
 * native string extractor and the child_process it loads to find its libc) cost an idle rank about
 * 2.3 MB of resident memory (issue 38), and a rank now loads it only at its first object message
 * (util/object-codec.ts). The bytes are what msgpackr's `useRecords: false` writes for the same
 * values, so either side may be read by the other (wire-codec.test.ts checks both ways).
 *
 * Encoding: a number is the smallest integer form when it is an integer of 32 bits, else a float64;
 * an object's map size is 16 bits (or 32) even when small, as msgpackr writes it;
 * undefined is msgpackr's form (fixext 1, type 0, as an object's field keeps its key); a Map is
 * a map; another object is the map of its own enumerable keys. A bigint, function or symbol is a
 * TypeError (the protocol carries none).
 *
 * Decoding never trusts a length: every read is checked against the end of the input, containers
 * nest at most MAX_DEPTH deep and claim no more entries than bytes remain, and trailing bytes are
 * an error. A map's key "__proto__" becomes "__proto_" (as msgpackr does). Binaries are views of the
 * input (as msgpackr's). Errors are thrown as WireCodecError; protocol.ts turns them into "malformed".
 */

/** Deepest nesting of arrays and maps a decoded message may have (the protocol's use about 5). */
const MAX_DEPTH = 64;

/** A malformed MessagePack input, or a value the protocol cannot carry. */
export class WireCodecError extends Error {
  override readonly name = 'WireCodecError';
}

/** Writes MessagePack into a buffer that doubles as needed. */
class Writer {
  buf = Buffer.allocUnsafe(256);
  pos = 0;

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** A head byte and a big-endian unsigned length of `bytes` bytes. */
  head(b: number, value: number, bytes: 1 | 2 | 4): void {
    this.ensure(1 + bytes);
    this.buf[this.pos++] = b;
    this.buf.writeUIntBE(value, this.pos, bytes);
    this.pos += bytes;
  }

  /** A length for the three sizes of a kind (8, 16, 32 bits), with an optional fix form below `fixLimit`. */
  sized(length: number, fix: number, fixLimit: number, b8: number | null, b16: number, b32: number): void {
    if (length < fixLimit) this.byte(fix | length);
    else if (b8 !== null && length < 0x100) this.head(b8, length, 1);
    else if (length < 0x10000) this.head(b16, length, 2);
    else this.head(b32, length, 4);
  }

  number(v: number): void {
    if (Number.isInteger(v) && v >= -0x80000000 && v <= 0xffffffff) {
      if (v >= 0) {
        if (v < 0x80) this.byte(v);
        else if (v < 0x100) this.head(0xcc, v, 1);
        else if (v < 0x10000) this.head(0xcd, v, 2);
        else this.head(0xce, v, 4);
      } else if (v >= -0x20) this.byte(v & 0xff);
      else {
        const [b, n] = v >= -0x80 ? [0xd0, 1] as const : v >= -0x8000 ? [0xd1, 2] as const : [0xd2, 4] as const;
        this.ensure(1 + n);
        this.buf[this.pos++] = b;
        this.buf.writeIntBE(v, this.pos, n);
        this.pos += n;
      }
      return;
    }
    this.ensure(9);
    this.buf[this.pos++] = 0xcb;
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  string(s: string): void {
    const length = Buffer.byteLength(s, 'utf8');
    this.sized(length, 0xa0, 32, 0xd9, 0xda, 0xdb);
    this.ensure(length);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  value(v: unknown, depth: number): void {
    if (depth > MAX_DEPTH) throw new WireCodecError(`a value nested deeper than ${MAX_DEPTH}`);
    switch (typeof v) {
      case 'undefined':
        this.ensure(3);
        this.buf[this.pos++] = 0xd4;
        this.buf[this.pos++] = 0;
        this.buf[this.pos++] = 0;
        return;
      case 'boolean':
        this.byte(v ? 0xc3 : 0xc2);
        return;
      case 'number':
        this.number(v);
        return;
      case 'string':
        this.string(v);
        return;
      case 'object':
        break;
      default:
        throw new WireCodecError(`the wire-up protocol carries no ${typeof v}`);
    }
    if (v === null) {
      this.byte(0xc0);
    } else if (v instanceof Uint8Array) {
      this.sized(v.byteLength, 0, 0, 0xc4, 0xc5, 0xc6);
      this.ensure(v.byteLength);
      this.buf.set(v, this.pos);
      this.pos += v.byteLength;
    } else if (Array.isArray(v)) {
      this.sized(v.length, 0x90, 16, null, 0xdc, 0xdd);
      for (const x of v) this.value(x, depth + 1);
    } else {
      const isMap = v instanceof Map;
      const entries = isMap ? [...(v as Map<unknown, unknown>)] : Object.entries(v);
      // msgpackr writes an object's size as 16 bits or more whatever it is (it fills the size in after the keys).
      this.sized(entries.length, 0x80, isMap ? 16 : 0, null, 0xde, 0xdf);
      for (const [k, x] of entries) {
        if (typeof k !== 'string') throw new WireCodecError('the wire-up protocol carries maps with string keys only');
        this.string(k);
        this.value(x, depth + 1);
      }
    }
  }
}

/** `value` as MessagePack, in a fresh buffer of its own. */
export function packWire(value: unknown): Buffer {
  const w = new Writer();
  w.value(value, 0);
  return Buffer.from(w.buf.subarray(0, w.pos));
}

/** Reads one MessagePack value from a buffer, checking every length against its end. */
class Reader {
  readonly buf: Buffer;
  pos = 0;
  constructor(buf: Buffer) {
    this.buf = buf;
  }

  need(n: number): number {
    const at = this.pos;
    if (n > this.buf.length - at) throw new WireCodecError('the input ends inside a value');
    this.pos += n;
    return at;
  }

  uint(bytes: 1 | 2 | 4): number {
    return this.buf.readUIntBE(this.need(bytes), bytes);
  }

  /** A container's entry count: each entry takes at least `perEntry` bytes of what is left. */
  count(n: number, perEntry: number): number {
    if (n * perEntry > this.buf.length - this.pos) throw new WireCodecError('a container claims more entries than the input holds');
    return n;
  }

  string(length: number): string {
    const at = this.need(length);
    return this.buf.toString('utf8', at, at + length);
  }

  array(n: number, depth: number): unknown[] {
    const out = new Array<unknown>(this.count(n, 1));
    for (let i = 0; i < n; i++) out[i] = this.value(depth + 1);
    return out;
  }

  map(n: number, depth: number): Record<string, unknown> {
    this.count(n, 2);
    const out: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) {
      const k = this.value(depth + 1);
      if (typeof k !== 'string' && typeof k !== 'number') throw new WireCodecError('a map key is neither a string nor a number');
      const key = k === '__proto__' ? '__proto_' : String(k);
      out[key] = this.value(depth + 1);
    }
    return out;
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw new WireCodecError(`a value nested deeper than ${MAX_DEPTH}`);
    const b = this.buf[this.need(1)]!;
    if (b < 0x80) return b;
    if (b >= 0xe0) return b - 0x100;
    if (b < 0x90) return this.map(b & 0x0f, depth);
    if (b < 0xa0) return this.array(b & 0x0f, depth);
    if (b < 0xc0) return this.string(b & 0x1f);
    switch (b) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: case 0xc5: case 0xc6: {
        const length = this.uint(b === 0xc4 ? 1 : b === 0xc5 ? 2 : 4);
        const at = this.need(length);
        return this.buf.subarray(at, at + length);
      }
      case 0xca: return this.buf.readFloatBE(this.need(4));
      case 0xcb: return this.buf.readDoubleBE(this.need(8));
      case 0xcc: return this.uint(1);
      case 0xcd: return this.uint(2);
      case 0xce: return this.uint(4);
      case 0xcf: return Number(this.buf.readBigUInt64BE(this.need(8)));
      case 0xd0: return this.buf.readInt8(this.need(1));
      case 0xd1: return this.buf.readInt16BE(this.need(2));
      case 0xd2: return this.buf.readInt32BE(this.need(4));
      case 0xd3: return Number(this.buf.readBigInt64BE(this.need(8)));
      case 0xd4: {
        const at = this.need(2);
        if (this.buf[at] === 0 && this.buf[at + 1] === 0) return undefined;
        throw new WireCodecError('an extension the wire-up protocol does not use');
      }
      case 0xd9: return this.string(this.uint(1));
      case 0xda: return this.string(this.uint(2));
      case 0xdb: return this.string(this.uint(4));
      case 0xdc: return this.array(this.uint(2), depth);
      case 0xdd: return this.array(this.uint(4), depth);
      case 0xde: return this.map(this.uint(2), depth);
      case 0xdf: return this.map(this.uint(4), depth);
      default: throw new WireCodecError(`a MessagePack type the wire-up protocol does not use (0x${b.toString(16)})`);
    }
  }
}

/**
 * The one MessagePack value `data` holds.
 * @throws WireCodecError when `data` is malformed, holds a form the protocol does not use, or has bytes after the value
 */
export function unpackWire(data: Uint8Array): unknown {
  const r = new Reader(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  const value = r.value(0);
  if (r.pos !== r.buf.length) throw new WireCodecError('bytes after the value');
  return value;
}
