// Unit tests of the job environment: the host label (what COMM_TYPE_SHARED groups by) and taking the key out of it.
import { describe, expect, it } from 'vitest';
import { hostLabel, processOf, readJobEnv, takeJobEnv, universeOf } from './job-env.ts';

describe('hostLabel', () => {
  it('tells apart two hosts that share one host name by their listen addresses', () => {
    const a = hostLabel('node', { TSMPI_LISTEN_HOST: '198.18.0.1' });
    const b = hostLabel('node', { TSMPI_LISTEN_HOST: '198.18.0.2' });
    expect(a).not.toBe(b);
  });
  it('agrees for two processes of one host', () => {
    expect(hostLabel('th1', { TSMPI_LISTEN_HOST: '127.0.0.1' })).toBe(hostLabel('th1', { TSMPI_LISTEN_HOST: '127.0.0.1' }));
    expect(hostLabel('th1', {})).toBe(hostLabel('th1', {}));
  });
  it('tells apart hosts with different names even on the same address', () => {
    expect(hostLabel('a', { TSMPI_LISTEN_HOST: '127.0.0.1' })).not.toBe(hostLabel('b', { TSMPI_LISTEN_HOST: '127.0.0.1' }));
  });
});

describe('takeJobEnv', () => {
  it('reads the job key and removes it from the environment it read', () => {
    const env: NodeJS.ProcessEnv = { TSMPI_PMI_URL: 'ws://127.0.0.1:1', TSMPI_JOB_KEY: 'ab'.repeat(32), TSMPI_RANK: '1', TSMPI_SIZE: '2', OTHER: 'x' };
    const job = takeJobEnv(env);
    expect(job?.jobKey).toBe('ab'.repeat(32));
    expect(job?.rank).toBe(1);
    expect('TSMPI_JOB_KEY' in env).toBe(false);
    expect(env['TSMPI_PMI_URL']).toBe('ws://127.0.0.1:1');
    expect(env['OTHER']).toBe('x');
  });
});

describe('processOf and universeOf (dynamic processes)', () => {
  const base = { TSMPI_PMI_URL: 'ws://127.0.0.1:1', TSMPI_RANK: '1', TSMPI_SIZE: '2' };
  it('a rank of the world mpiexec started is its own process number; the universe is at least the world', () => {
    const job = readJobEnv(base);
    expect(processOf(job)).toBe(1);
    expect(universeOf(job)).toBe(2);
    expect(universeOf(readJobEnv({ ...base, TSMPI_UNIVERSE: '6' }))).toBe(6);
  });
  it('a spawned rank counts from its world\'s first process; a malformed number is ignored', () => {
    const job = readJobEnv({ ...base, TSMPI_WORLD_FIRST: '4', TSMPI_UNIVERSE: '3', TSMPI_PARENT_SPAWN: '1' });
    expect(processOf(job)).toBe(5);
    expect(universeOf(job)).toBe(6);
    expect(job?.parentSpawn).toBe(1);
    expect(readJobEnv({ ...base, TSMPI_WORLD_FIRST: '-1' })?.worldFirst).toBeUndefined();
    expect(processOf(null)).toBe(0);
  });
  it('a spawned rank knows its parents\' progress; anything but inline, threads or engines is ignored', () => {
    expect(readJobEnv({ ...base, TSMPI_PARENT_PROGRESS: 'threads' })?.parentProgress).toBe('threads');
    expect(readJobEnv({ ...base, TSMPI_PARENT_PROGRESS: 'inline' })?.parentProgress).toBe('inline');
    expect(readJobEnv({ ...base, TSMPI_PARENT_PROGRESS: 'auto' })?.parentProgress).toBeUndefined();
    expect(readJobEnv(base)?.parentProgress).toBeUndefined();
  });
});
