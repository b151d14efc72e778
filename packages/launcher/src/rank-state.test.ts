import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { failureLines } from './failure-lines.ts';
import { OutputSink } from './output-forwarder.ts';
import { classifyExit, newRankState, type RankState } from './rank-state.ts';

const sink = new OutputSink(new Writable({ write: (_c, _e, cb) => cb() }));

function rank(r: number, over: Partial<RankState> = {}): RankState {
  return Object.assign(newRankState({ rank: r, host: "h", localRank: r, localSize: 4 }, null, sink, (b) => sink.write(b)), over);
}

describe('rank-state classifyExit', () => {
  it('counts signals, non-zero codes and exits 0 before finalize as failures', () => {
    expect(classifyExit(rank(0, { signal: 'SIGKILL' }), [])).toEqual({ reason: 'was killed by signal SIGKILL', status: 137 });
    expect(classifyExit(rank(0, { exitCode: 3 }), [])).toEqual({ reason: 'exited with code 3', status: 3 });
    expect(classifyExit(rank(0, { exitCode: 0, isInitialized: true, hasJoined: true, isFinalized: true }), [])).toBeNull();
    expect(classifyExit(rank(0, { exitCode: 0, isInitialized: true }), [])?.reason).toBe('exited with code 0 without calling MPI.finalize');
    expect(classifyExit(rank(0, { exitCode: 0, hasJoined: true }), [])?.reason).toBe('exited with code 0 during MPI.init');
  });

  it('counts an exit 0 before MPI.init as a failure only while another rank joined', () => {
    const s = rank(0, { exitCode: 0 });
    expect(classifyExit(s, [s, rank(1)])).toBeNull();
    expect(classifyExit(s, [s, rank(1, { hasJoined: true })])?.status).toBe(1);
  });
});

describe('failure-lines', () => {
  it('names the stopped ranks, then the blamed rank with the error it printed, last', () => {
    const blamed = rank(1, { pid: 11, exitCode: 1, errTail: 'Error: boom\n    at main (/app/x.mjs:3:9)\n' });
    const stopped = rank(0, { pid: 10, signal: 'SIGTERM' });
    const fine = rank(2, { pid: 12, exitCode: 0, isFinalized: true });
    const lines = failureLines({ s: blamed, text: 'exited with code 1; aborting the job (3 processes)', reason: 'exited with code 1', withCause: true, stoppedBecause: 'peer failed' }, [stopped, blamed, fine], '/app');
    expect(lines[0]).toBe('mpiexec: rank 0 stopped (peer failed)\n');
    expect(lines.at(-1)).toMatch(/^mpiexec: rank 1 \(host h, pid 11\) exited with code 1: Error: boom .*x\.mjs:3.*; aborting the job \(3 processes\)\n$/);
    expect(lines).toHaveLength(2);
  });
});
