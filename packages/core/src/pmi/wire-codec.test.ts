// The wire-up protocol's MessagePack (wire-codec.ts) against msgpackr with `useRecords: false`, the
// codec it replaced: the same bytes for the protocol's kinds of value, each side reads the other's,
// and malformed input is a WireCodecError (never a RangeError, a hang or a huge allocation).
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { WireCodecError, packWire, unpackWire } from './wire-codec.ts';

const msgpackr = new Packr({ useRecords: false });

/** The values the protocol's messages hold: no undefined inside arrays, keys that are not "__proto__". */
const wireValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null), fc.boolean(), fc.integer({ min: -0x80000000, max: 0xffffffff }), fc.double({ noNaN: true }),
    fc.maxSafeInteger(), fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 300 }),
    fc.array(tie('value'), { maxLength: 20 }),
    fc.dictionary(fc.string().filter((k) => k !== '__proto__'), tie('value'), { maxKeys: 20 }),
  ),
})).value;

/** Lengths on both sides of each size boundary (fix, 8, 16 and 32 bits). */
const LENGTHS = [0, 15, 16, 31, 32, 255, 256, 65535, 65536, 70000];

describe('wire-codec (the wire-up protocol\'s MessagePack)', () => {
  it('writes the bytes msgpackr writes for arbitrary protocol values', () => {
    fc.assert(fc.property(wireValue, (v) => {
      expect(packWire(v).equals(Buffer.from(msgpackr.pack(v)))).toBe(true);
    }));
  });

  it('writes the bytes msgpackr writes at every length boundary of strings, binaries, arrays and maps', () => {
    for (const n of LENGTHS) {
      const object = Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
      const values: unknown[] = ['x'.repeat(n), 'é'.repeat(n), new Uint8Array(n).fill(7), Array.from({ length: n }, (_, i) => i)];
      // msgpackr refuses an object of more than 65,535 keys (its 16-bit map size); this codec writes a 32-bit one.
      if (n < 0x10000) values.push(object);
      else expect(unpackWire(packWire(object))).toEqual(object);
      for (const v of values) expect(packWire(v).equals(Buffer.from(msgpackr.pack(v))), `length ${n}`).toBe(true);
    }
    for (const x of [0, 127, 128, 255, 256, 65535, 65536, 0xffffffff, 2 ** 32, -1, -32, -33, -128, -129, -32768, -32769, -0x80000000, -0x80000001, 0.5, -0, Infinity, -Infinity, NaN]) {
      expect(packWire(x).equals(Buffer.from(msgpackr.pack(x))), `number ${x}`).toBe(true);
    }
  });

  it('reads what msgpackr writes, and msgpackr reads what it writes', () => {
    fc.assert(fc.property(wireValue, (v) => {
      const expected = msgpackr.unpack(msgpackr.pack(v)) as unknown;
      expect(unpackWire(Buffer.from(msgpackr.pack(v)))).toEqual(expected);
      expect(msgpackr.unpack(packWire(v))).toEqual(expected);
    }));
  });

  it('keeps an object field that is undefined, as msgpackr does, and reads msgpackr\'s 64-bit and float32 forms', () => {
    expect(unpackWire(packWire({ a: undefined, b: 1 }))).toEqual({ a: undefined, b: 1 });
    expect(Object.keys(unpackWire(packWire({ a: undefined })) as object)).toEqual(['a']);
    expect(unpackWire(Buffer.from([0xcf, 0, 0, 0, 1, 0, 0, 0, 0]))).toBe(2 ** 32);
    expect(unpackWire(Buffer.from([0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]))).toBe(-2);
    expect(unpackWire(Buffer.from([0xca, 0x3f, 0xc0, 0, 0]))).toBe(1.5);
  });

  it('reads a Uint8Array that is not a Buffer, and a view into a larger buffer', () => {
    const bytes = packWire({ t: 'ack', id: 7 });
    const outer = new Uint8Array(bytes.length + 10);
    outer.set(bytes, 5);
    expect(unpackWire(outer.subarray(5, 5 + bytes.length))).toEqual({ t: 'ack', id: 7 });
    expect(unpackWire(Uint8Array.from(bytes))).toEqual({ t: 'ack', id: 7 });
  });

  it('renames a "__proto__" key as msgpackr does, so a message cannot set a prototype', () => {
    const bytes = Buffer.from([0x81, 0xa9, ...Buffer.from('__proto__'), 0x81, 0xa1, 0x78, 0x01]);
    const v = unpackWire(bytes) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(v['__proto_']).toEqual({ x: 1 });
    expect((v as { x?: unknown }).x).toBeUndefined();
  });

  it('refuses what the protocol carries no form of, naming it', () => {
    expect(() => packWire({ a: 1n })).toThrow(/carries no bigint/);
    expect(() => packWire({ f: () => 1 })).toThrow(/carries no function/);
    expect(() => packWire(new Map([[1, 2]]))).toThrow(/string keys only/);
    expect(() => packWire(new Map([['a', 2]]))).not.toThrow();
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(() => packWire(deep)).toThrow(WireCodecError);
  });

  it('refuses malformed input with a WireCodecError: truncated, trailing bytes, unknown forms, deep nesting, lying lengths', () => {
    const valid = packWire({ t: 'hello', v: 3, rank: 1, pid: 99, nonce: new Uint8Array(32), proof: new Uint8Array(32) });
    for (let n = 0; n < valid.length; n++) expect(() => unpackWire(valid.subarray(0, n)), `cut at ${n}`).toThrow(WireCodecError);
    expect(() => unpackWire(Buffer.concat([valid, Buffer.from([0])]))).toThrow(/bytes after/);
    for (const b of [0xc1, 0xc7, 0xc8, 0xc9, 0xd5, 0xd6, 0xd7, 0xd8]) expect(() => unpackWire(Buffer.from([b, 0, 0, 0, 0, 0]))).toThrow(WireCodecError);
    expect(() => unpackWire(Buffer.from([0xd4, 0x4d, 0]))).toThrow(/extension/);
    expect(() => unpackWire(Buffer.alloc(1000, 0x91))).toThrow(/deeper/);
    // An array and a map that claim 2^32-1 entries in a few bytes: refused before any allocation.
    expect(() => unpackWire(Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff, 0]))).toThrow(/more entries/);
    expect(() => unpackWire(Buffer.from([0xdf, 0xff, 0xff, 0xff, 0xff, 0, 0]))).toThrow(/more entries/);
    expect(() => unpackWire(Buffer.from([0xc6, 0xff, 0xff, 0xff, 0xff, 0]))).toThrow(/ends inside/);
    expect(() => unpackWire(Buffer.from([0x81, 0xc0, 0x01]))).toThrow(/map key/);
  });

  it('never throws anything but a WireCodecError on random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        unpackWire(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(WireCodecError);
      }
    }), { numRuns: 2000 });
  });
});
