// The collective I/O benchmark's array and its 2 x 2 x 1 decomposition (io-block.ts): the shapes,
// and that the four blocks tile the array exactly once, each element carrying its own index.
import { describe, expect, it } from 'vitest';
import { IO_SIZE_QUANTUM, ioArray, ioBlock, ioBlockData } from './io-block.ts';

describe('ioArray', () => {
  it('makes 256 MiB a 512 x 256 x 256 array of FLOAT64', () => {
    expect(ioArray(256 * 1024 * 1024)).toEqual({ sizes: [512, 256, 256] });
    expect(ioArray(IO_SIZE_QUANTUM)).toEqual({ sizes: [2, 256, 256] });
  });

  it.each([0, -IO_SIZE_QUANTUM, IO_SIZE_QUANTUM / 2, IO_SIZE_QUANTUM + 8, 1.5])('refuses %d bytes, naming the flag and the multiple', (bytes) => {
    const r = ioArray(bytes);
    expect('error' in r && r.error).toMatch(new RegExp(`--size must be a positive multiple of ${IO_SIZE_QUANTUM}`));
  });
});

describe('ioBlock', () => {
  it('halves the first two dimensions and keeps the rows whole, rank order as MPI_Cart_coords', () => {
    expect(ioBlock([512, 256, 256], 0)).toEqual({ sizes: [512, 256, 256], subsizes: [256, 128, 256], starts: [0, 0, 0] });
    expect(ioBlock([512, 256, 256], 1).starts).toEqual([0, 128, 0]);
    expect(ioBlock([512, 256, 256], 2).starts).toEqual([256, 0, 0]);
    expect(ioBlock([512, 256, 256], 3).starts).toEqual([256, 128, 0]);
  });

  it('the four blocks cover every element of the array exactly once, each holding its own index', () => {
    const sizes = ioArray(2 * IO_SIZE_QUANTUM);
    if ('error' in sizes) throw new Error(sizes.error);
    const seen = new Uint8Array(sizes.sizes[0] * sizes.sizes[1] * sizes.sizes[2]);
    for (let r = 0; r < 4; r++) {
      const data = ioBlockData(ioBlock(sizes.sizes, r));
      expect(data.length).toBe(seen.length / 4);
      for (const v of data) seen[v]! += 1;
    }
    expect(seen.every((n) => n === 1)).toBe(true);
  });
});
