// The comparison behind mpiexec's deadlock hint (deadlock-hint.ts): pure, on made-up roll-call answers.
import { describe, expect, it } from 'vitest';
import { hintFor } from './deadlock-hint.ts';
import type { RollCallRank } from './roll-call.ts';
import type { RollCallAnswer } from './wireup-server.ts';

const ranks = (n: number, ended: number[] = []): RollCallRank[] =>
  Array.from({ length: n }, (_, rank) => ({ rank, host: 'h', pid: 100 + rank, ended: ended.includes(rank) ? 'ended (exit code 0)' : null }));
const recv = (peer: number, calls: number, threads?: { thread: number; calls: number }[]): RollCallAnswer => ({
  kind: 'blocked',
  blockedIn: { call: 'recv', comm: 'COMM_WORLD', peer, tag: 0, calls, ...(threads === undefined ? {} : { threads: threads.map((t) => ({ thread: t.thread, call: 'barrier', comm: 'c', peer: null, tag: null, calls: t.calls })) }) },
});
const answers = (...a: [number, RollCallAnswer][]): Map<number, RollCallAnswer> => new Map(a);

describe('hintFor', () => {
  it('names every running rank when each waits in the same call with the same count as before', () => {
    const a = answers([0, recv(1, 5)], [1, recv(0, 9)]);
    expect(hintFor(ranks(2), a, answers([0, recv(1, 5)], [1, recv(0, 9)]), 60)).toBe(
      'mpiexec: no MPI call of any rank has returned for 60 s, a deadlock? (rank 0 blocked in recv (comm COMM_WORLD, peer 1, tag 0); rank 1 blocked in recv (comm COMM_WORLD, peer 0, tag 0)); --timeout SECONDS ends such a job with a roll-call of every rank',
    );
  });

  it('says nothing when a call returned in between (the count moved), in the main thread or another', () => {
    expect(hintFor(ranks(2), answers([0, recv(1, 5)], [1, recv(0, 9)]), answers([0, recv(1, 6)], [1, recv(0, 9)]), 60)).toBeNull();
    expect(hintFor(ranks(1), answers([0, recv(1, 5, [{ thread: 1, calls: 3 }])]), answers([0, recv(1, 5, [{ thread: 1, calls: 4 }])]), 60)).toBeNull();
  });

  it('says nothing when a rank computes, does not answer, or is not in MPI; ended ranks do not count', () => {
    const same = answers([0, recv(1, 5)], [1, recv(0, 9)]);
    expect(hintFor(ranks(2), same, answers([0, recv(1, 5)], [1, { kind: 'noAnswer' }]), 60)).toBeNull();
    expect(hintFor(ranks(2), same, answers([0, recv(1, 5)], [1, { kind: 'notInMpi' }]), 60)).toBeNull();
    expect(hintFor(ranks(2, [1]), answers([0, recv(1, 5)]), answers([0, recv(1, 5)]), 60)).toMatch(/^mpiexec: .*\(rank 0 blocked in recv/);
    expect(hintFor(ranks(2, [0, 1]), same, same, 60)).toBeNull();
  });

  it('shows four ranks and counts the rest', () => {
    const many = answers(...Array.from({ length: 6 }, (_, r) => [r, recv(0, r)] as [number, RollCallAnswer]));
    expect(hintFor(ranks(6), many, many, 30)).toMatch(/rank 3 blocked in recv \(comm COMM_WORLD, peer 0, tag 0\); and 2 more\)/);
  });
});
