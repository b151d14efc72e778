import { describe, expect, it } from 'vitest';
import { schedYield } from './sched-yield.ts';

describe('schedYield', () => {
  it('is a working sched_yield on Node 20 (WASI errno 0), loaded without the WASI ExperimentalWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      const yieldCore = schedYield();
      expect(yieldCore).toBeTypeOf('function');
      for (let i = 0; i < 100; i++) expect(yieldCore!()).toBe(0);
      expect(schedYield()).toBe(yieldCore);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.includes('WASI'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
