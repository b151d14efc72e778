import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { MatchQueues, type MatchingMode } from './match-queues.ts';
import { NIL, RequestTable, SLOT, SLOT_WORDS, SlotPool, KIND } from './request-table.ts';
import { WORKER_START_MS, workerReport } from '../shm/worker-report.test-util.ts';

const ANY = -1;
const SOURCES = 4;

function setup(mode: MatchingMode) {
  const table = new RequestTable(RequestTable.allocateBuffers(256), true);
  const pool = new SlotPool(table);
  const q = new MatchQueues(table, MatchQueues.allocateBuffer(SOURCES), SOURCES, mode, true);
  const slot = (kind: number, ctx: number, src: number, tag: number, label: string): number => {
    const s = pool.alloc(kind);
    const b = s * SLOT_WORDS;
    table.words[b + SLOT.CTX] = ctx;
    table.words[b + SLOT.SRC] = src;
    table.words[b + SLOT.TAG] = tag;
    labels.set(s, label);
    return s;
  };
  const labels = new Map<number, string>();
  return {
    q,
    slot,
    labelOf(s: number): string | undefined {
      return labels.get(s);
    },
    /** posts a receive; returns the label of the message it matched, or null */
    post(label: string, src: number, tag: number, ctx = 0): string | null {
      const m = q.postRecv(slot(KIND.RECV, ctx, src, tag, label));
      return m === NIL ? null : labels.get(m)!;
    },
    /** a message arrives; returns the label of the receive it matched, or null */
    arrive(label: string, src: number, tag: number, ctx = 0): string | null {
      const r = q.arrive(slot(KIND.MESSAGE, ctx, src, tag, label));
      return r === NIL ? null : labels.get(r)!;
    },
    probe(src: number, tag: number, ctx = 0): string | null {
      const m = q.probe(ctx, src, tag);
      return m === NIL ? null : labels.get(m)!;
    },
    slotOf(label: string): number {
      for (const [s, l] of labels) if (l === label) return s;
      throw new Error(label);
    },
  };
}

describe.each(['parallel', 'global'] as const)('MatchQueues (%s)', (mode) => {
  it('on a collective context matches the sequence bits of a tag only (util/coll-tag.ts); elsewhere the whole tag', () => {
    const t = setup(mode);
    const seq = 7;
    const bcast = seq | (2 << 20);
    const barrier = seq | (1 << 20);
    // Context 5 is a collective context (suffix 1): another collective's message of the same sequence meets the receive.
    expect(t.post('r-coll', 1, bcast, 5)).toBeNull();
    expect(t.arrive('m-coll', 1, barrier, 5)).toBe('r-coll');
    expect(t.arrive('m-coll-2', 1, barrier, 5)).toBeNull();
    expect(t.post('r-coll-2', 1, bcast, 5)).toBe('m-coll-2');
    // Another sequence number never matches.
    expect(t.post('r-coll-3', 1, bcast + 1, 5)).toBeNull();
    expect(t.arrive('m-coll-3', 1, barrier, 5)).toBeNull();
    // Context 4 is a point-to-point context (suffix 0): the same two tags are different tags there.
    expect(t.post('r-p2p', 1, bcast, 4)).toBeNull();
    expect(t.arrive('m-p2p', 1, barrier, 4)).toBeNull();
    expect(t.arrive('m-p2p-2', 1, bcast, 4)).toBe('r-p2p');
  });

  it('matches posted receives in order per source and tag', () => {
    const t = setup(mode);
    expect(t.post('r1', 1, 5)).toBeNull();
    expect(t.post('r2', 1, 5)).toBeNull();
    expect(t.arrive('m1', 1, 5)).toBe('r1');
    expect(t.arrive('m2', 1, 5)).toBe('r2');
    expect(t.q.postedCount).toBe(0);
  });

  it('queues unexpected messages and drains them in arrival order', () => {
    const t = setup(mode);
    expect(t.arrive('m1', 2, 1)).toBeNull();
    expect(t.arrive('m2', 2, 2)).toBeNull();
    expect(t.arrive('m3', 2, 1)).toBeNull();
    expect(t.q.unexpectedCount).toBe(3);
    expect(t.probe(2, 1)).toBe('m1');
    expect(t.post('r', 2, 1)).toBe('m1');
    expect(t.post('r', 2, ANY)).toBe('m2');
    expect(t.post('r', ANY, ANY)).toBe('m3');
    expect(t.q.unexpectedCount).toBe(0);
  });

  it('keeps contexts apart', () => {
    const t = setup(mode);
    expect(t.post('r-ctx4', 1, 0, 4)).toBeNull();
    expect(t.arrive('m-ctx0', 1, 0, 0)).toBeNull();
    expect(t.arrive('m-ctx4', 1, 0, 4)).toBe('r-ctx4');
    expect(t.post('any-ctx0', ANY, ANY, 0)).toBe('m-ctx0');
  });

  it('gives a message to an earlier wildcard before a later specific receive', () => {
    const t = setup(mode);
    t.post('W', ANY, 7);
    t.post('S', 1, 7);
    expect(t.arrive('first', 1, 7)).toBe('W');
    expect(t.arrive('second', 1, 7)).toBe('S');
  });

  it('gives a message to an earlier specific receive before a later wildcard', () => {
    const t = setup(mode);
    t.post('S', 1, 7);
    t.post('W', ANY, 7);
    expect(t.arrive('first', 1, 7)).toBe('S');
    expect(t.arrive('second', 1, 7)).toBe('W');
  });

  it('handles three wildcards then specific receives from three sources', () => {
    const t = setup(mode);
    for (const w of ['W1', 'W2', 'W3']) t.post(w, ANY, ANY);
    for (const s of [1, 2, 3]) for (const k of ['a', 'b']) t.post(`R${s}${k}`, s, ANY);
    const order = [[1, 1], [2, 1], [1, 2], [3, 1], [2, 2], [1, 3], [3, 2], [2, 3], [3, 3]] as const;
    const got = order.map(([s, tag]) => t.arrive(`m${s}.${tag}`, s, tag));
    // The wildcards, posted first, take the first three messages whatever their source;
    // then each source's specific receives match in posting order, and m3.3 finds none left.
    expect(got).toEqual(['W1', 'W2', 'W3', 'R3a', 'R2a', 'R1a', 'R3b', 'R2b', null]);
    expect(t.q.unexpectedCount).toBe(1);
    expect(t.q.postedCount).toBe(1);
    expect(t.q.unexpectedCount).toBe(1);
  });

  it('cancels posted receives, wildcard or specific', () => {
    const t = setup(mode);
    t.post('W', ANY, 1);
    t.post('S', 2, 1);
    expect(t.q.cancelRecv(t.slotOf('W'))).toBe(true);
    expect(t.arrive('m', 2, 1)).toBe('S');
    expect(t.q.cancelRecv(t.slotOf('S'))).toBe(false);
    t.post('S2', 3, ANY);
    expect(t.q.cancelRecv(t.slotOf('S2'))).toBe(true);
    expect(t.arrive('m2', 3, 0)).toBeNull();
  });

  it('a wildcard takes the oldest matching message across sources', () => {
    const t = setup(mode);
    t.arrive('from3', 3, 4);
    t.arrive('from1', 1, 4);
    expect(t.post('W', ANY, 4)).toBe('from3');
    expect(t.post('W2', ANY, 4)).toBe('from1');
  });
});

/**
 * Worker body (plain JS, evaluated) for the dead-holder cases: says it has started (its modules are
 * loaded: the hang bound counts from there, worker-report.test-util.ts), builds shared parallel queues whose
 * locks see holder 4 (worker thread 3) as ended, runs `scenario`, and reports the lock words and
 * what threw. In a worker, so that a lock() that failed to notice the dead holder spins where the
 * test's timeout can end it (shm/spin-lock.test.ts tests the noticing itself).
 */
const DEAD_HOLDER_WORKER = `
import('node:worker_threads').then(async ({ parentPort, workerData }) => {
  const { register } = await import('tsx/esm/api');
  register();
  const { MatchQueues } = await import(workerData.matchQueuesUrl);
  const { RequestTable, SlotPool, SLOT, SLOT_WORDS, KIND } = await import(workerData.requestTableUrl);
  const SOURCES = workerData.sources;
  const table = new RequestTable(RequestTable.allocateBuffers(256), true, true);
  const pool = new SlotPool(table);
  const buffer = MatchQueues.allocateBuffer(SOURCES);
  const holders = { endedStamp: (holder) => (holder === 4 ? 1 : 0), heldByEnded: (lock, holder) => new Error(lock + ': ' + holder) };
  const q = new MatchQueues(table, buffer, SOURCES, 'parallel', true, true, holders);
  // The lock words are the buffer's last SOURCES + 1 words: one per source, then the wildcard queue's.
  const locks = new Int32Array(buffer, buffer.byteLength - (SOURCES + 1) * 4, SOURCES + 1);
  const recv = (src) => {
    const s = pool.alloc(KIND.RECV);
    table.words[s * SLOT_WORDS + SLOT.CTX] = 0;
    table.words[s * SLOT_WORDS + SLOT.SRC] = src;
    table.words[s * SLOT_WORDS + SLOT.TAG] = 7;
    return s;
  };
  parentPort.postMessage({ type: 'started' });
  const steps = [];
  const attempt = (name, f) => {
    try { f(); steps.push({ name, threw: null, locks: Array.from(locks), posted: q.postedCount }); }
    catch (e) { steps.push({ name, threw: e.message, locks: Array.from(locks), posted: q.postedCount }); }
  };
  if (workerData.scenario === 'source') {
    locks[2] = 4;
    attempt('wildcard receive', () => q.postRecv(recv(-1)));
  } else {
    attempt('queue a wildcard', () => q.postRecv(recv(-1)));
    locks[SOURCES] = 4;
    attempt('receive from source 1', () => q.postRecv(recv(1)));
    attempt('cancel a receive from source 3', () => q.cancelRecv(recv(3)));
  }
  parentPort.postMessage(steps);
});
`;

type Step = { name: string; threw: string | null; locks: number[]; posted: number };

/** Runs DEAD_HOLDER_WORKER's `scenario`; rejects 10 s after the worker started, saying it hung. */
function deadHolderSteps(scenario: 'source' | 'wildcard'): Promise<Step[]> {
  const w = new Worker(DEAD_HOLDER_WORKER, {
    eval: true,
    workerData: { scenario, sources: SOURCES, matchQueuesUrl: new URL('./match-queues.ts', import.meta.url).href, requestTableUrl: new URL('./request-table.ts', import.meta.url).href },
  });
  return workerReport(w, (m): m is Step[] => Array.isArray(m), 10_000, 'the worker still spun after 10 s: a lock whose holder ended was not noticed');
}

describe('MatchQueues (parallel) when a lock\'s holder died (shm/spin-lock.ts; in a worker thread)', () => {
  it('a wildcard receive that meets a dead source lock releases the source locks it took, and throws', async () => {
    expect(await deadHolderSteps('source')).toEqual([{ name: 'wildcard receive', threw: 'matching queues: 4', locks: [0, 0, 4, 0, 0], posted: 0 }]);
  }, WORKER_START_MS + 15_000);

  it('a receive or cancel from one source that meets a dead wildcard lock releases its source lock, and throws', async () => {
    expect(await deadHolderSteps('wildcard')).toEqual([
      { name: 'queue a wildcard', threw: null, locks: [0, 0, 0, 0, 0], posted: 1 },
      // the wildcard only: the receive is not counted as posted
      { name: 'receive from source 1', threw: 'matching queues: 4', locks: [0, 0, 0, 0, 4], posted: 1 },
      { name: 'cancel a receive from source 3', threw: 'matching queues: 4', locks: [0, 0, 0, 0, 4], posted: 1 },
    ]);
  }, WORKER_START_MS + 15_000);
});
