import { describe, expect, it } from 'vitest';
import type { RankCounters } from '@tsmpi/core/pmi';
import { MAX_MATRIX, JobTraffic, callViews, isCollective, waitCycles } from './dashboard-views.ts';
import type { RollCallAnswer } from './wireup-server.ts';

const base: RankCounters = { messagesSent: 0, messagesReceived: 0, bytesSent: 0, bytesReceived: 0, collectives: 0 };
const blocked = (call: string, comm: string, peer: number | null): RollCallAnswer => ({ kind: 'blocked', blockedIn: { call, comm, peer, tag: null } });

describe('dashboard views', () => {
  it('keeps the matrix from the changed entries of each sample, and sums channels over ranks', () => {
    const t = new JobTraffic();
    t.add(0, { ...base, peerBytes: [[1, 100]], channels: [{ sent: 2, received: 1 }, { sent: 0, received: 3 }] }, 3);
    t.add(1, { ...base, peerBytes: [[0, 50], [2, 7]], channels: [{ sent: 1, received: 1 }, { sent: 4, received: 0 }] }, 3);
    t.add(0, { ...base, peerBytes: [[2, 9]] }, 3); // only what changed: 0 -> 1 stays 100
    expect(t.matrix(3)).toEqual({ size: 3, bytes: [[0, 100, 9], [50, 0, 7], [0, 0, 0]] });
    expect(t.channels()).toEqual([{ channel: 0, framesSent: 3, framesReceived: 2 }, { channel: 1, framesSent: 4, framesReceived: 3 }]);
    expect(t.matrix(MAX_MATRIX + 1)).toBeNull();
  });

  it('names collectives', () => {
    for (const c of ['barrier', 'Allreduce', 'Comm.bcast', 'Ibarrier', 'Split']) expect(isCollective(c)).toBe(true);
    for (const c of ['Recv', 'Comm.recv', 'Request.wait', 'Ssend', 'MPI.init']) expect(isCollective(c)).toBe(false);
  });

  it('lists collectives in flight with who has not arrived, and the wait-for cycle', () => {
    const answers = new Map<number, RollCallAnswer>([
      [0, blocked('Recv', 'COMM_WORLD', 1)],
      [1, blocked('Recv', 'COMM_WORLD', 2)],
      [2, blocked('Recv', 'COMM_WORLD', 0)],
      [3, blocked('barrier', 'COMM_WORLD', null)],
      [4, blocked('barrier', 'COMM_WORLD', null)],
      [5, blocked('allreduce', 'row', null)],
      [6, { kind: 'notInMpi' }],
    ]);
    const v = callViews(answers, [0, 1, 2, 3, 4, 5, 6]);
    expect(v.collectives).toEqual([
      { comm: 'COMM_WORLD', call: 'barrier', arrived: [3, 4], missing: [0, 1, 2, 5, 6] },
      { comm: 'row', call: 'allreduce', arrived: [5], missing: null },
    ]);
    expect(v.waits).toEqual([{ from: 0, to: 1, call: 'Recv' }, { from: 1, to: 2, call: 'Recv' }, { from: 2, to: 0, call: 'Recv' }]);
    expect(v.cycles).toEqual([[0, 1, 2]]);
  });

  it('finds each cycle once, and none in a chain', () => {
    const e = (from: number, to: number) => ({ from, to, call: 'Recv' });
    expect(waitCycles([e(0, 1), e(1, 2), e(2, 3)])).toEqual([]);
    expect(waitCycles([e(2, 3), e(3, 2), e(0, 1), e(1, 0), e(4, 0)])).toEqual([[0, 1], [2, 3]]);
  });
});
