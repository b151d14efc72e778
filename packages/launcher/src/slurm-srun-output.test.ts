/**
 * Unit tests of slurm-srun-output.ts on srun/salloc lines as Slurm 22.05
 * printed them in the test cluster, and the other forms Slurm's source has.
 */
import { describe, expect, it } from 'vitest';
import { cancelledMessage, classifySrunLine, SrunOutcome } from './slurm-srun-output.ts';

describe('classifySrunLine', () => {
  it.each([
    ['slurmstepd-n01: error: *** STEP 1.0 ON n01 CANCELLED AT 2026-11-23T15:40:49 ***',
      { kind: 'cancelled', scope: 'step', id: '1.0', node: 'n01', reason: null }],
    ['slurmstepd-n01: error: *** JOB 3 ON n01 CANCELLED AT 2026-11-23T15:41:14 ***',
      { kind: 'cancelled', scope: 'job', id: '3', node: 'n01', reason: null }],
    ['slurmstepd: error: *** JOB 77 ON c12 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***',
      { kind: 'cancelled', scope: 'job', id: '77', node: 'c12', reason: 'TIME LIMIT' }],
    ['slurmstepd: error: *** STEP 5.2 ON c1 CANCELLED AT 2024-01-01T00:00:00 DUE to SIGNAL Terminated ***',
      { kind: 'cancelled', scope: 'step', id: '5.2', node: 'c1', reason: 'SIGNAL Terminated' }],
    ['slurmstepd: error: *** STEP 5.0 ON c1 FAILED (non-zero exit code or other failure mode) ***',
      { kind: 'failed', scope: 'step', id: '5.0', node: 'c1' }],
    ['salloc: Job allocation 2 has been revoked.', { kind: 'other' }],
    ['srun: error: n02: task 1: Exited with exit code 3',
      { kind: 'task-ended', hosts: ['n02'], tasks: [1], exitCode: 3, signal: null }],
    ['srun: error: n01: task 0: Killed', { kind: 'task-ended', hosts: ['n01'], tasks: [0], exitCode: null, signal: 'Killed' }],
    ['srun: error: n[01-02]: tasks 0-1,4: Segmentation fault (core dumped)',
      { kind: 'task-ended', hosts: ['n01', 'n02'], tasks: [0, 1, 4], exitCode: null, signal: 'Segmentation fault' }],
    ['srun: error: n01: task 0: Out Of Memory', { kind: 'task-ended', hosts: ['n01'], tasks: [0], exitCode: null, signal: 'Out Of Memory' }],
    ['srun: cluster configuration lacks support for cpu binding', { kind: 'noise' }],
    ['srun: Job step aborted: Waiting up to 7 seconds for job step to finish.', { kind: 'aborted' }],
    ['srun: got SIGCONT', { kind: 'noise' }],
    ['srun: launch/slurm: _step_signal: Terminating StepId=1.0', { kind: 'terminating', step: '1.0' }],
    ['srun: Force Terminated StepId=1.0', { kind: 'noise' }],
    ['srun: forcing job termination', { kind: 'noise' }],
    ['srun: error: Unable to create step for job 11: Job/step already completing or completed', { kind: 'other' }],
    ['srun: error: n01: task x: Killed', { kind: 'other' }],
    ['Hello from rank 0 of 2 on n01', { kind: 'other' }],
    ['', { kind: 'other' }],
  ])('%s', (line, want) => {
    expect(classifySrunLine(line)).toEqual(want);
  });
});

describe('cancelledMessage', () => {
  it('says Slurm did it, what, and why', () => {
    expect(cancelledMessage({ kind: 'cancelled', scope: 'step', id: '1.0', node: 'n01', reason: null })).toBe('Slurm cancelled step 1.0 (scancel)');
    expect(cancelledMessage({ kind: 'cancelled', scope: 'job', id: '77', node: 'c1', reason: 'TIME LIMIT' })).toBe('Slurm cancelled job 77 (time limit)');
    expect(cancelledMessage({ kind: 'cancelled', scope: 'job', id: '7', node: 'c1', reason: 'NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS' })).toBe('Slurm cancelled job 7 (node failure)');
  });
});

function verdictOf(text: string): ReturnType<SrunOutcome['verdict']> {
  const o = new SrunOutcome();
  for (const l of text.split('\n')) o.push(l);
  return o.verdict();
}

describe('SrunOutcome.isSlurmEnding: srun has said Slurm is ending the step, before it exits', () => {
  const after = (lines: readonly string[]): boolean => {
    const o = new SrunOutcome();
    for (const l of lines) o.push(l);
    return o.isSlurmEnding;
  };

  it('is false for nothing, a task\'s end or srun\'s own Terminating line', () => {
    expect(after([])).toBe(false);
    expect(after(['srun: error: n02: task 1: Killed', 'srun: launch/slurm: _step_signal: Terminating StepId=1.0'])).toBe(false);
  });

  it('is true after a CANCELLED line, with or without a reason, or srun\'s "Job step aborted"', () => {
    expect(after(['slurmstepd-n01: error: *** STEP 1.0 ON n01 CANCELLED AT 2026-11-23T15:40:49 ***'])).toBe(true);
    expect(after(['slurmstepd-n01: error: *** JOB 77 ON n01 CANCELLED AT 2026-11-23T15:40:49 DUE TO TIME LIMIT ***'])).toBe(true);
    expect(after(['srun: error: n02: task 1: Killed', 'srun: Job step aborted: Waiting up to 32 seconds for job step to finish.'])).toBe(true);
  });
});

describe('SrunOutcome on whole stderr texts seen on Slurm 22.05', () => {
  it('scancel of the step: Slurm cancelled it, although tasks were killed after', () => {
    expect(verdictOf([
      'slurmstepd-n01: error: *** STEP 1.0 ON n01 CANCELLED AT 2026-11-23T15:40:49 ***',
      'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.',
      'srun: error: n02: task 1: Killed',
      'srun: error: n01: task 0: Killed',
    ].join('\n'))).toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled step 1.0 (scancel)' });
  });

  it('scancel with --kill-on-bad-exit: srun terminates the step too, but after the CANCELLED line (seen on 22.05)', () => {
    expect(verdictOf([
      'slurmstepd-n01: error: *** STEP 8.0 ON n01 CANCELLED AT 2026-11-23T15:47:35 ***',
      'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.',
      'srun: error: n01: task 0: Killed',
      'srun: launch/slurm: _step_signal: Terminating StepId=8.0',
      'srun: error: n02: task 1: Killed',
    ].join('\n'))).toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled step 8.0 (scancel)' });
  });

  it('a task killed before the CANCELLED line arrives still counts as scancel when srun did not terminate the step', () => {
    expect(verdictOf('srun: error: n02: task 1: Killed\nslurmstepd-n01: error: *** STEP 1.0 ON n01 CANCELLED AT 2026-11-23T15:40:49 ***').kind).toBe('slurm-cancelled');
  });

  it('scancel of an salloc job: srun sees its step cancelled', () => {
    expect(verdictOf([
      'slurmstepd-n01: error: *** STEP 2.0 ON n01 CANCELLED AT 2026-11-23T15:40:59 ***',
      'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.',
      'srun: error: n02: task 1: Terminated',
      'srun: error: n01: task 0: Terminated',
    ].join('\n'))).toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled step 2.0 (scancel)' });
  });

  it('--kill-on-bad-exit after a proxy exited 3: the proxy failed, not Slurm', () => {
    expect(verdictOf([
      'srun: error: n02: task 1: Exited with exit code 3',
      'srun: launch/slurm: _step_signal: Terminating StepId=1.0',
      'slurmstepd-n01: error: *** STEP 1.0 ON n01 CANCELLED AT 2026-11-23T15:42:55 ***',
      'srun: error: n01: task 0: Terminated',
      'srun: Force Terminated StepId=1.0',
    ].join('\n'))).toEqual({ kind: 'task-failed', host: 'n02', task: 1, exitCode: 3, signal: null });
  });

  it('--kill-on-bad-exit after a proxy was killed: the proxy failed', () => {
    expect(verdictOf([
      'srun: error: n02: task 1: Killed',
      'srun: launch/slurm: _step_signal: Terminating StepId=1.0',
      'slurmstepd-n01: error: *** STEP 1.0 ON n01 CANCELLED AT 2026-11-23T15:42:55 ***',
    ].join('\n'))).toEqual({ kind: 'task-failed', host: 'n02', task: 1, exitCode: null, signal: 'Killed' });
  });

  it('scancel of the job, seen on 22.05: srun hears of it first, the CANCELLED line comes last', () => {
    expect(verdictOf([
      'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.',
      'srun: error: n01: task 0: Terminated',
      'srun: launch/slurm: _step_signal: Terminating StepId=9.0',
      'slurmstepd-n01: error: *** STEP 9.0 ON n01 CANCELLED AT 2026-11-23T15:55:30 ***',
      'srun: error: n02: task 1: Terminated',
    ].join('\n'))).toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled step 9.0 (scancel)' });
    // Seen in CI: the first task's end and srun's own "Terminating" before the CANCELLED and "aborted" lines.
    expect(verdictOf([
      'srun: error: n02: task 1: Terminated',
      'srun: launch/slurm: _step_signal: Terminating StepId=9.0',
      'slurmstepd-n01: error: *** STEP 9.0 ON n01 CANCELLED AT 2026-11-26T09:15:47 ***',
      'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.',
      'srun: error: n01: task 0: Terminated',
    ].join('\n'))).toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled step 9.0 (scancel)' });
    expect(verdictOf('srun: Job step aborted: Waiting up to 7 seconds for job step to finish.\nsrun: error: n01: task 0: Killed'))
      .toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled the step (scancel)' });
  });

  it('scancel of the step with no CANCELLED line before srun exits (seen in CI): the step of srun\'s "Terminating"', () => {
    expect(verdictOf([
      'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.',
      'srun: error: n02: task 1: Killed',
      'srun: launch/slurm: _step_signal: Terminating StepId=8.0',
      'srun: error: n01: task 0: Terminated',
    ].join('\n'))).toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled step 8.0 (scancel)' });
  });

  it('a time limit names itself; TASK FAILURE is srun\'s own doing', () => {
    expect(verdictOf('slurmstepd: error: *** JOB 7 ON c1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***')).toEqual({ kind: 'slurm-cancelled', message: 'Slurm cancelled job 7 (time limit)' });
    expect(verdictOf('slurmstepd: error: *** STEP 7.0 ON c1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TASK FAILURE ***')).toEqual({ kind: 'none' });
    expect(verdictOf([
      'srun: error: c2: task 1: Exited with exit code 1',
      'srun: launch/slurm: _step_signal: Terminating StepId=7.0',
      'slurmstepd: error: *** STEP 7.0 ON c1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TASK FAILURE ***',
    ].join('\n'))).toEqual({ kind: 'task-failed', host: 'c2', task: 1, exitCode: 1, signal: null });
  });

  it('nothing to say when the lines say nothing', () => {
    expect(verdictOf('Hello\nsrun: cluster configuration lacks support for cpu binding')).toEqual({ kind: 'none' });
  });
});
