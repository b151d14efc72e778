import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_BUFFER, ERR_COUNT, ERR_TYPE } from '../util/index.ts';
import { bytesOfView, countElements, countItems, maxCount, resolveBuffer, spanBytes, UNDEFINED } from './buf-spec.ts';
import {
  createContiguous,
  createHvector,
  createResized,
  createStruct,
  createVector,
  predefinedDescriptor,
} from './descriptor.ts';
import { ALL_TYPE_CODES, PREDEFINED_DATATYPES, TYPE_CODES, typeCodeOfView, typeName, typeSize, elementArrayOf } from './predefined.ts';
import { checkConstructible, checkUsable, DatatypeRecord, predefinedRecord } from './record.ts';
import { typeInfoOf, typeMapOf } from './type-map.ts';

const INT8 = predefinedDescriptor(TYPE_CODES.INT8);
const INT32 = predefinedDescriptor(TYPE_CODES.INT32);
const FLOAT64 = predefinedDescriptor(TYPE_CODES.FLOAT64);

function committed(d: Parameters<typeof typeMapOf>[0]): DatatypeRecord {
  const r = new DatatypeRecord(d);
  r.commit();
  return r;
}

function err(errorClass: number, call: string): unknown {
  return expect.objectContaining({ errorClass, call });
}

describe('predefined table', () => {
  it('maps typed-array kinds to types', () => {
    const cases: [ArrayBufferView, number][] = [
      [new Int8Array(1), TYPE_CODES.INT8],
      [new Uint8Array(1), TYPE_CODES.UINT8],
      [new Uint8ClampedArray(1), TYPE_CODES.UINT8],
      [new Int16Array(1), TYPE_CODES.INT16],
      [new Uint16Array(1), TYPE_CODES.UINT16],
      [new Int32Array(1), TYPE_CODES.INT32],
      [new Uint32Array(1), TYPE_CODES.UINT32],
      [new BigInt64Array(1), TYPE_CODES.INT64],
      [new BigUint64Array(1), TYPE_CODES.UINT64],
      [new Float32Array(1), TYPE_CODES.FLOAT32],
      [new Float64Array(1), TYPE_CODES.FLOAT64],
      [new DataView(new ArrayBuffer(1)), TYPE_CODES.BYTE],
    ];
    for (const [v, code] of cases) expect(typeCodeOfView(v)).toBe(code);
    class Mine extends Float32Array {}
    expect(typeCodeOfView(new Mine(2))).toBe(TYPE_CODES.FLOAT32);
    expect(typeCodeOfView(Object.create(null) as ArrayBufferView)).toBeNull();
  });
  it('aliases are the same datatype', () => {
    expect(PREDEFINED_DATATYPES.CHAR).toBe(TYPE_CODES.INT8);
    expect(PREDEFINED_DATATYPES.SHORT).toBe(TYPE_CODES.INT16);
    expect(PREDEFINED_DATATYPES.INT).toBe(TYPE_CODES.INT32);
    expect(PREDEFINED_DATATYPES.LONG).toBe(TYPE_CODES.INT64);
    expect(PREDEFINED_DATATYPES.FLOAT).toBe(TYPE_CODES.FLOAT32);
    expect(PREDEFINED_DATATYPES.DOUBLE).toBe(TYPE_CODES.FLOAT64);
    expect(predefinedRecord(PREDEFINED_DATATYPES.INT)).toBe(predefinedRecord(TYPE_CODES.INT32));
  });
  it('codes are stable and small', () => {
    expect(ALL_TYPE_CODES).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(ALL_TYPE_CODES.map((c) => typeName(c))).toEqual([
      'INT8', 'UINT8', 'INT16', 'UINT16', 'INT32', 'UINT32', 'INT64', 'UINT64', 'FLOAT32', 'FLOAT64', 'BYTE',
    ]);
    for (const c of ALL_TYPE_CODES) expect(elementArrayOf(c).BYTES_PER_ELEMENT).toBe(typeSize(c));
    expect(() => typeSize(0 as 1)).toThrow(RangeError);
  });
});

describe('DatatypeRecord', () => {
  it('predefined records are committed and cannot be freed', () => {
    const r = predefinedRecord(TYPE_CODES.FLOAT64);
    expect(r.isPredefined).toBe(true);
    expect(r.isCommitted).toBe(true);
    expect(() => r.free()).toThrow(err(ERR_TYPE, 'Datatype.free'));
    expect(r.toString()).toBe('Datatype(FLOAT64)');
  });
  it('life cycle: uncommitted -> committed -> freed', () => {
    const r = new DatatypeRecord(createVector(2, 1, 2, INT32));
    expect(r.isCommitted).toBe(false);
    expect(r.info.extent).toBe(12);
    expect(() => checkUsable('Send', r)).toThrow(err(ERR_TYPE, 'Send'));
    expect(() => checkUsable('Send', r)).toThrow(/not committed/);
    checkConstructible('Datatype.vector', r, 'base');
    r.commit();
    r.commit();
    expect(r.isCommitted).toBe(true);
    checkUsable('Send', r);
    expect(r.typeMap.blockCount).toBe(2);
    r.free();
    expect(r.isFreed).toBe(true);
    expect(r.typeMap.blockCount).toBe(2); // pending operations keep using it
    expect(() => checkUsable('Recv', r)).toThrow(/has been freed/);
    expect(() => checkConstructible('Datatype.vector', r, 'base')).toThrow(err(ERR_TYPE, 'Datatype.vector'));
    expect(() => r.free()).toThrow(/already been freed/);
    expect(() => r.commit()).toThrow(err(ERR_TYPE, 'Datatype.commit'));
  });
  it('rejects an unaddressable layout at construction', () => {
    expect(() => new DatatypeRecord(createContiguous(2 ** 30, createContiguous(2 ** 30, FLOAT64)))).toThrow(
      err(ERR_ARG, 'Datatype.contiguous'),
    );
  });
});

describe('resolveBuffer', () => {
  it('a bare typed array: whole array, its element type, bytes alias the memory', () => {
    const a = new Float64Array(new ArrayBuffer(80), 16, 6);
    const r = resolveBuffer('Send', a);
    expect(r.count).toBe(6);
    expect(r.record).toBe(predefinedRecord(TYPE_CODES.FLOAT64));
    expect(r.packedBytes).toBe(48);
    expect(r.bytes.byteOffset).toBe(16);
    expect(r.bytes.length).toBe(48);
    expect(r.bytes.buffer).toBe(a.buffer);
    expect(r.view).toBe(a);
  });
  it('a Uint8Array is its own bytes view; DataView is BYTE', () => {
    const u = new Uint8Array(4);
    expect(resolveBuffer('Send', u).bytes).toBe(u);
    const r = resolveBuffer('Send', new DataView(new ArrayBuffer(10)));
    expect(r.record.descriptor).toEqual({ kind: 'predefined', code: TYPE_CODES.BYTE });
    expect(r.count).toBe(10);
  });
  it('a datatype with default count: floor(byteLength / extent)', () => {
    const t = committed(createVector(2, 1, 2, INT32)); // extent 12, trueUb 12
    expect(resolveBuffer('Send', new Int32Array(7), undefined, t).count).toBe(2);
    const s = committed(createStruct([1, 1], [0, 8], [FLOAT64, INT8])); // extent 16
    expect(resolveBuffer('Send', new DataView(new ArrayBuffer(47)), undefined, s).count).toBe(2);
  });
  it('a default count takes only the items that fit when an item reaches past its extent', () => {
    const column = new DatatypeRecord(createResized(createVector(4, 1, 5, predefinedDescriptor(TYPE_CODES.FLOAT64)), 0, 8));
    column.commit();
    expect(resolveBuffer('Recv', new Float64Array(20), undefined, column).count).toBe(5);
  });
  it('an explicit count may use the tail gap of the last item', () => {
    const s = committed(createStruct([1, 1], [0, 8], [FLOAT64, INT8])); // extent 16, true ub 9
    const r = resolveBuffer('Send', new Uint8Array(25), 2, s);
    expect(r.count).toBe(2);
    expect(r.packedBytes).toBe(18);
    expect(() => resolveBuffer('Send', new Uint8Array(24), 2, s)).toThrow(err(ERR_COUNT, 'Send'));
  });
  it('ERR_COUNT when the items do not fit, with the sizes in the message', () => {
    let e: unknown;
    try {
      resolveBuffer('Recv', new Int32Array(10), 11, undefined, 'recvbuf');
    } catch (x) {
      e = x;
    }
    expect(e).toEqual(err(ERR_COUNT, 'Recv'));
    expect((e as Error).message).toBe(
      'MPI_ERR_COUNT: Recv: count 11 of Datatype(INT32) needs 44 bytes but recvbuf has 40 bytes (at most 10 items fit)',
    );
  });
  it('ERR_COUNT for a bad count', () => {
    expect(() => resolveBuffer('Send', new Int32Array(10), -1)).toThrow(err(ERR_COUNT, 'Send'));
    expect(() => resolveBuffer('Send', new Int32Array(10), 1.5)).toThrow(/count must be an integer >= 0, got 1.5/);
  });
  it('count 0 and empty buffers are fine', () => {
    expect(resolveBuffer('Send', new Int32Array(0)).count).toBe(0);
    expect(resolveBuffer('Send', new Int32Array(0), 0).packedBytes).toBe(0);
    const empty = committed(createContiguous(0, INT32));
    expect(resolveBuffer('Send', new Int32Array(3), undefined, empty).count).toBe(0);
    expect(resolveBuffer('Send', new Int32Array(3), 5, empty).packedBytes).toBe(0);
  });
  it('extent 0 with data needs an explicit count', () => {
    const z = committed(createResized(INT32, 0, 0));
    expect(() => resolveBuffer('Send', new Int32Array(3), undefined, z)).toThrow(err(ERR_COUNT, 'Send'));
    expect(resolveBuffer('Send', new Int32Array(3), 4, z).packedBytes).toBe(16);
  });
  it('ERR_BUFFER for a missing buffer or a non-view', () => {
    expect(() => resolveBuffer('Send', null)).toThrow(err(ERR_BUFFER, 'Send'));
    expect(() => resolveBuffer('Send', undefined, undefined, undefined, 'sendbuf')).toThrow(/sendbuf is missing/);
    expect(() => resolveBuffer('Send', [1, 2, 3])).toThrow(/must be a typed array or DataView, got an object/);
    expect(() => resolveBuffer('Send', 7)).toThrow(/got number/);
  });
  it('ERR_BUFFER for a type reaching below the start of the view', () => {
    const neg = committed(createHvector(2, 1, -8, INT32));
    expect(() => resolveBuffer('Send', new Int32Array(10), 1, neg)).toThrow(err(ERR_BUFFER, 'Send'));
    expect(() => resolveBuffer('Send', new Int32Array(10), 1, neg)).toThrow(/reaches 8 bytes before the start/);
  });
  it('ERR_TYPE for uncommitted or freed types', () => {
    const t = new DatatypeRecord(createContiguous(2, INT32));
    expect(() => resolveBuffer('Send', new Int32Array(4), 1, t)).toThrow(err(ERR_TYPE, 'Send'));
    t.commit();
    t.free();
    expect(() => resolveBuffer('Send', new Int32Array(4), 1, t)).toThrow(/freed/);
  });
});

describe('counts from byte lengths', () => {
  it('spanBytes and maxCount', () => {
    const v = typeInfoOf(createVector(2, 1, 2, INT32)); // extent 12, trueUb 12
    expect(spanBytes(0, v)).toBe(0);
    expect(spanBytes(3, v)).toBe(36);
    expect(maxCount(35, v)).toBe(2);
    expect(maxCount(36, v)).toBe(3);
    expect(maxCount(4, v)).toBe(0);
    expect(maxCount(4, typeInfoOf(createContiguous(0, INT32)))).toBe(Infinity);
    expect(maxCount(4, typeInfoOf(createResized(INT32, 0, 0)))).toBe(Infinity);
    expect(maxCount(40, typeInfoOf(createHvector(2, 1, -8, INT32)))).toBe(0);
  });
  it('countItems: whole items or UNDEFINED', () => {
    const v = typeInfoOf(createVector(2, 1, 2, INT32)); // size 8
    expect(countItems(24, v)).toBe(3);
    expect(countItems(0, v)).toBe(0);
    expect(countItems(20, v)).toBe(UNDEFINED);
    expect(UNDEFINED).toBe(-32766);
    expect(countItems(20, typeInfoOf(createContiguous(0, INT32)))).toBe(0);
  });
  it('countElements: primitive elements, partial items included', () => {
    const s = typeMapOf(createStruct([1, 2], [0, 8], [FLOAT64, INT32])); // size 16, 3 elements
    expect(countElements(32, s)).toBe(6);
    expect(countElements(32 + 8, s)).toBe(7);
    expect(countElements(32 + 12, s)).toBe(8);
    expect(countElements(32 + 10, s)).toBe(UNDEFINED);
    expect(countElements(5, typeMapOf(createContiguous(0, INT32)))).toBe(0);
  });
  it('bytesOfView works for every view kind', () => {
    for (const c of ALL_TYPE_CODES) {
      const v = new (elementArrayOf(c))(3);
      expect(bytesOfView(v).length).toBe(3 * typeSize(c));
    }
  });
});
