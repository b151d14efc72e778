/**
 * Unit tests of slurm-counts.ts: SLURM_TASKS_PER_NODE-style lists
 * (`2(x3),1`), by example and by round trip.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatSlurmCounts, MAX_COUNT_ENTRIES, parseSlurmCounts } from './slurm-counts.ts';

describe('parseSlurmCounts', () => {
  it.each([
    ['2(x3),1', [2, 2, 2, 1]],
    ['4', [4]],
    ['3,1', [3, 1]],
    ['1(x2)', [1, 1]],
    ['16(x1)', [16]],
    ['0,2', [0, 2]],
    ['2(x2),3(x2)', [2, 2, 3, 3]],
  ])('%s', (text, counts) => {
    expect(parseSlurmCounts(text)).toEqual(counts);
  });

  it.each([
    ['', 'empty'],
    ['2(x0)', 'at least 1'],
    ['2(3)', 'COUNT(xREPEAT)'],
    ['a', 'COUNT(xREPEAT)'],
    ['-1', 'COUNT(xREPEAT)'],
    ['1,,2', 'COUNT(xREPEAT)'],
    ['2(x3', 'COUNT(xREPEAT)'],
    ['1.5', 'COUNT(xREPEAT)'],
    [`1(x${MAX_COUNT_ENTRIES + 1})`, 'more than'],
    ['99999999999999999999', 'too large'],
  ])('%s is refused (%s)', (text, why) => {
    const r = parseSlurmCounts(text);
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toContain(why);
  });
});

describe('formatSlurmCounts', () => {
  it('writes runs as N(xM), like Slurm', () => {
    expect(formatSlurmCounts([2, 2, 2, 1])).toBe('2(x3),1');
    expect(formatSlurmCounts([3, 1])).toBe('3,1');
    expect(formatSlurmCounts([1, 1])).toBe('1(x2)');
  });

  it('parse(format(counts)) gives the counts back', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 64 }), { minLength: 1, maxLength: 50 }), (counts) => {
        expect(parseSlurmCounts(formatSlurmCounts(counts))).toEqual(counts);
      }),
      { numRuns: 500 },
    );
  });
});
