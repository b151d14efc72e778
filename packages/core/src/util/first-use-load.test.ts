// first-use-load.ts: the registered flushes run before a load at first use, in order, and a
// removed one no longer runs (device-wiring.ts registers its transports' flush at start).
import { describe, expect, it } from 'vitest';
import { flushBeforeFirstUseLoads, loadAtFirstUse } from './first-use-load.ts';

describe('loadAtFirstUse', () => {
  it('runs every registered flush, in order, before the load, and returns what the load returns', () => {
    const seen: string[] = [];
    const removeA = flushBeforeFirstUseLoads(() => seen.push('flush a'));
    const removeB = flushBeforeFirstUseLoads(() => seen.push('flush b'));
    try {
      const value = loadAtFirstUse(() => {
        seen.push('load');
        return 42;
      });
      expect(value).toBe(42);
      expect(seen).toEqual(['flush a', 'flush b', 'load']);
    } finally {
      removeA();
      removeB();
    }
  });

  it('no longer runs a flush once it is removed', () => {
    const seen: string[] = [];
    const remove = flushBeforeFirstUseLoads(() => seen.push('flush'));
    remove();
    loadAtFirstUse(() => seen.push('load'));
    expect(seen).toEqual(['load']);
  });

  it('lets the load throw after the flushes ran', () => {
    const seen: string[] = [];
    const remove = flushBeforeFirstUseLoads(() => seen.push('flush'));
    try {
      expect(() => loadAtFirstUse(() => {
        throw new Error('module not found');
      })).toThrow('module not found');
      expect(seen).toEqual(['flush']);
    } finally {
      remove();
    }
  });
});
