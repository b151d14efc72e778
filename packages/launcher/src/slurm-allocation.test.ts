/**
 * Unit tests of slurm-allocation.ts. The environments below are the SLURM_*
 * variables Slurm 22.05 set in the two-node test cluster
 * (scripts/slurm-cluster.sh, 4 CPUs per node) for the command named in each
 * case, trimmed to what the reader looks at.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { describeSlurmAllocation, readSlurmAllocation, type SlurmAllocation } from './slurm-allocation.ts';
import { compressHostlist } from './slurm-hostlist.ts';
import { formatSlurmCounts } from './slurm-counts.ts';

function alloc(env: Record<string, string>): SlurmAllocation {
  const r = readSlurmAllocation(env);
  if (r.kind !== 'allocation') throw new Error(`expected an allocation, got ${JSON.stringify(r)}`);
  return r.allocation;
}

function error(env: Record<string, string>): string {
  const r = readSlurmAllocation(env);
  if (r.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(r)}`);
  return r.message;
}

describe('readSlurmAllocation on what Slurm 22.05 sets', () => {
  it('outside Slurm: none', () => {
    expect(readSlurmAllocation({ PATH: '/bin' })).toEqual({ kind: 'none' });
    expect(readSlurmAllocation({ SLURM_JOB_ID: '' })).toEqual({ kind: 'none' });
  });

  it('salloc -N 2 -n 4', () => {
    const a = alloc({
      SLURM_JOB_CPUS_PER_NODE: '3,1', SLURM_JOB_ID: '3', SLURM_JOB_NODELIST: 'n[01-02]', SLURM_JOB_NUM_NODES: '2',
      SLURM_NNODES: '2', SLURM_NODELIST: 'n[01-02]', SLURM_NPROCS: '4', SLURM_NTASKS: '4', SLURM_TASKS_PER_NODE: '3,1',
    });
    expect(a).toEqual({
      jobId: '3', stepId: null, hosts: [{ host: 'n01', slots: 3 }, { host: 'n02', slots: 1 }], defaultNp: 4,
      source: { nodelist: 'SLURM_JOB_NODELIST=n[01-02]', slots: 'SLURM_TASKS_PER_NODE=3,1', np: 'SLURM_NTASKS=4' },
    });
    expect(describeSlurmAllocation(a)).toBe('Slurm job 3: n01:3,n02:1 (SLURM_JOB_NODELIST=n[01-02], SLURM_TASKS_PER_NODE=3,1); -n defaults to 4 (SLURM_NTASKS=4)');
  });

  it('salloc -N 2 (no -n): one slot per node, -n from the slots', () => {
    const a = alloc({
      SLURM_JOB_CPUS_PER_NODE: '1(x2)', SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[01-02]', SLURM_JOB_NUM_NODES: '2',
      SLURM_NNODES: '2', SLURM_NODELIST: 'n[01-02]', SLURM_TASKS_PER_NODE: '1(x2)',
    });
    expect(a.hosts).toEqual([{ host: 'n01', slots: 1 }, { host: 'n02', slots: 1 }]);
    expect(a.defaultNp).toBe(2);
    expect(a.source.np).toBe('the 2 slot(s)');
  });

  it('salloc --ntasks-per-node=2 -N 2', () => {
    const a = alloc({
      SLURM_JOB_CPUS_PER_NODE: '2(x2)', SLURM_JOB_ID: '5', SLURM_JOB_NODELIST: 'n[01-02]', SLURM_JOB_NUM_NODES: '2',
      SLURM_NNODES: '2', SLURM_NODELIST: 'n[01-02]', SLURM_NPROCS: '4', SLURM_NTASKS: '4', SLURM_NTASKS_PER_NODE: '2',
      SLURM_TASKS_PER_NODE: '2(x2)',
    });
    expect(a.hosts).toEqual([{ host: 'n01', slots: 2 }, { host: 'n02', slots: 2 }]);
    expect(a.defaultNp).toBe(4);
  });

  it('salloc -n 3 on one node', () => {
    const a = alloc({
      SLURM_JOB_CPUS_PER_NODE: '3', SLURM_JOB_ID: '2', SLURM_JOB_NODELIST: 'n01', SLURM_JOB_NUM_NODES: '1',
      SLURM_NNODES: '1', SLURM_NODELIST: 'n01', SLURM_NPROCS: '3', SLURM_NTASKS: '3', SLURM_TASKS_PER_NODE: '3',
    });
    expect(a.hosts).toEqual([{ host: 'n01', slots: 3 }]);
    expect(a.defaultNp).toBe(3);
  });

  it('sbatch -N2 -n3 (batch script: no step id)', () => {
    const a = alloc({
      SLURM_JOB_CPUS_PER_NODE: '2,1', SLURM_JOB_ID: '9', SLURM_JOB_NODELIST: 'n[01-02]', SLURM_JOB_NUM_NODES: '2',
      SLURM_NNODES: '2', SLURM_NODELIST: 'n[01-02]', SLURM_NPROCS: '3', SLURM_NTASKS: '3', SLURM_TASKS_PER_NODE: '2,1',
    });
    expect(a.stepId).toBeNull();
    expect(a.hosts).toEqual([{ host: 'n01', slots: 2 }, { host: 'n02', slots: 1 }]);
    expect(a.defaultNp).toBe(3);
  });

  it('inside a step (salloc -N 2 -n 4 srun -n1 -N1 ...): the job, read from the CPUs per node', () => {
    // Slurm rewrote SLURM_NNODES, SLURM_NTASKS and SLURM_TASKS_PER_NODE for the one-task step.
    const a = alloc({
      SLURM_JOB_CPUS_PER_NODE: '3,1', SLURM_JOB_ID: '8', SLURM_JOB_NODELIST: 'n[01-02]', SLURM_JOB_NUM_NODES: '2',
      SLURM_NNODES: '1', SLURM_NODELIST: 'n[01-02]', SLURM_NPROCS: '1', SLURM_NTASKS: '1', SLURM_STEP_ID: '0',
      SLURM_STEP_NODELIST: 'n01', SLURM_STEP_NUM_TASKS: '1', SLURM_STEP_TASKS_PER_NODE: '1', SLURM_TASKS_PER_NODE: '1',
    });
    expect(a.stepId).toBe('0');
    expect(a.hosts).toEqual([{ host: 'n01', slots: 3 }, { host: 'n02', slots: 1 }]);
    expect(a.defaultNp).toBe(4);
    expect(describeSlurmAllocation(a)).toContain('inside step 0');
  });

  it('inside a step with -c 2: CPUs per node divided by CPUs per task', () => {
    const a = alloc({
      SLURM_CPUS_PER_TASK: '2', SLURM_JOB_CPUS_PER_NODE: '4(x2)', SLURM_JOB_ID: '4', SLURM_JOB_NODELIST: 'n[01-02]',
      SLURM_JOB_NUM_NODES: '2', SLURM_STEP_ID: '1', SLURM_TASKS_PER_NODE: '1',
    });
    expect(a.hosts).toEqual([{ host: 'n01', slots: 2 }, { host: 'n02', slots: 2 }]);
    expect(a.source.slots).toBe('SLURM_JOB_CPUS_PER_NODE=4(x2) / SLURM_CPUS_PER_TASK=2');
  });

  it('older names: SLURM_JOBID, SLURM_NODELIST, SLURM_NNODES, SLURM_NPROCS', () => {
    const a = alloc({ SLURM_JOBID: '12', SLURM_NODELIST: 'c[1-3]', SLURM_NNODES: '3', SLURM_TASKS_PER_NODE: '2(x3)', SLURM_NPROCS: '5' });
    expect(a.jobId).toBe('12');
    expect(a.hosts.map((h) => h.host)).toEqual(['c1', 'c2', 'c3']);
    expect(a.defaultNp).toBe(5);
  });

  it('drops nodes with no slot', () => {
    const a = alloc({ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-3]', SLURM_TASKS_PER_NODE: '2,0,1' });
    expect(a.hosts).toEqual([{ host: 'n1', slots: 2 }, { host: 'n3', slots: 1 }]);
  });
});

describe('readSlurmAllocation refuses an inconsistent environment with a message naming the variable', () => {
  it.each([
    [{ SLURM_JOB_ID: '1' }, 'SLURM_JOB_NODELIST is not'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[2-1]', SLURM_TASKS_PER_NODE: '1' }, 'SLURM_JOB_NODELIST="n[2-1]"'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_TASKS_PER_NODE: '1' }, 'SLURM_TASKS_PER_NODE="1" gives 1 count(s) but SLURM_JOB_NODELIST="n[1-2]" names 2'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_TASKS_PER_NODE: '1(x2', SLURM_NTASKS: '2' }, 'SLURM_TASKS_PER_NODE="1(x2"'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_JOB_NUM_NODES: '3', SLURM_TASKS_PER_NODE: '1(x2)' }, 'SLURM_JOB_NUM_NODES=3'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_TASKS_PER_NODE: '1(x2)', SLURM_NTASKS: 'four' }, 'SLURM_NTASKS="four"'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_TASKS_PER_NODE: '1(x2)', SLURM_NTASKS: '0' }, 'SLURM_NTASKS="0"'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]' }, 'neither SLURM_TASKS_PER_NODE'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_STEP_ID: '0', SLURM_TASKS_PER_NODE: '1' }, 'SLURM_JOB_CPUS_PER_NODE is not set'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_STEP_ID: '0', SLURM_JOB_CPUS_PER_NODE: '1(x2)', SLURM_CPUS_PER_TASK: '0' }, 'SLURM_CPUS_PER_TASK="0"'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_TASKS_PER_NODE: '0(x2)' }, 'leaves no slot'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_TASKS_PER_NODE: '1(x2)', SLURM_HET_SIZE: '2' }, 'heterogeneous'],
  ])('%j', (env, text) => {
    const m = error(env as Record<string, string>);
    expect(m).toContain(text);
    expect(m.startsWith('Slurm allocation: ')).toBe(true);
    expect(m).not.toContain('\n');
  });
});

describe('property: any consistent allocation environment reads back', () => {
  it('hosts, slots and -n are what the environment encodes', () => {
    const node = fc.tuple(fc.constantFrom('n', 'gpu', 'c-', 'r1.n'), fc.integer({ min: 0, max: 999 }));
    fc.assert(
      fc.property(
        fc.uniqueArray(node, { minLength: 1, maxLength: 20, selector: ([p, i]) => `${p}${i}` }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 20, maxLength: 20 }),
        fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
        (nodes, slots, ntasks) => {
          const hosts = nodes.map(([p, i]) => `${p}${String(i).padStart(3, '0')}`);
          const counts = slots.slice(0, hosts.length);
          const env: Record<string, string> = {
            SLURM_JOB_ID: '42', SLURM_JOB_NODELIST: compressHostlist(hosts), SLURM_JOB_NUM_NODES: String(hosts.length),
            SLURM_TASKS_PER_NODE: formatSlurmCounts(counts),
          };
          if (ntasks !== undefined) env.SLURM_NTASKS = String(ntasks);
          const a = alloc(env);
          expect(a.hosts).toEqual(hosts.map((host, k) => ({ host, slots: counts[k] })));
          expect(a.defaultNp).toBe(ntasks ?? counts.reduce((s, c) => s + c, 0));
        },
      ),
      { numRuns: 300 },
    );
  });
});
