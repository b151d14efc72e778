/**
 * Unit tests of slurm-plan.ts: launcher choice and the plan of a
 * `--launcher slurm` job inside and outside an allocation.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chooseLauncher, planSlurmJob, proxyHostsOf, type SlurmPlan, type SlurmPlanInput } from './slurm-plan.ts';
import { readSlurmAllocation, type SlurmEnvResult } from './slurm-allocation.ts';

// salloc -N 2 -n 4 on the test cluster (3 tasks on n01, 1 on n02).
const ALLOC = readSlurmAllocation({
  SLURM_JOB_ID: '3', SLURM_JOB_NODELIST: 'n[01-02]', SLURM_JOB_NUM_NODES: '2', SLURM_TASKS_PER_NODE: '3,1', SLURM_NTASKS: '4',
});
const NONE: SlurmEnvResult = { kind: 'none' };
const BROKEN = readSlurmAllocation({ SLURM_JOB_ID: '3' });

function plan(input: Partial<SlurmPlanInput>): SlurmPlan {
  const r = planSlurmJob({ slurm: ALLOC, np: null, hosts: null, ppn: null, jobName: 'tsmpi', ...input });
  if (r instanceof Error) throw r;
  return r;
}

describe('chooseLauncher', () => {
  it('is slurm inside an allocation unless --launcher says otherwise', () => {
    expect(chooseLauncher(null, ALLOC)).toBe('slurm');
    expect(chooseLauncher('slurm', ALLOC)).toBe('slurm');
    expect(chooseLauncher('ssh', ALLOC)).toBe('ssh');
    expect(chooseLauncher('fork', ALLOC)).toBe('fork');
  });

  it('is fork outside Slurm, slurm when asked', () => {
    expect(chooseLauncher(null, NONE)).toBe('fork');
    expect(chooseLauncher('slurm', NONE)).toBe('slurm');
    expect(chooseLauncher('ssh', NONE)).toBe('ssh');
  });

  it('reports a broken Slurm environment unless another launcher was chosen', () => {
    const e = chooseLauncher(null, BROKEN);
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).message).toContain('--launcher fork|ssh');
    expect((e as Error).message).toContain('SLURM_JOB_NODELIST');
    expect(chooseLauncher('slurm', BROKEN)).toBeInstanceOf(Error);
    expect(chooseLauncher('fork', BROKEN)).toBe('fork');
  });
});

describe('planSlurmJob inside an allocation', () => {
  it('takes hosts, slots and -n from Slurm', () => {
    const p = plan({});
    expect(p.np).toBe(4);
    expect(p.hosts).toEqual([{ host: 'n01', slots: 3 }, { host: 'n02', slots: 1 }]);
    expect(p.target).toEqual({ kind: 'allocation', hosts: [] });
    expect(p.notes[0]).toContain('Slurm job 3');
  });

  it('-n overrides the task count; more than the slots is allowed and noted', () => {
    expect(plan({ np: 2 }).np).toBe(2);
    const p = plan({ np: 6 });
    expect(p.np).toBe(6);
    expect(p.notes.join('\n')).toContain('-n 6 is more than the 4 slot(s)');
    expect(plan({ np: 6, ppn: 3 }).notes.join('\n')).not.toContain('more than');
  });

  it('--hosts narrows to nodes of the job, keeping Slurm slots unless given', () => {
    expect(plan({ hosts: [{ host: 'n02', slots: null }] }).hosts).toEqual([{ host: 'n02', slots: 1 }]);
    expect(plan({ hosts: [{ host: 'n02', slots: 2 }, { host: 'n01', slots: null }] }).hosts).toEqual([{ host: 'n02', slots: 2 }, { host: 'n01', slots: 3 }]);
  });

  it('refuses a --hosts entry outside the job, naming it and the job nodes', () => {
    const r = planSlurmJob({ slurm: ALLOC, np: null, hosts: [{ host: 'n09', slots: null }], ppn: null, jobName: 't' });
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toContain('--hosts n09: not a node of Slurm job 3 (n[01-02])');
  });

  it('passes an environment error on', () => {
    expect(planSlurmJob({ slurm: BROKEN, np: null, hosts: null, ppn: null, jobName: 't' })).toBeInstanceOf(Error);
  });
});

describe('planSlurmJob outside an allocation', () => {
  it('one node with CPUs for every rank by default', () => {
    const p = plan({ slurm: NONE, np: 3 });
    expect(p).toEqual({ np: 3, hosts: null, target: { kind: 'new', nodes: 1, cpusPerProxy: 3, jobName: 'tsmpi' }, notes: [expect.stringContaining('1 node(s)')] });
  });

  it('--ppn splits into ceil(n / ppn) nodes', () => {
    expect(plan({ slurm: NONE, np: 10, ppn: 4 }).target).toEqual({ kind: 'new', nodes: 3, cpusPerProxy: 4, jobName: 'tsmpi' });
    expect(plan({ slurm: NONE, np: 2, ppn: 4 }).target).toEqual({ kind: 'new', nodes: 1, cpusPerProxy: 2, jobName: 'tsmpi' });
    expect(plan({ slurm: NONE }).np).toBe(1);
  });

  it('--hosts asks for those nodes, with CPUs for the busiest one', () => {
    const p = plan({ slurm: NONE, np: 5, hosts: [{ host: 'a1', slots: 2 }, { host: 'a2', slots: null }] });
    // a1 takes 2, a2 takes 1, a1 2 more (wrap): a1 has 4, a2 1.
    expect(p.target).toEqual({ kind: 'new', nodes: 2, cpusPerProxy: 4, jobName: 'tsmpi', hosts: ['a1', 'a2'] });
    expect(p.hosts).toEqual([{ host: 'a1', slots: 2 }, { host: 'a2', slots: 1 }]);
  });

  it('every rank has a CPU: nodes x cpusPerProxy >= n', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.option(fc.integer({ min: 1, max: 64 }), { nil: null }), (np, ppn) => {
        const t = plan({ slurm: NONE, np, ppn }).target;
        if (t.kind !== 'new') throw new Error('expected a new allocation');
        expect(t.nodes * t.cpusPerProxy).toBeGreaterThanOrEqual(np);
        expect((t.nodes - 1) * t.cpusPerProxy).toBeLessThan(np);
      }),
    );
  });
});

describe('proxyHostsOf', () => {
  it('gives distinct hosts in the order of their first rank', () => {
    expect(proxyHostsOf([{ host: 'n02' }, { host: 'n01' }, { host: 'n02' }, { host: 'n03' }])).toEqual(['n02', 'n01', 'n03']);
    expect(proxyHostsOf([])).toEqual([]);
  });
});
