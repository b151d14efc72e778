// Which PMI a launcher offers (join.ts detectPmiLaunch), from the variables Hydra 4.0.2 and Slurm 22.05 set.
import { describe, expect, it } from 'vitest';
import { detectPmiLaunch } from './join.ts';

describe('detectPmiLaunch', () => {
  it('is null without PMI_FD and PMI_PORT', () => {
    expect(detectPmiLaunch({ PMI_RANK: '0', PMI_SIZE: '2' })).toBeNull();
    expect(detectPmiLaunch({ PMI_FD: '' })).toBeNull();
  });

  it('takes Hydra\'s PMI_FD without PMI_JOBID as PMI-1', () => {
    expect(detectPmiLaunch({ PMI_FD: '6', PMI_RANK: '1', PMI_SIZE: '4', MPI_LOCALNRANKS: '4' })).toEqual({ version: 1, endpoint: { fd: 6 }, rank: 1, size: 4, jobId: '', pmiId: null });
  });

  it('takes Slurm\'s PMI_FD with PMI_JOBID as PMI-2', () => {
    expect(detectPmiLaunch({ PMI_FD: '11', PMI_JOBID: '1.0', PMI_RANK: '0', PMI_SIZE: '2', SLURM_MPI_TYPE: 'pmi2' })).toMatchObject({ version: 2, endpoint: { fd: 11 }, jobId: '1.0' });
  });

  it('takes PMI_PORT as PMI-1 over TCP, with PMI_ID for the initack', () => {
    expect(detectPmiLaunch({ PMI_PORT: 'node7:40123', PMI_ID: '3' })).toMatchObject({ version: 1, endpoint: { host: 'node7', port: 40123 }, pmiId: '3' });
    expect(detectPmiLaunch({ PMI_PORT: '[::1]:40123' })).toMatchObject({ endpoint: { host: '::1', port: 40123 } });
  });

  it('names a malformed PMI_FD or PMI_PORT', () => {
    expect(() => detectPmiLaunch({ PMI_FD: 'six' })).toThrow(/PMI_FD=six is not a file descriptor/);
    expect(() => detectPmiLaunch({ PMI_PORT: 'node7' })).toThrow(/PMI_PORT=node7 is not host:port/);
    expect(() => detectPmiLaunch({ PMI_PORT: 'node7:70000' })).toThrow(/host:port/);
  });
});
