// mpiexec's open-file check (fd-limit.ts): pure, on /proc/self/limits text.
import { describe, expect, it } from 'vitest';
import { fdsNeeded, fileLimitProblem, parseFileLimit, readFileLimit } from './fd-limit.ts';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe('open-file limit', () => {
  it('reads the soft and hard limit of open files', () => {
    expect(parseFileLimit(LIMITS)).toEqual({ soft: 1024, hard: 524288 });
    expect(parseFileLimit(LIMITS.replace('1024                 524288', '4096                 unlimited'))).toEqual({ soft: 4096, hard: null });
    expect(parseFileLimit('Max cpu time unlimited unlimited seconds\n')).toBeNull();
  });

  it('reads this process\'s limit on Linux', () => {
    if (process.platform !== 'linux') return;
    const limit = readFileLimit();
    expect(limit?.soft).toBeGreaterThan(0);
  });

  it('lets a 64-rank job through under the usual 1024, refuses one that cannot fit, naming the limit', () => {
    expect(fileLimitProblem(64, 0, { soft: 1024, hard: 524288 })).toBeNull();
    expect(fdsNeeded(64, 0)).toBeLessThan(1024);
    const soft = fileLimitProblem(64, 0, { soft: 200, hard: 524288 });
    expect(soft).toMatch(/^64 ranks on this host need about \d+ open files in mpiexec, but its limit of open files is 200; raise it \(ulimit -n \d+\)$/);
    const hard = fileLimitProblem(400, 0, { soft: 1024, hard: 1024 });
    expect(hard).toMatch(/limit of open files is 1024; that is the hard limit \(ulimit -Hn\): .*place fewer ranks on this host$/);
    expect(fileLimitProblem(1000, 3, null)).toBeNull();
  });
});
