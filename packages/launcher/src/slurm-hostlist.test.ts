/**
 * Unit tests of slurm-hostlist.ts: Slurm's hostlist expressions, by example
 * (forms Slurm writes and users type, and Slurm's order for several brackets)
 * and by property (compress then expand gives the list back).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compressHostlist, expandHostlist, MAX_HOSTLIST_HOSTS } from './slurm-hostlist.ts';

function ok(expr: string): string[] {
  const r = expandHostlist(expr);
  if (r instanceof Error) throw new Error(`expandHostlist(${expr}) failed: ${r.message}`);
  return r;
}

function err(expr: string): string {
  const r = expandHostlist(expr);
  if (!(r instanceof Error)) throw new Error(`expandHostlist(${expr}) should fail, gave ${r.join(',')}`);
  return r.message;
}

describe('expandHostlist', () => {
  it.each([
    ['n1', ['n1']],
    ['n[1-3,5],gpu07', ['n1', 'n2', 'n3', 'n5', 'gpu07']],
    ['n[001-010]', ['n001', 'n002', 'n003', 'n004', 'n005', 'n006', 'n007', 'n008', 'n009', 'n010']],
    ['n[8-10]', ['n8', 'n9', 'n10']],
    ['n[08-10]', ['n08', 'n09', 'n10']],
    ['n[098-101]', ['n098', 'n099', 'n100', 'n101']],
    ['n[01-02]', ['n01', 'n02']],
    ['login-1.cluster,compute-2.cluster', ['login-1.cluster', 'compute-2.cluster']],
    ['rack-a.n[1-2]', ['rack-a.n1', 'rack-a.n2']],
    ['n[1-2]-ib', ['n1-ib', 'n2-ib']],
    ['[1-2]', ['1', '2']],
    ['n[7]', ['n7']],
    ['n[1,1]', ['n1', 'n1']],
    ['a b\tc\nd', ['a', 'b', 'c', 'd']],
    [',,n1,,n2,', ['n1', 'n2']],
    ['gpu_07', ['gpu_07']],
  ])('%s', (expr, hosts) => {
    expect(ok(expr)).toEqual(hosts);
  });

  it('expands two brackets with the first varying slowest, as Slurm does', () => {
    expect(ok('r[1-2]n[3-4]')).toEqual(['r1n3', 'r1n4', 'r2n3', 'r2n4']);
    expect(ok('rack[1-2]-n[01-02].ib')).toEqual(['rack1-n01.ib', 'rack1-n02.ib', 'rack2-n01.ib', 'rack2-n02.ib']);
  });

  it('expands three brackets in Slurm order: the middle one slowest, the last fastest', () => {
    // Slurm peels the last bracket of the prefix first (hostlist.c _push_range_list).
    expect(ok('a[1-2]b[3-4]c[5-6]')).toEqual([
      'a1b3c5', 'a1b3c6', 'a2b3c5', 'a2b3c6',
      'a1b4c5', 'a1b4c6', 'a2b4c5', 'a2b4c6',
    ]);
  });

  it.each([
    ['', 'no host'],
    [' , ', 'no host'],
    ['n[3-1]', 'backwards'],
    ['n[1-', 'never closed'],
    ['n1-2]', 'without'],
    ['n[[1-2]]', 'inside brackets'],
    ['n[a-c]', 'not a number'],
    ['n[]', 'not a number'],
    ['n[1,,2]', 'not a number'],
    ['n[-1]', 'not a number'],
    ['n[1-2-3]', 'not a number'],
    ['n[1x2]', 'not a number'],
    ['n{1..3}', 'not supported'],
    ['n$1', 'not allowed'],
    ['-oProxyCommand=x', 'may not begin with "-"'],
    ['n1,-n[1-2]', 'may not begin with "-"'],
    ['n[0-99999999]', 'more than'],
    ['a[0-999]b[0-999]', 'more than'],
    [`n[1-${MAX_HOSTLIST_HOSTS}],x`, 'more than'],
  ])('%s is refused (%s)', (expr, why) => {
    expect(err(expr)).toContain(why);
  });

  it('accepts exactly the limit', () => {
    expect(ok(`n[1-${MAX_HOSTLIST_HOSTS}]`)).toHaveLength(MAX_HOSTLIST_HOSTS);
  });
});

describe('compressHostlist', () => {
  it.each([
    [['n01', 'n02', 'n03', 'n05', 'gpu7'], 'n[01-03,05],gpu7'],
    [['n8', 'n9', 'n10'], 'n[8-10]'],
    [['n09', 'n10'], 'n[09-10]'],
    [['n9', 'n010'], 'n[9,010]'],
    [['login'], 'login'],
    [['n1'], 'n1'],
    [['n2', 'n1'], 'n[2,1]'],
    [['a1', 'b1', 'a2'], 'a1,b1,a2'],
    [[], ''],
  ])('%j -> %s', (hosts, expr) => {
    expect(compressHostlist(hosts)).toBe(expr);
    expect(hosts.length === 0 ? [] : ok(expr)).toEqual(hosts);
  });
});

/** Host names as sites write them: a prefix of letters, '-', '.', '_' and maybe a zero-padded number. */
const hostName = fc
  .tuple(
    fc.stringMatching(/^[a-z][a-z0-9._-]{0,6}[a-z._-]$|^[a-z]$/),
    fc.option(fc.tuple(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 1, max: 4 })), { nil: undefined }),
  )
  .map(([prefix, num]) => (num === undefined ? prefix : prefix + String(num[0]).padStart(num[1], '0')));

describe('properties', () => {
  it('expand(compress(hosts)) gives the hosts back, in order', () => {
    fc.assert(
      fc.property(fc.array(hostName, { minLength: 1, maxLength: 40 }), (hosts) => {
        expect(ok(compressHostlist(hosts))).toEqual(hosts);
      }),
      { numRuns: 500 },
    );
  });

  it('a contiguous range of n hosts expands to n names with the written width', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 6 }), (lo, len, width) => {
        const loText = String(lo).padStart(width, '0');
        const hosts = ok(`node-[${loText}-${lo + len}]`);
        expect(hosts).toHaveLength(len + 1);
        for (let i = 0; i <= len; i++) expect(hosts[i]).toBe(`node-${String(lo + i).padStart(loText.length, '0')}`);
      }),
    );
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('n', '1', '0', '-', ',', '[', ']', '.', ' ', 'x', '{') , maxLength: 30 }), (s) => {
        const r = expandHostlist(s);
        expect(r instanceof Error || Array.isArray(r)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
