// Info (api/info.ts) as pure logic: entries, order, dup, limits, and the predefined NULL and ENV objects.
import { describe, expect, it } from 'vitest';
import { ERR_INFO, ERR_INFO_KEY, ERR_INFO_NOKEY, ERR_INFO_VALUE, MPIError } from '../util/index.ts';
import { Info, infoEntries, MAX_INFO_KEY, MAX_INFO_VAL } from './info.ts';

function errorOf(fn: () => unknown): MPIError {
  try {
    fn();
  } catch (e) {
    if (e instanceof MPIError) return e;
    throw e;
  }
  throw new Error('expected an MPIError');
}

describe('Info', () => {
  it('keeps keys in the order first set; a new value keeps the place', () => {
    const info = new Info({ b: '1', a: '2' });
    info.set('c', '3');
    info.set('b', '4');
    expect(info.keys()).toEqual(['b', 'a', 'c']);
    expect(info.nkeys).toBe(3);
    expect(info.get('b')).toBe('4');
    expect(info.get('zz')).toBeUndefined();
  });

  it('dup copies; the copy is independent', () => {
    const info = new Info({ a: '1' });
    const copy = info.dup();
    copy.set('b', '2');
    info.delete('a');
    expect(info.keys()).toEqual([]);
    expect(copy.keys()).toEqual(['a', 'b']);
  });

  it('checks keys, values and liveness with the MPI error classes', () => {
    const info = new Info();
    expect(errorOf(() => info.set('', 'v'))).toMatchObject({ errorClass: ERR_INFO_KEY, call: 'Info.set' });
    expect(errorOf(() => info.set('k'.repeat(MAX_INFO_KEY + 1), 'v')).errorClass).toBe(ERR_INFO_KEY);
    expect(errorOf(() => info.get(3 as unknown as string))).toMatchObject({ errorClass: ERR_INFO_KEY, call: 'Info.get' });
    expect(errorOf(() => info.set('k', 'v'.repeat(MAX_INFO_VAL + 1))).errorClass).toBe(ERR_INFO_VALUE);
    info.set('k'.repeat(MAX_INFO_KEY), 'v'.repeat(MAX_INFO_VAL));
    expect(errorOf(() => info.delete('nope'))).toMatchObject({ errorClass: ERR_INFO_NOKEY, call: 'Info.delete' });
    info.free();
    expect(errorOf(() => info.keys())).toMatchObject({ errorClass: ERR_INFO, call: 'Info.keys' });
    expect(errorOf(() => info.free()).errorClass).toBe(ERR_INFO);
  });

  it('Info.NULL refuses everything; Info.ENV is read-only and cannot be freed', () => {
    expect(errorOf(() => Info.NULL.keys()).errorClass).toBe(ERR_INFO);
    expect(Info.ENV.get('host')).toBeTypeOf('string');
    expect(Info.ENV.keys()).toEqual(expect.arrayContaining(['command', 'argv', 'maxprocs', 'wdir', 'host', 'thread_level']));
    expect(errorOf(() => Info.ENV.set('a', 'b')).errorClass).toBe(ERR_INFO);
    expect(errorOf(() => Info.ENV.free()).errorClass).toBe(ERR_INFO);
    expect(Info.ENV.dup().keys()).toEqual(Info.ENV.keys());
  });

  it('infoEntries: undefined and Info.NULL are no hints; anything else but an Info is ERR_INFO', () => {
    expect(infoEntries(undefined, 'x')).toBeNull();
    expect(infoEntries(Info.NULL, 'x')).toBeNull();
    expect(infoEntries(new Info({ a: 'b' }), 'x')).toEqual([['a', 'b']]);
    expect(errorOf(() => infoEntries({ a: 'b' }, 'Comm.setInfo'))).toMatchObject({ errorClass: ERR_INFO, call: 'Comm.setInfo' });
  });
});
