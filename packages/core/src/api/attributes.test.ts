// Attribute caching (api/attributes.ts) as pure logic over record handles: keyvals, callbacks on
// set / delete / copy / free, the order of deletion, freed keyvals, predefined keyvals.
import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_KEYVAL, MPIError } from '../util/index.ts';
import { copyAttrs, createKeyval, deleteAllAttrs, deleteAttr, freeKeyval, getAttr, HOST, setAttr, TAG_UB_KEYVAL, UNIVERSE_SIZE } from './attributes.ts';
import { TAG_UB } from './constants.ts';

function errorOf(fn: () => unknown): MPIError {
  try {
    fn();
  } catch (e) {
    if (e instanceof MPIError) return e;
    throw e;
  }
  throw new Error('expected an MPIError');
}

let nextHandle = 1000;
const comm = () => ({ handle: nextHandle++ });

describe('attributes', () => {
  it('set, get, replace (delete callback first), delete', () => {
    const log: string[] = [];
    const k = createKeyval({ delete: (_c, _k, v) => { log.push(`del ${String(v)}`); } }, 't');
    const c = comm();
    expect(getAttr(c.handle, k, false, 1, 't')).toBeUndefined();
    setAttr(c, c.handle, k, 1, 't');
    setAttr(c, c.handle, k, 2, 't');
    expect(log).toEqual(['del 1']);
    expect(getAttr(c.handle, k, false, 1, 't')).toBe(2);
    deleteAttr(c, c.handle, k, 't');
    deleteAttr(c, c.handle, k, 't');
    expect(log).toEqual(['del 1', 'del 2']);
    expect(getAttr(c.handle, k, false, 1, 't')).toBeUndefined();
  });

  it('copy: the callback decides; undefined or no callback: not copied', () => {
    const doubled = createKeyval({ copy: (_c, _k, v) => (v as number) * 2 }, 't');
    const nulled = createKeyval({ copy: () => undefined }, 't');
    const none = createKeyval(undefined, 't');
    const a = comm();
    const b = comm();
    for (const k of [doubled, nulled, none]) setAttr(a, a.handle, k, 5, 't');
    copyAttrs(a, a.handle, b, b.handle);
    expect([doubled, nulled, none].map((k) => getAttr(b.handle, k, false, 1, 't'))).toEqual([10, undefined, undefined]);
  });

  it('free deletes last set first, also for freed keyvals; a freed keyval is ERR_KEYVAL for new calls', () => {
    const order: number[] = [];
    const ks = [0, 1, 2].map((i) => createKeyval({ delete: () => { order.push(i); } }, 't'));
    const c = comm();
    setAttr(c, c.handle, ks[1]!, 'x', 't');
    setAttr(c, c.handle, ks[0]!, 'x', 't');
    setAttr(c, c.handle, ks[2]!, 'x', 't');
    freeKeyval(ks[0]!, 't');
    expect(errorOf(() => getAttr(c.handle, ks[0]!, false, 1, 'g')).errorClass).toBe(ERR_KEYVAL);
    expect(errorOf(() => freeKeyval(ks[0]!, 'f')).errorClass).toBe(ERR_KEYVAL);
    deleteAllAttrs(c, c.handle);
    expect(order).toEqual([2, 0, 1]);
  });

  it('a copy callback that throws leaves the new communicator without attributes', () => {
    const log: string[] = [];
    const ok = createKeyval({ copy: (_c, _k, v) => v, delete: () => { log.push('del copy'); } }, 't');
    const bad = createKeyval({ copy: () => { throw new Error('no'); } }, 't');
    const a = comm();
    const b = comm();
    setAttr(a, a.handle, ok, 1, 't');
    setAttr(a, a.handle, bad, 1, 't');
    expect(() => copyAttrs(a, a.handle, b, b.handle)).toThrow('no');
    expect(log).toEqual(['del copy']);
    expect(getAttr(b.handle, ok, false, 1, 't')).toBeUndefined();
  });

  it('predefined keyvals: values on COMM_WORLD only, read-only; TAG_UB is its own keyval', () => {
    expect(TAG_UB_KEYVAL).toBe(TAG_UB);
    expect(getAttr(1, TAG_UB_KEYVAL, true, 4, 't')).toBe(TAG_UB);
    expect(getAttr(1, UNIVERSE_SIZE, true, 4, 't')).toBe(4);
    expect(getAttr(1, UNIVERSE_SIZE, false, 4, 't')).toBeUndefined();
    const c = comm();
    expect(errorOf(() => setAttr(c, c.handle, HOST, 1, 'Comm.setAttr'))).toMatchObject({ errorClass: ERR_KEYVAL, call: 'Comm.setAttr' });
    expect(errorOf(() => deleteAttr(c, c.handle, HOST, 'd')).errorClass).toBe(ERR_KEYVAL);
    expect(errorOf(() => freeKeyval(TAG_UB_KEYVAL, 'f')).errorClass).toBe(ERR_KEYVAL);
  });

  it('argument errors', () => {
    expect(errorOf(() => createKeyval({ copy: 1 as never }, 'Comm.createKeyval'))).toMatchObject({ errorClass: ERR_ARG, call: 'Comm.createKeyval' });
    expect(errorOf(() => createKeyval(null as never, 'c')).errorClass).toBe(ERR_ARG);
    expect(errorOf(() => getAttr(1, 987654, false, 1, 'g')).errorClass).toBe(ERR_KEYVAL);
  });
});
