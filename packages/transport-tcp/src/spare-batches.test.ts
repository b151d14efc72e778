import { describe, expect, it } from 'vitest';
import { SpareBatches } from './spare-batches.ts';

const buf = (n: number): Buffer => Buffer.alloc(n);

describe('SpareBatches', () => {
  it('keeps two batches and gives back the smallest that fits', () => {
    const s = new SpareBatches(4096);
    const a = buf(2048);
    const b = buf(1024);
    s.give(a);
    s.give(b);
    expect(s.take(512)).toBe(b);
    expect(s.take(2049)).toBeNull();
    expect(s.take(2048)).toBe(a);
    expect(s.take(1)).toBeNull();
  });

  it('keeps no more than two, nor more than maxBytes in all', () => {
    const s = new SpareBatches(4096);
    s.give(buf(1024));
    s.give(buf(1024));
    s.give(buf(512)); // a third, smaller: dropped
    expect(s.take(1024)).not.toBeNull();
    expect(s.take(1024)).not.toBeNull();
    expect(s.take(1)).toBeNull();
    s.give(buf(8192)); // over maxBytes alone: dropped
    expect(s.takeLargest()).toBeNull();
  });

  it('a larger batch takes the place of the smaller kept one when both would not fit', () => {
    const s = new SpareBatches(4096);
    const small = buf(1024);
    const mid = buf(2048);
    const large = buf(3072);
    s.give(small);
    s.give(mid);
    s.give(large); // 3072 + 2048 > 4096: would replace the 1024 only if it fit beside the 2048
    expect(s.takeLargest()).toBe(mid);
    expect(s.takeLargest()).toBe(small);
    s.give(mid);
    s.give(large); // beside the 2048 it does not fit; alone it is larger: it replaces it
    expect(s.takeLargest()).toBe(large);
    expect(s.takeLargest()).toBeNull();
  });

  it('replaces the smaller of two by a larger one that fits beside the other', () => {
    const s = new SpareBatches(4096);
    const a = buf(512);
    const b = buf(1024);
    const c = buf(2048);
    s.give(a);
    s.give(b);
    s.give(c);
    expect(s.takeLargest()).toBe(c);
    expect(s.takeLargest()).toBe(b);
  });
});
