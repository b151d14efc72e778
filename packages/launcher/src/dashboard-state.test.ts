import { describe, expect, it } from 'vitest';
import type { RankCounters } from '@tsmpi/core/pmi';
import { DashboardState, MAX_TEXT, MAX_THREADS, RATE_WINDOW_MS, callText, decodeSnapshot, encodeSnapshot, type DashboardRank } from './dashboard-state.ts';
import type { RollCallAnswer } from './wireup-server.ts';

function rank(r: number, over: Partial<DashboardRank> = {}): DashboardRank {
  return { rank: r, host: 'h', pid: 100 + r, hasJoined: true, isInitialized: true, isFinalized: false, hasExited: false, exitCode: null, signal: null, ...over };
}
function counters(n: number): RankCounters {
  return { messagesSent: n, messagesReceived: 2 * n, bytesSent: 8 * n, bytesReceived: 16 * n, collectives: 1 };
}

describe('dashboard state', () => {
  it('names each rank\'s call, or why it has none', () => {
    const ranks = [
      rank(0), rank(1), rank(2), rank(3, { isInitialized: false, hasJoined: false }), rank(4, { isFinalized: true }),
      rank(5, { hasExited: true, exitCode: 3 }), rank(6, { hasExited: true, signal: 'SIGKILL' }), rank(7, { hasExited: true, exitCode: 0, isFinalized: true }),
    ];
    const answers = new Map<number, RollCallAnswer>([
      [0, { kind: 'blocked', blockedIn: { call: 'Comm.recv', comm: 'COMM_WORLD', peer: 1, tag: 7 } }],
      [1, { kind: 'notInMpi' }],
      [2, { kind: 'noAnswer' }],
    ]);
    const s = new DashboardState().update(ranks, answers, 1000);
    const by = (r: number) => s.ranks.find((x) => x.rank === r)!;
    expect(by(0).state).toBe('in MPI');
    expect(by(0).threads).toEqual([{ thread: 'main', call: 'Comm.recv (comm COMM_WORLD, peer 1, tag 7)', peer: 1 }]);
    expect(by(1)).toMatchObject({ state: 'computing', threads: [] });
    expect(by(2)).toMatchObject({ state: 'computing', detail: expect.stringContaining('no answer') });
    expect(by(3).state).toBe('starting');
    expect(by(4).state).toBe('finalized');
    expect(by(5)).toMatchObject({ state: 'failed', detail: 'exit code 3' });
    expect(by(6)).toMatchObject({ state: 'failed', detail: 'killed by signal SIGKILL' });
    expect(by(7).state).toBe('finalized');
    expect(s.size).toBe(8);
  });

  it('lists worker threads, ANY_SOURCE, and bounds their number and text', () => {
    const threads = Array.from({ length: MAX_THREADS + 5 }, (_, i) => ({ thread: i + 1, call: 'Comm.barrier', comm: 'x'.repeat(200), peer: null, tag: null }));
    const a = new Map<number, RollCallAnswer>([[0, { kind: 'blocked', blockedIn: { call: '(main thread not in MPI)', comm: '', peer: null, tag: null, threads } }],
      [1, { kind: 'blocked', blockedIn: { call: 'Comm.recv', comm: 'COMM_WORLD', peer: -1, tag: -1, threads: [{ thread: 3, call: 'Comm.send', comm: 'c', peer: 0, tag: 1 }] } }]]);
    const s = new DashboardState().update([rank(0), rank(1)], a, 0);
    expect(s.ranks[0]!.threads).toHaveLength(MAX_THREADS);
    expect(s.ranks[0]!.threads[0]!.thread).toBe('1');
    expect(s.ranks[0]!.moreThreads).toBe(5);
    for (const t of s.ranks[0]!.threads) expect(t.call.length).toBeLessThanOrEqual(MAX_TEXT);
    expect(s.ranks[1]!.threads.map((t) => [t.thread, t.call, t.peer])).toEqual([
      ['main', 'Comm.recv (comm COMM_WORLD, peer ANY_SOURCE, tag ANY_TAG)', null], ['3', 'Comm.send (comm c, peer 0, tag 1)', 0]]);
  });

  it('computes rates over the last second and keeps the last counters of a finalized rank', () => {
    const st = new DashboardState();
    const ans = (n: number): Map<number, RollCallAnswer> => new Map([[0, { kind: 'notInMpi', counters: counters(n) }]]);
    expect(st.update([rank(0)], ans(0), 0).ranks[0]!.rates).toBeNull();
    expect(st.update([rank(0)], ans(50), 500).ranks[0]!.rates).toEqual({ messagesSent: 100, messagesReceived: 200, bytesSent: 800, bytesReceived: 1600 });
    st.update([rank(0)], ans(100), 1000);
    // Only the last second counts: from t=500 (50) to t=1500 (250): 200 per second.
    const r = st.update([rank(0)], ans(250), 1000 + RATE_WINDOW_MS / 2).ranks[0]!;
    expect(r.rates!.messagesSent).toBe(200);
    expect(r.counters).toEqual(counters(250));
    const fin = st.update([rank(0, { isFinalized: true })], new Map([[0, { kind: 'notInMpi' }]]), 2000).ranks[0]!;
    expect(fin.counters).toEqual(counters(250));
    expect(fin.rates).toBeNull();
  });

  it('encodes a snapshot that decodes to itself, and rejects malformed ones', () => {
    const s = new DashboardState().update([rank(0)], new Map([[0, { kind: 'blocked', blockedIn: { call: 'Comm.barrier', comm: 'COMM_WORLD', peer: null, tag: null }, counters: counters(1) }]]), 5);
    expect(decodeSnapshot(encodeSnapshot(s))).toEqual(s);
    expect(decodeSnapshot('{')).toBeNull();
    expect(decodeSnapshot(JSON.stringify({ ...s, v: 99 }))).toBeNull();
    expect(decodeSnapshot(JSON.stringify({ ...s, ranks: [{ rank: 0, state: 'x', threads: [{ thread: 1 }] }] }))).toBeNull();
  });

  it('describes calls as the roll-call does', () => {
    expect(callText({ call: 'Comm.barrier', comm: '', peer: null, tag: null })).toBe('Comm.barrier');
  });
});
