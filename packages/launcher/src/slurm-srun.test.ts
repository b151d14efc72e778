/**
 * Unit tests of slurm-srun.ts: the srun command line that starts one proxy
 * per node, inside an allocation and without one, and the environment srun
 * gets (never the job key).
 */
import { describe, expect, it } from 'vitest';
import { buildSrunCommand, parseSlurmVersion, srunEnvironment, type SrunCommand, type SrunRequest } from './slurm-srun.ts';

const PROXY = ['/usr/bin/node', '/repo/packages/launcher/bin/proxy.mjs', '--connect', 'ws://198.19.12.1:4000'];
const V22 = { major: 22, minor: 5, micro: 8 };

function build(req: Partial<SrunRequest>): SrunCommand {
  const r = buildSrunCommand({ srun: 'srun', target: { kind: 'allocation', hosts: ['n01', 'n02'] }, version: V22, proxyArgv: PROXY, ...req });
  if (r instanceof Error) throw r;
  return r;
}

describe('parseSlurmVersion', () => {
  it.each([
    ['slurm-wlm 22.05.8\n', { major: 22, minor: 5, micro: 8 }],
    ['slurm 23.11.4', { major: 23, minor: 11, micro: 4 }],
    ['slurm 24.05.0-0rc1', { major: 24, minor: 5, micro: 0 }],
    ['slurm 20.11', { major: 20, minor: 11, micro: 0 }],
  ])('%s', (text, v) => {
    expect(parseSlurmVersion(text)).toEqual(v);
  });
  it('gives null for anything else', () => {
    expect(parseSlurmVersion('srun: command not found')).toBeNull();
    expect(parseSlurmVersion('')).toBeNull();
  });
});

describe('buildSrunCommand inside an allocation', () => {
  it('one proxy per node, on exactly the placed nodes, with the options Hydra and PRRTE use', () => {
    const { argv, stdinLine } = build({});
    expect(argv).toEqual([
      'srun', '--nodes=2', '--ntasks=2', '--ntasks-per-node=1', '--nodelist=n[01-02]', '--overlap',
      '--kill-on-bad-exit=1', '--cpu-bind=none', '--mpi=none', '--export=ALL', '--input=all', ...PROXY,
    ]);
    expect(stdinLine).toBe('job-key');
    expect(argv).not.toContain('--exact');
  });

  it('a subset of the allocation names just those nodes', () => {
    const { argv } = build({ target: { kind: 'allocation', hosts: ['gpu3', 'n07'] } });
    expect(argv).toContain('--nodelist=gpu3,n07');
    expect(argv).toContain('--nodes=2');
  });

  it('chooses the overlap option by Slurm version', () => {
    expect(build({ version: { major: 23, minor: 11, micro: 0 } }).argv).toContain('--external-launcher');
    expect(build({ version: { major: 23, minor: 11, micro: 0 } }).argv).not.toContain('--overlap');
    expect(build({ version: { major: 24, minor: 5, micro: 1 } }).argv).toContain('--external-launcher');
    expect(build({ version: { major: 23, minor: 2, micro: 7 } }).argv).toContain('--overlap');
    expect(build({ version: { major: 20, minor: 11, micro: 0 } }).argv).toContain('--overlap');
    const old = build({ version: { major: 20, minor: 2, micro: 0 } }).argv;
    expect(old.some((a) => a === '--overlap' || a === '--external-launcher')).toBe(false);
    expect(build({ version: null }).argv).toContain('--overlap');
  });

  it('puts user options before the proxy command', () => {
    const { argv } = build({ extraArgs: ['--partition=debug'] });
    expect(argv.indexOf('--partition=debug')).toBe(argv.indexOf(PROXY[0]!) - 1);
  });

  it('refuses no hosts, a repeated host, an empty proxy command', () => {
    expect(buildSrunCommand({ srun: 'srun', target: { kind: 'allocation', hosts: [] }, version: V22, proxyArgv: PROXY })).toBeInstanceOf(Error);
    expect(buildSrunCommand({ srun: 'srun', target: { kind: 'allocation', hosts: ['a', 'a'] }, version: V22, proxyArgv: PROXY })).toBeInstanceOf(Error);
    expect(buildSrunCommand({ srun: 'srun', target: { kind: 'allocation', hosts: ['a'] }, version: V22, proxyArgv: [] })).toBeInstanceOf(Error);
  });

  it('refuses to put the job key on the command line', () => {
    const key = 'a'.repeat(64);
    const r = buildSrunCommand({ srun: 'srun', target: { kind: 'allocation', hosts: ['n1'] }, version: V22, proxyArgv: [...PROXY, `--key=${key}`], secrets: [key] });
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toContain('job key');
    expect(build({ secrets: [key] }).argv.join(' ')).not.toContain(key);
  });
});

describe('buildSrunCommand without an allocation', () => {
  it('srun makes its own allocation: N nodes, one proxy each with CPUs for its ranks', () => {
    const r = buildSrunCommand({ srun: '/usr/bin/srun', target: { kind: 'new', nodes: 3, cpusPerProxy: 4, jobName: 'tsmpi' }, version: V22, proxyArgv: PROXY });
    if (r instanceof Error) throw r;
    expect(r.argv).toEqual([
      '/usr/bin/srun', '--nodes=3', '--ntasks=3', '--ntasks-per-node=1', '--cpus-per-task=4', '--job-name=tsmpi',
      '--kill-on-bad-exit=1', '--cpu-bind=none', '--mpi=none', '--export=ALL', '--input=all', ...PROXY,
    ]);
    expect(r.argv.some((a) => a.startsWith('--nodelist') || a === '--overlap')).toBe(false);
  });

  it('asks for the named nodes when --hosts was given', () => {
    const r = buildSrunCommand({ srun: 'srun', target: { kind: 'new', nodes: 2, cpusPerProxy: 2, jobName: 'tsmpi', hosts: ['n1', 'n2'] }, version: V22, proxyArgv: PROXY });
    if (r instanceof Error) throw r;
    expect(r.argv).toContain('--nodelist=n[1-2]');
    expect(buildSrunCommand({ srun: 'srun', target: { kind: 'new', nodes: 2, cpusPerProxy: 2, jobName: 't', hosts: ['n1', 'n1'] }, version: V22, proxyArgv: PROXY })).toBeInstanceOf(Error);
  });

  it('refuses bad counts', () => {
    expect(buildSrunCommand({ srun: 'srun', target: { kind: 'new', nodes: 0, cpusPerProxy: 1, jobName: 't' }, version: V22, proxyArgv: PROXY })).toBeInstanceOf(Error);
    expect(buildSrunCommand({ srun: 'srun', target: { kind: 'new', nodes: 1, cpusPerProxy: 1.5, jobName: 't' }, version: V22, proxyArgv: PROXY })).toBeInstanceOf(Error);
  });
});

describe('srunEnvironment', () => {
  it('keeps the environment but not the job key nor srun input variables that would reshape the step', () => {
    const env = srunEnvironment({
      PATH: '/usr/bin', TSMPI_JOB_KEY: 'secret', TSMPI_CHANNELS: '2', SLURM_JOB_ID: '7', SLURM_EXPORT_ENV: 'NONE',
      SLURM_EXACT: '1', SLURM_CPU_BIND: 'cores', SLURM_STDINMODE: '0', UNSET: undefined,
    });
    expect(env).toEqual({ PATH: '/usr/bin', TSMPI_CHANNELS: '2', SLURM_JOB_ID: '7' });
  });
});
