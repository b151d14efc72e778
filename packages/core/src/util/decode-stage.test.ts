// The decode stage (decode-stage.ts) under the object codec: received bytes are decoded from one
// reused buffer, so no decoded value may alias it, a short or truncated message must not read an
// earlier message's bytes, shared memory's and a Buffer's bytes decode as before, and decoding a
// small message makes no DataView (msgpackr made one per message).
import { describe, expect, it } from 'vitest';
import { STAGE_BYTES } from './decode-stage.ts';
import { decodeObject, encodeObject } from './object-codec.ts';

/** The message bytes of `v`, copied out of the encoder's buffer (as the transport does). */
const bytesOf = (v: unknown): Uint8Array => encodeObject(v, 'send').slice();

/** Counts the DataViews made while `f` runs (msgpackr makes one with the global constructor). */
function dataViewsMadeBy(f: () => void): number {
  const Original = globalThis.DataView;
  let made = 0;
  globalThis.DataView = new Proxy(Original, {
    construct(target, args: unknown[], newTarget: Function): object {
      made++;
      return Reflect.construct(target, args, newTarget) as object;
    },
  });
  try {
    f();
  } finally {
    globalThis.DataView = Original;
  }
  return made;
}

describe('the decode stage', () => {
  it('no decoded binary, typed array or string aliases the stage: a later message leaves it as it was', () => {
    const plain = decodeObject(bytesOf({ step: 1, data: new Float64Array([1, 2]), b: new Uint8Array([7, 8, 9]) }), 'recv');
    const records = decodeObject(bytesOf(new Map<string, unknown>([['b', new Uint8Array([4, 5, 6])], ['s', 'x'.repeat(40)]])), 'recv');
    decodeObject(bytesOf({ step: 2, data: new Float64Array([3, 4]), b: new Uint8Array([0, 0, 0]) }), 'recv');
    decodeObject(bytesOf(new Map<string, unknown>([['b', new Uint8Array([0, 0, 0])], ['s', 'y'.repeat(40)]])), 'recv');
    expect(plain).toStrictEqual({ step: 1, data: new Float64Array([1, 2]), b: new Uint8Array([7, 8, 9]) });
    expect(records).toStrictEqual(new Map<string, unknown>([['b', new Uint8Array([4, 5, 6])], ['s', 'x'.repeat(40)]]));
  });

  it('a truncated message is refused, not completed from the longer message decoded before it', () => {
    const long = bytesOf({ a: 'x'.repeat(200), b: [1, 2, 3] });
    expect(decodeObject(long, 'recv')).toStrictEqual({ a: 'x'.repeat(200), b: [1, 2, 3] });
    expect(() => decodeObject(long.subarray(0, long.length - 1), 'recv')).toThrow();
    const records = bytesOf(new Map([['k', 'y'.repeat(100)]]));
    expect(decodeObject(records, 'recv')).toStrictEqual(new Map([['k', 'y'.repeat(100)]]));
    expect(() => decodeObject(records.subarray(0, records.length - 3), 'recv')).toThrow();
  });

  it("decodes shared memory's and a Buffer's bytes, and a message larger than the stage, as a plain view's", () => {
    const values = [{ s: 'z'.repeat(64), n: 3 }, new Map([['s', 'w'.repeat(64)]]), { big: 'q'.repeat(STAGE_BYTES + 10) }];
    for (const v of values) {
      const bytes = bytesOf(v);
      const shared = new Uint8Array(new SharedArrayBuffer(bytes.length + 8), 8);
      shared.set(bytes);
      expect(decodeObject(shared, 'recv')).toStrictEqual(v);
      expect(decodeObject(Buffer.from(bytes), 'recv')).toStrictEqual(v);
    }
    const binary = decodeObject(Buffer.from(bytesOf({ b: new Uint8Array([1]) })), 'recv') as { b: Uint8Array };
    expect(Buffer.isBuffer(binary.b)).toBe(false);
  });

  it('decoding a small message makes no DataView (msgpackr made one per message from its own bytes)', () => {
    const plain = bytesOf({ step: 1, data: new Float64Array([1, 2]) });
    const records = bytesOf(new Map([['a', 1]]));
    decodeObject(plain, 'recv'); // the stage's own DataView is made at its first use
    decodeObject(records, 'recv');
    const made = dataViewsMadeBy(() => {
      for (let i = 0; i < 50; i++) {
        decodeObject(plain.slice(), 'recv');
        decodeObject(records.slice(), 'recv');
      }
    });
    expect(made).toBe(0);
  });
});
