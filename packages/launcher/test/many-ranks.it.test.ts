// testlist: { file: 'many-ranks.it.test.ts', np: [64] } — many ranks on one host.
/**
 * Issue 38: a 64-process job on one host starts, runs a collective over all
 * of them and ends cleanly, within the machine's limits (each rank holds a
 * few descriptors in mpiexec: its three pipes and its wire-up link). The
 * ranks are plain JavaScript (no TypeScript loader), the cheapest start;
 * the deadline is generous, as on a loaded 2-core machine 64 Node processes
 * take a while to start. No timing is asserted. Under a soft limit of open
 * files too low for mpiexec's descriptors (the hard one: Node raises its soft
 * limit to it), mpiexec refuses the job at once,
 * naming the limit (fd-limit.ts), instead of dying of it halfway.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FIXTURES, MPIEXEC, REPO_ROOT, runMpiexec } from './run-mpiexec.ts';

const HELLO = `${FIXTURES}/hello-rank.mjs`;

describe('many ranks on one host', () => {
  it('runs a 64-process hello with an allreduce over all ranks', async () => {
    const r = await runMpiexec(['-n', '64', HELLO], { deadlineMs: 400_000 });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { rank: number; size: number; sum: number; localRank: number });
    expect(rows.map((x) => x.rank).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    for (const x of rows) {
      expect(x.size).toBe(64);
      expect(x.sum).toBe(64);
      expect(x.localRank).toBe(x.rank);
    }
  }, 420_000);

  it('refuses 64 ranks under an open-file limit of 200, naming the limit, and starts nothing', () => {
    const r = spawnSync('sh', ['-c', 'ulimit -n 200 && exec "$0" "$@"', process.execPath, MPIEXEC, '-n', '64', HELLO], {
      cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^mpiexec: 64 ranks on this host need about \d+ open files in mpiexec, but its limit of open files is 200; that is the hard limit \(ulimit -Hn\): .*place fewer ranks on this host\n$/);
    expect(r.status).toBe(2);
  }, 90_000);
});
