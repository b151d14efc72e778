import { describe, expect, it } from 'vitest';
import { borrowScratch, giveBackScratch } from './scratch.ts';

describe('collective scratch buffers', () => {
  it('reuses a given-back buffer that is large enough', () => {
    const a = borrowScratch(1000);
    expect(a.length).toBeGreaterThanOrEqual(1000);
    giveBackScratch(a);
    const b = borrowScratch(500);
    expect(b === a).toBe(true);
    giveBackScratch(b);
  });

  it('gives overlapping borrowers distinct buffers', () => {
    const a = borrowScratch(4096);
    const b = borrowScratch(4096);
    expect(b.buffer === a.buffer).toBe(false);
    giveBackScratch(a);
    giveBackScratch(b);
    const c = borrowScratch(4096);
    const d = borrowScratch(4096);
    expect((c === a && d === b) || (c === b && d === a)).toBe(true);
    giveBackScratch(c);
    giveBackScratch(d);
  });

  it('allocates a new buffer when every kept one is too small', () => {
    const small = borrowScratch(16);
    giveBackScratch(small);
    const big = borrowScratch(1 << 20);
    expect(big.length).toBe(1 << 20);
    expect(big === small).toBe(false);
    giveBackScratch(big);
  });

  it('does not keep buffers above 64 MiB', () => {
    const huge = borrowScratch(64 * 1024 * 1024 + 8);
    giveBackScratch(huge);
    const again = borrowScratch(64 * 1024 * 1024 + 8);
    expect(again === huge).toBe(false);
  });
});
