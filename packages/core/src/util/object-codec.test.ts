// The object codec against Node's own structuredClone(): a corpus of the types the rules keep, shared
// references and cycles, registered classes, the refusals (ERR_ARG naming the path), the documented
// differences, and a property test: decode(encode(v)) deep-equals structuredClone(v).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_OTHER, MPIError } from './errors.ts';
import { registerClass } from './class-registry.ts';
import { decodeObject, encodeObject } from './object-codec.ts';

/** A round trip as a message makes it: encode, copy out of the codec's buffer, decode. */
const roundTrip = (v: unknown): unknown => decodeObject(encodeObject(v, 'send').slice(), 'recv');

function refusal(v: unknown): MPIError {
  try {
    roundTrip(v);
  } catch (e) {
    expect(e).toBeInstanceOf(MPIError);
    return e as MPIError;
  }
  throw new Error('the value was not refused');
}

class Point {
  x: number;
  y: number;
  constructor(x = 0, y = 0) {
    this.x = x;
    this.y = y;
  }
  norm(): number {
    return Math.hypot(this.x, this.y);
  }
}
class ListNode {
  value: number;
  next: ListNode | null = null;
  prev: ListNode | null = null;
  constructor(value: number) {
    this.value = value;
  }
}
class NotRegistered {
  a = 1;
}
class AppError extends Error {
  code = 7;
}
registerClass(Point);
registerClass(ListNode, { name: 'test.ListNode' });
registerClass(AppError);

describe('object codec: what survives, as structuredClone() gives it', () => {
  const corpus: Record<string, unknown> = {
    'number': 3.25, 'NaN': NaN, 'Infinity': -Infinity, 'string': 'héllo ✓', 'empty string': '', 'true': true, 'null': null,
    'undefined': undefined, 'int32 edge': -(2 ** 31), 'large integer': 2 ** 53 - 1,
    'BigInt small': 5n, 'BigInt int64 edge': -(2n ** 63n), 'BigInt uint64': 2n ** 64n - 1n, 'BigInt huge': 3n ** 200n, 'BigInt huge negative': -(7n ** 90n),
    'Map': new Map<unknown, unknown>([[1, 'one'], ['k', { v: [1, 2] }], [{ objKey: true }, new Set([1])]]),
    'empty Map': new Map(),
    'Set': new Set([1, 'a', { b: 2 }, [3]]),
    'Date': new Date(Date.UTC(2026, 10, 28, 13, 0, 0, 123)), 'Date before 1970': new Date(-1234567890123), 'Date far future': new Date(8.64e15),
    'Date invalid': new Date(NaN),
    'RegExp': /a[bc]+\d?$/giu,
    'typed arrays': [new Int8Array([-1, 2]), new Uint8Array([255]), new Uint8ClampedArray([9]), new Int16Array([-300]), new Uint16Array([60000]),
      new Int32Array([-7]), new Uint32Array([4e9]), new Float32Array([1.5]), new Float64Array([Math.PI]), new BigInt64Array([-5n]), new BigUint64Array([2n ** 63n])],
    'DataView': new DataView(new Uint8Array([1, 2, 3]).buffer),
    'ArrayBuffer': new Uint8Array([4, 5, 6]).buffer,
    'Error': new Error('plain'), 'TypeError with cause': new TypeError('bad', { cause: { why: 'x' } }), 'RangeError': new RangeError('r'),
    'undefined property': { a: undefined, b: 1 },
    'nested': { list: [1, { deep: [new Map([['x', new Date(0)]])] }], s: new Set([new Float64Array([1])]) },
    'null prototype object': Object.assign(Object.create(null) as object, { a: 1 }),
    'object with a constructor key': { constructor: 'mine', x: 1 },
    'many keys': Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i])),
  };
  for (const [name, v] of Object.entries(corpus)) {
    it(name, () => {
      expect(roundTrip(v)).toStrictEqual(structuredClone(v));
    });
  }

  it('an Error keeps its class, message, cause and stack', () => {
    const e = new TypeError('bad', { cause: 42 });
    const out = roundTrip(e) as TypeError;
    const ref = structuredClone(e);
    expect(out).toBeInstanceOf(TypeError);
    expect([out.name, out.message, out.cause, out.stack]).toEqual([ref.name, ref.message, ref.cause, ref.stack]);
    expect(Object.keys(out)).toEqual([]); // message and stack stay non-enumerable
  });

  it('a missing property stays missing, an undefined one stays present', () => {
    const out = roundTrip({ a: undefined }) as object;
    expect(Object.hasOwn(out, 'a')).toBe(true);
    expect(Object.hasOwn(roundTrip({}) as object, 'a')).toBe(false);
  });

  it('a Buffer arrives as a Uint8Array', () => {
    const out = roundTrip(Buffer.from('hi'));
    expect(out).toStrictEqual(structuredClone(Buffer.from('hi')));
    expect(Buffer.isBuffer(out)).toBe(false);
  });

  it('decodes bytes handed over in a Buffer the same', () => {
    const bytes = Buffer.from(encodeObject({ b: new Uint8Array([1, 2]) }, 'send'));
    expect(decodeObject(bytes, 'recv')).toStrictEqual({ b: new Uint8Array([1, 2]) });
  });
});

describe('object codec: shared references and cycles', () => {
  it('one object reached twice arrives as one object reached twice', () => {
    const shared = { s: [1] };
    const arr = new Float64Array(2);
    const out = roundTrip({ a: shared, b: shared, list: [shared], m: new Map([['k', shared]]), t1: arr, t2: arr }) as Record<string, any>;
    expect(out.a).toBe(out.b);
    expect(out.list[0]).toBe(out.a);
    expect(out.m.get('k')).toBe(out.a);
    expect(out.t1).toBe(out.t2);
  });

  it('cycles through objects, arrays, Maps and Sets', () => {
    const o: any = { name: 'root' };
    o.self = o;
    o.arr = [o];
    o.map = new Map<unknown, unknown>([['back', o]]);
    o.map.set('map', o.map);
    o.set = new Set([o]);
    const out = roundTrip(o) as any;
    expect(out.self).toBe(out);
    expect(out.arr[0]).toBe(out);
    expect(out.map.get('back')).toBe(out);
    expect(out.map.get('map')).toBe(out.map);
    expect([...out.set][0]).toBe(out);
    const ref = structuredClone(o);
    expect(ref.self).toBe(ref); // the reference behaves the same
  });
});

describe('object codec: registered classes', () => {
  it('an instance arrives as an instance, with its fields and methods', () => {
    const out = roundTrip({ p: new Point(3, 4) }) as { p: Point };
    expect(out.p).toBeInstanceOf(Point);
    expect(out.p.norm()).toBe(5);
    expect(Object.keys(out.p)).toEqual(['x', 'y']);
    expect(Object.getOwnPropertySymbols(out.p)).toEqual([]);
  });

  it('fields arrive as own data properties: a setter of the class is not run', () => {
    class Guarded {
      static sets = 0;
      #v = 0;
      get v(): number {
        return this.#v;
      }
      set v(x: number) {
        Guarded.sets++;
        this.#v = x;
      }
    }
    registerClass(Guarded, { name: 'test.Guarded' });
    const sent = Object.assign(new Guarded(), { plain: 1 });
    const out = roundTrip(sent) as Guarded & { plain: number };
    expect(out).toBeInstanceOf(Guarded);
    expect(out.plain).toBe(1);
    expect(Guarded.sets).toBe(0);
  });

  it('a cycle through instances keeps every prototype and every identity', () => {
    const a = new ListNode(1);
    const b = new ListNode(2);
    a.next = b;
    b.prev = a;
    b.next = a;
    const out = roundTrip([a, b]) as ListNode[];
    const [x, y] = out as [ListNode, ListNode];
    expect(x).toBeInstanceOf(ListNode);
    expect(y).toBeInstanceOf(ListNode);
    expect(x.next).toBe(y);
    expect(y.prev).toBe(x);
    expect(y.next).toBe(x);
    expect(Object.getOwnPropertySymbols(x)).toEqual([]);
    expect(Object.getOwnPropertySymbols(y)).toEqual([]);
  });

  it('an Error in a cycle through its own cause stays an Error', () => {
    const e = new RangeError('loop');
    e.cause = { back: e };
    const out = roundTrip({ e }) as { e: RangeError & { cause: { back: unknown } } };
    expect(out.e).toBeInstanceOf(RangeError);
    expect([out.e.message, out.e.stack]).toEqual(['loop', e.stack]);
    expect(out.e.cause.back).toBe(out.e);
    expect(Object.getOwnPropertySymbols(out.e)).toEqual([]);
  });

  it('a registered Error subclass keeps its class, its fields and its message', () => {
    const e = new AppError('app failed');
    const out = roundTrip(e) as AppError;
    expect(out).toBeInstanceOf(AppError);
    expect([out.message, out.code, out.stack]).toEqual(['app failed', 7, e.stack]);
  });

  it('registering again under the same name is a no-op; a clash is ERR_ARG', () => {
    expect(() => registerClass(Point)).not.toThrow();
    expect(() => registerClass(Point, { name: 'other' })).toThrow(/registerClass: class Point is registered already, as "Point"/);
    expect(() => registerClass(class Point {})).toThrow(/name "Point" is taken by another class/);
    expect(() => registerClass(Map)).toThrow(/built-in Map/);
    expect(() => registerClass((() => 1) as never)).toThrow(/expected a class/);
    expect(() => registerClass(class {})).toThrow(/anonymous class needs options.name/);
  });

  it('a class this process did not register is ERR_OTHER at the receiver, naming the class', () => {
    class Late {
      v = 1;
    }
    registerClass(Late, { name: 'test.only-here' });
    const bytes = encodeObject(new Late(), 'send').slice();
    // Patch the name in the bytes to one nobody registered, as another process's class would arrive.
    const i = Buffer.from(bytes).indexOf('test.only-here');
    bytes.set(Buffer.from('test.only-thre'), i);
    let err: unknown;
    try {
      decodeObject(bytes, 'recv');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MPIError);
    expect((err as MPIError).errorClass).toBe(ERR_OTHER);
    expect((err as MPIError).message).toMatch(/recv: the message holds an instance of class "test.only-thre", which is not registered in this process/);
  });
});

describe('object codec: refusals name the call and the path', () => {
  it('a value too large for the encoder is ERR_ARG, in the plain form as in the records form', () => {
    // 4 GiB of address space, never written: the encoder refuses before copying it (limits-huge.ts sends it for real).
    const huge = new Uint8Array(2 ** 32);
    for (const value of [huge, { huge }, [huge, new Map()]]) {
      expect(() => encodeObject(value, 'send')).toThrow(expect.objectContaining({ errorClass: ERR_ARG, message: expect.stringContaining('send: message cannot be encoded') }));
    }
  });
  it('a function', () => {
    const e = refusal({ items: [1, 2, { callback: () => 0 }] });
    expect(e.errorClass).toBe(ERR_ARG);
    expect(e.message).toBe('MPI_ERR_ARG: send: message.items[2].callback is a function; objects are sent by the structured-clone rules ' +
      '(docs/API.md "Object messages"); register a class with MPI.registerClass');
  });
  it('an instance of an unregistered class', () => {
    expect(refusal({ a: [new NotRegistered()] }).message).toMatch(/send: message\.a\[0\] is an instance of class NotRegistered, which is not registered;/);
  });
  it('a symbol inside a Map value', () => {
    expect(refusal(new Map([['k k', { s: Symbol('q') }]])).message).toMatch(/send: message\.get\("k k"\)\.s is a symbol \(q\)/);
  });
  it('a function as the message itself, in a Set, under an odd key', () => {
    expect(refusal(() => 1).message).toMatch(/send: message is a function;/);
    expect(refusal(new Set([1, Math.max])).message).toMatch(/send: message\.values\(\)\[1\] is a function \(max\);/);
    expect(refusal({ 'a-b': Symbol.iterator }).message).toMatch(/send: message\["a-b"\] is a symbol/);
  });
  it('values structuredClone also refuses', () => {
    expect(refusal({ w: new WeakMap() }).message).toMatch(/message\.w is a WeakMap, which cannot be cloned/);
    expect(refusal([Promise.resolve()]).message).toMatch(/message\[0\] is a Promise, which cannot be cloned/);
    expect(refusal({ sab: new SharedArrayBuffer(4) }).message).toMatch(/message\.sab is a SharedArrayBuffer/);
  });
  it('an instance of a subclass of a registered class, or an Array subclass', () => {
    class Point3 extends Point {}
    expect(refusal(new Point3()).message).toMatch(/message is an instance of class Point3, which is not registered/);
    class MyList extends Array {}
    expect(refusal({ l: MyList.from([1]) }).message).toMatch(/message\.l is an instance of class MyList/);
  });
  it('the codec keeps working after a refusal, for cycles too', () => {
    const o: any = { f: () => 0 };
    o.self = o;
    expect(refusal(o).message).toMatch(/message\.f is a function/);
    expect(roundTrip({ ok: new Map([[1, 2]]) })).toStrictEqual({ ok: new Map([[1, 2]]) });
  });
});

describe('object codec: documented differences from structuredClone', () => {
  it('-0 arrives as 0; holes arrive as undefined; a typed array carries only its own bytes', () => {
    expect(Object.is(roundTrip(-0), 0)).toBe(true);
    expect(roundTrip([1, , 3])).toEqual([1, undefined, 3]);
    const view = new Uint8Array(new ArrayBuffer(16), 4, 4);
    const out = roundTrip(view) as Uint8Array;
    expect([out.byteOffset, out.buffer.byteLength]).toEqual([0, 4]);
  });
  it('an unregistered class instance is refused where structuredClone makes it plain', () => {
    expect(structuredClone(new NotRegistered())).toEqual({ a: 1 });
    expect(refusal(new NotRegistered()).errorClass).toBe(ERR_ARG);
  });
});

describe('object codec: decode(encode(v)) deep-equals structuredClone(v) (property)', () => {
  const key = fc.string({ maxLength: 6 }).filter((k) => k !== '__proto__');
  const leaf = fc.oneof(
    fc.double().filter((d) => !Object.is(d, -0)),
    fc.integer(),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.bigInt(),
    fc.date({ noInvalidDate: false }),
    fc.constantFrom(/x+/g, /^[a-z]\d*$/i, /./su),
    fc.float64Array({ maxLength: 4 }).map((a) => a.map((x) => (Object.is(x, -0) ? 0 : x))),
    fc.int32Array({ maxLength: 4 }),
    fc.uint8Array({ maxLength: 4 }),
    fc.bigInt64Array({ maxLength: 2 }),
    fc.uint8Array({ maxLength: 4 }).map((a) => a.slice().buffer),
  );
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object'), tie('map'), tie('set')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    map: fc.array(fc.tuple(fc.oneof(key, fc.integer()), tie('value')), { maxLength: 3 }).map((e) => new Map(e)),
    set: fc.array(fc.oneof(key, fc.integer(), tie('value')), { maxLength: 3 }).map((e) => new Set(e)),
  }));
  it('holds for arbitrary values of the supported types', () => {
    fc.assert(fc.property(value, (v) => {
      expect(roundTrip(v)).toStrictEqual(structuredClone(v));
    }), { numRuns: 300 });
  });
});

describe('object codec: the plain form (small values of plain objects, arrays, primitives, typed arrays)', () => {
  /** Whether the encoder chose the plain form: its bytes open with the marker (object-codec-plain.ts). */
  const plainForm = (v: unknown): boolean => {
    const bytes = encodeObject(v, 'send');
    return bytes[0] === 0xd4 && bytes[1] === 0x50;
  };
  const typed = [new Int8Array([-1, 2]), new Uint8Array([255]), new Uint8ClampedArray([9]), new Int16Array([-300]), new Uint16Array([60000]),
    new Int32Array([-7]), new Uint32Array([4e9]), new Float32Array([1.5]), new Float64Array([Math.PI]), new BigInt64Array([-5n]), new BigUint64Array([2n ** 63n])];
  const plain: Record<string, unknown> = {
    'object-rate small': { step: 1, data: new Float64Array([1, 2]) },
    'object-rate object': { a: 1, b: 'x', c: [1, 2, 3], d: { e: true } },
    'a bare number, string, null, undefined': [42, 'héllo ✓', null, undefined],
    'every typed array kind': typed,
    'an undefined property and an empty object': { a: undefined, b: {} },
    '1,024 keys': Object.fromEntries(Array.from({ length: 1024 }, (_, i) => [`k${i}`, i])),
    'a constructor key': { constructor: 'mine', x: 1 },
    'two views of one buffer': (() => { const b = new ArrayBuffer(16); return [new Uint8Array(b, 0, 4), new Uint8Array(b, 8, 4)]; })(),
    'a getter': { get x() { return 7; } },
    '16 objects, 8 levels': [{ d: { d: { d: { d: { d: { d: { d: 1 } } } } } } }, ...Array.from({ length: 8 }, (_, i) => ({ i }))],
  };
  for (const [name, v] of Object.entries(plain)) {
    it(`${name}: plain form, arrives as structuredClone gives it`, () => {
      expect(plainForm(v)).toBe(true);
      expect(roundTrip(v)).toStrictEqual(structuredClone(v));
    });
  }

  it('holes arrive as undefined, as in the records form', () => {
    expect(plainForm([1, , 3])).toBe(true);
    expect(roundTrip([1, , 3])).toEqual([1, undefined, 3]);
  });

  const deep = (n: number): unknown => (n === 0 ? 1 : { d: deep(n - 1) });
  const shared = { s: 1 };
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const view = new Float64Array(1);
  const notPlain: Record<string, unknown> = {
    'a Map inside': { m: new Map([[1, 2]]) },
    'a Set, a Date, a RegExp': [new Set([1]), new Date(0), /x/g],
    'a BigInt': { n: 5n },
    'a shared object': { a: shared, b: shared },
    'a typed array reached twice': [view, view],
    'a cycle': cycle,
    'an own __proto__ key': JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as unknown,
    'an own hasOwnProperty key': { hasOwnProperty: 1, y: 2 },
    'a null-prototype object': Object.assign(Object.create(null) as object, { a: 1 }),
    'a registered instance': { p: new Point(1, 2) },
    'an Error': { e: new RangeError('r') },
    'a Buffer': { b: Buffer.from('hi') },
    'a DataView and an ArrayBuffer': [new DataView(new ArrayBuffer(2)), new ArrayBuffer(3)],
    '17 objects': Array.from({ length: 16 }, (_, i) => ({ i })),
    '9 levels': deep(9),
    '1,025 elements': Array.from({ length: 1025 }, (_, i) => i),
    '1,025 keys': Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`k${i}`, i])),
    'a typed array over shared memory': [new Int32Array(new SharedArrayBuffer(8))],
  };
  for (const [name, v] of Object.entries(notPlain)) {
    it(`${name}: records form, arrives as structuredClone gives it`, () => {
      expect(plainForm(v)).toBe(false);
      const out = roundTrip(v);
      if (name === 'a registered instance') expect((out as { p: Point }).p).toBeInstanceOf(Point);
      else if (name === 'a Buffer') expect(out).toStrictEqual({ b: new Uint8Array(Buffer.from('hi')) });
      else if (name === 'a typed array over shared memory') expect(out).toStrictEqual([new Int32Array(2)]);
      else if (name === 'an own __proto__ key') expect(out).toStrictEqual(JSON.parse('{"__proto_": {"x": 1}, "y": 2}'));
      else expect(out).toStrictEqual(structuredClone(v));
    });
  }

  it('identity is kept where the plain form is refused: a shared object, a repeated view, a cycle', () => {
    const a = roundTrip({ a: shared, b: shared }) as Record<string, object>;
    expect(a.a).toBe(a.b);
    const t = roundTrip([view, view]) as Float64Array[];
    expect(t[0]).toBe(t[1]);
    const c = roundTrip(cycle) as Record<string, unknown>;
    expect(c.self).toBe(c);
  });

  it('a function inside a small object is still refused, naming its path', () => {
    const e = refusal({ a: [1, { f: () => 1 }] });
    expect(e.errorClass).toBe(ERR_ARG);
    expect(e.message).toMatch(/message\.a\[1\]\.f is a function/);
  });

  it('plain-form bytes decode the same from a Buffer or a plain view at an offset', () => {
    const bytes = encodeObject({ step: 3, data: new Float64Array([5]) }, 'send');
    const frame = new Uint8Array(bytes.length + 5);
    frame.set(bytes, 5);
    expect(decodeObject(frame.subarray(5), 'recv')).toStrictEqual({ step: 3, data: new Float64Array([5]) });
    expect(decodeObject(Buffer.from(bytes), 'recv')).toStrictEqual({ step: 3, data: new Float64Array([5]) });
  });
});
