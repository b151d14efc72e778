/**
 * The context-id algorithm on N simulated processes x T threads in one JS
 * thread: every simulated process has its own ContextIdState (its mask), every
 * simulated thread is an async task, and an in-memory fabric implements
 * allreduceBand/barrier by waiting until every participant of a given
 * (communicator, tag, round) has contributed. Results are delivered on a later
 * macrotask (setImmediate), so a spinning allocation never starves timers and a
 * deadlock is seen as a timeout.
 */
import { describe, expect, it } from 'vitest';
import { ERR_INTERN, ERR_OTHER, MPIError } from '../util/index.ts';
import {
  CONTEXT_SUFFIX,
  contextBit,
  contextIdOfPrefix,
  contextPrefix,
  contextWord,
  isReservedContextId,
  PREDEFINED_CONTEXT_ID,
  RESERVED_PREFIXES,
  withSuffix,
} from './context-id-layout.ts';
import { ContextIdState, NO_PRIORITY } from './context-id-mask.ts';
import { type ContextIdCollectives, type ContextIdOptions } from './context-id-stages.ts';
import { collectivePriorityTag } from './context-id-collectives.ts';
import { allocateContextId, contextIdOptions, ContextIdPoller, contextIdsInUse, freeContextId } from './context-id.ts';

// ---------------------------------------------------------------- simulation

/** The collectives of one participant in one allocation, counting what it runs. */
interface Participant extends ContextIdCollectives {
  allreduces: number;
  barriers: number;
}

interface PendingOp {
  readonly size: number;
  count: number;
  acc: Uint32Array | null;
  readonly waiters: { resolve: (v: Uint32Array | null) => void; reject: (e: unknown) => void }[];
}

/** In-memory collectives: an op completes when all `size` participants of (comm, tag, round) have called. */
class Fabric {
  readonly #ops = new Map<string, PendingOp>();
  readonly #rounds = new Map<string, number>();
  #abortError: Error | null = null;
  /** Milliseconds before each participant sees a completed op (0: all in one setImmediate, as one event). */
  readonly #lag: (() => number) | null;

  constructor(lag: (() => number) | null = null) {
    this.#lag = lag;
  }

  /** Rejects every pending and future collective (ends deadlocked or spinning simulated threads). */
  abort(err: Error): void {
    this.#abortError = err;
    for (const op of this.#ops.values()) for (const w of op.waiters) w.reject(err);
    this.#ops.clear();
  }

  participant(commKey: string, size: number, member: number, tag: number): Participant {
    const roundKey = `${commKey}|${tag}|${member}`;
    const next = (): string => {
      const round = this.#rounds.get(roundKey) ?? 0;
      this.#rounds.set(roundKey, round + 1);
      return `${commKey}|${tag}|${round}`;
    };
    const p: Participant = {
      allreduces: 0,
      barriers: 0,
      allreduceBand: async (words) => {
        p.allreduces++;
        return (await this.#contribute(next(), size, words))!;
      },
      barrier: async () => {
        p.barriers++;
        await this.#contribute(next(), size, null);
      },
    };
    return p;
  }

  #contribute(key: string, size: number, words: Uint32Array | null): Promise<Uint32Array | null> {
    if (this.#abortError) return Promise.reject(this.#abortError);
    let op = this.#ops.get(key);
    if (!op) {
      op = { size, count: 0, acc: null, waiters: [] };
      this.#ops.set(key, op);
    }
    // Plain checks (not expect): this runs 100,000s of times.
    if (op.size !== size) throw new Error(`fabric: ${key} joined with size ${size}, not ${op.size}`);
    if (words) {
      if (op.acc === null) op.acc = words.slice();
      else {
        // Every participant sends the same length.
        if (words.length !== op.acc.length) throw new Error(`fabric: ${key}: length ${words.length}, not ${op.acc.length}`);
        for (let i = 0; i < words.length; i++) op.acc[i] = (op.acc[i]! & words[i]!) >>> 0;
      }
    }
    op.count++;
    const done = new Promise<Uint32Array | null>((resolve, reject) => op.waiters.push({ resolve, reject }));
    if (op.count === size) {
      this.#ops.delete(key);
      const finished = op;
      const lag = this.#lag;
      if (lag === null) {
        setImmediate(() => {
          for (const w of finished.waiters) w.resolve(finished.acc ? finished.acc.slice() : null);
        });
      } else {
        // Processes learn of a completion at different times, as over a network.
        for (const w of finished.waiters) setTimeout(() => w.resolve(finished.acc ? finished.acc.slice() : null), lag());
      }
    }
    return done;
  }
}

/** A communicator as the simulation sees it: a context id and its member processes. */
interface SimComm {
  readonly ctx: number;
  readonly members: readonly number[];
}
const keyOf = (c: SimComm): string => `${c.ctx}@${c.members.join(',')}`;
const worldOf = (n: number): SimComm => ({ ctx: PREDEFINED_CONTEXT_ID.COMM_WORLD, members: Array.from({ length: n }, (_, i) => i) });
const selfOf = (rank: number): SimComm => ({ ctx: PREDEFINED_CONTEXT_ID.COMM_SELF, members: [rank] });

interface Sim {
  readonly fabric: Fabric;
  readonly states: ContextIdState[];
}
const newSim = (n: number, stateOptions: Parameters<typeof ContextIdState.create>[0] = {}): Sim => ({
  fabric: new Fabric(),
  states: Array.from({ length: n }, () => ContextIdState.create(stateOptions)),
});

/**
 * One process's part of creating a communicator over `group` (a subset of
 * parent's members; createGroup when `group` is given, dup otherwise).
 */
async function create(
  sim: Sim,
  rank: number,
  parent: SimComm,
  options: ContextIdOptions = {},
  tag = 0,
  group: readonly number[] = parent.members,
  counts?: Participant[],
): Promise<SimComm> {
  const member = group.indexOf(rank);
  if (member < 0) throw new Error(`process ${rank} is not in the group`);
  const p = sim.fabric.participant(`${keyOf(parent)}#${group.join(',')}`, group.length, member, tag);
  counts?.push(p);
  const ctx = await allocateContextId(sim.states[rank]!, parent.ctx, tag, p, options);
  return { ctx, members: group };
}

/** Every member of `parent` dups it; returns the new comm per member (checking the id is uniform). */
async function dupAll(sim: Sim, parent: SimComm, options: ContextIdOptions = {}, counts?: Participant[]): Promise<SimComm> {
  const out = await Promise.all(parent.members.map((r) => create(sim, r, parent, options, 0, parent.members, counts)));
  if (out.some((c) => c.ctx !== out[0]!.ctx)) throw new Error(`members got different ids: ${out.map((c) => c.ctx).join(', ')}`);
  return out[0]!;
}

function freeAll(sim: Sim, comm: SimComm): void {
  for (const r of comm.members) freeContextId(sim.states[r]!, comm.ctx);
}

const sleep = (ms: number): Promise<'timeout'> => new Promise((r) => setTimeout(() => r('timeout'), ms));

function expectMPIError(err: unknown, errorClass: number, call: string): void {
  expect(err).toBeInstanceOf(MPIError);
  expect((err as MPIError).errorClass).toBe(errorClass);
  expect((err as MPIError).call).toBe(call);
}

/** A deterministic PRNG (mulberry32) so a failing run can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BOTH_EAGER: ContextIdOptions[] = [{ eager: 1 }, { eager: 0 }];

// ---------------------------------------------------------------- layout and state

describe('context id layout', () => {
  it('splits a 16-bit id into word, bit and suffix with unsigned shifts', () => {
    expect(contextWord(0xfffc)).toBe(511);
    expect(contextBit(0xfffc)).toBe(31);
    expect(contextPrefix(0xffff)).toBe(16383);
    expect(contextWord(0x8000)).toBe(256); // a signed 16-bit view would say -256
    expect(contextIdOfPrefix(16383)).toBe(0xfffc);
    expect(contextIdOfPrefix(33)).toBe(132);
    expect(withSuffix(132, CONTEXT_SUFFIX.COLL)).toBe(133);
    expect(withSuffix(133, CONTEXT_SUFFIX.GROUP_COLL)).toBe(134);
    expect(withSuffix(0xfffe, CONTEXT_SUFFIX.PT2PT)).toBe(0xfffc);
    expect(contextPrefix(withSuffix(132, CONTEXT_SUFFIX.GROUP_COLL))).toBe(33);
  });

  it('reserves the predefined communicators in prefixes 0..7', () => {
    expect(PREDEFINED_CONTEXT_ID).toEqual({ COMM_WORLD: 0, COMM_SELF: 4, COMM_ENDPOINTS: 8, COMM_CLIQUE: 12 });
    expect(RESERVED_PREFIXES).toBe(8);
    expect(isReservedContextId(28 + 3)).toBe(true);
    expect(isReservedContextId(32)).toBe(false);
    const s = ContextIdState.create();
    for (const id of Object.values(PREDEFINED_CONTEXT_ID)) expect(s.isFree(id)).toBe(false);
    expect(s.isFree(32)).toBe(true);
    expect(s.snapshotMask()[0]).toBe(0xffffff00);
    expect(contextIdsInUse(s)).toBe(0);
    expect(s.countFree()).toBe(16384 - 8);
  });

  it('attach sees the same shared state', () => {
    const a = ContextIdState.create({ maskWords: 4, eagerWords: 1 });
    const b = ContextIdState.attach(a.buffer);
    expect([b.maskWords, b.eagerWords]).toEqual([4, 1]);
    a.mutex.lockSync();
    a.maskInUse = true;
    a.lowestContextId = 12;
    expect(b.mutex.tryLock()).toBe(false);
    a.mutex.unlock();
    expect([b.maskInUse, b.lowestContextId, b.lowestTag]).toEqual([true, 12, NO_PRIORITY]);
  });

  it('rejects bad sizes', () => {
    expect(() => ContextIdState.create({ maskWords: 513 })).toThrow(MPIError);
    expect(() => ContextIdState.create({ maskWords: 4, eagerWords: 4 })).toThrow(MPIError);
  });
});

// ---------------------------------------------------------------- basic allocation

describe.each([
  { algo: 'new', eager: 1 },
  { algo: 'new', eager: 0 },
  { algo: 'original', eager: 0 },
] as const)('allocation, algo $algo eager $eager', (options) => {
  it('gives the lowest free ids in order, the same at every member', async () => {
    const sim = newSim(4);
    const world = worldOf(4);
    const ids: number[] = [];
    for (let i = 0; i < 70; i++) ids.push((await dupAll(sim, world, options)).ctx); // crosses the eager segment (56 ids)
    expect(ids).toEqual(Array.from({ length: 70 }, (_, i) => contextIdOfPrefix(RESERVED_PREFIXES + i)));
    for (const s of sim.states) expect(contextIdsInUse(s)).toBe(70);
  });

  it('a sub-group (createGroup) gets an id free at its members only', async () => {
    const sim = newSim(4);
    const world = worldOf(4);
    const a = await create(sim, 0, selfOf(0), options); // process 0 alone uses prefix 8
    expect(a.ctx).toBe(32);
    const sub = await Promise.all([1, 3, 0].map((r) => create(sim, r, world, options, 7, [1, 3, 0])));
    expect(sub.map((c) => c.ctx)).toEqual([36, 36, 36]); // 32 is taken at process 0
    const sub2 = await Promise.all([2, 3].map((r) => create(sim, r, world, options, 7, [2, 3])));
    expect(sub2.map((c) => c.ctx)).toEqual([32, 32]); // 32 is free at 2 and 3 (36 is not free at 3)
  });

  it('ids are reused after free: 100,000 allocate+free never run out', async () => {
    const sim = newSim(2);
    const world = worldOf(2);
    const keep = await dupAll(sim, world, options);
    const seen = new Set<number>();
    for (let i = 0; i < 100_000; i++) {
      const c = await dupAll(sim, world, options);
      seen.add(c.ctx);
      freeAll(sim, c);
    }
    expect([...seen]).toEqual([36]); // always the lowest free id, reused
    freeAll(sim, keep);
    for (const s of sim.states) {
      expect(contextIdsInUse(s)).toBe(0);
      expect([s.maskInUse, s.eagerMaskInUse, s.lowestContextId]).toEqual([false, false, NO_PRIORITY]);
    }
  }, 120_000);
});

describe('logical cost: collectives per allocation', () => {
  const cost = async (options: ContextIdOptions, prefill = 0): Promise<{ allreduces: number; barriers: number }[]> => {
    const sim = newSim(3);
    const world = worldOf(3);
    for (let i = 0; i < prefill; i++) await dupAll(sim, world, options);
    const counts: Participant[] = [];
    await dupAll(sim, world, options, counts);
    return counts.map((c) => ({ allreduces: c.allreduces, barriers: c.barriers }));
  };

  it('eager, uncontended: exactly 1 allreduce, no barrier', async () => {
    expect(await cost({ algo: 'new', eager: 1 })).toEqual(Array(3).fill({ allreduces: 1, barriers: 0 }));
  });

  it('base (eager off): initial barrier + 1 allreduce', async () => {
    expect(await cost({ algo: 'new', eager: 0 })).toEqual(Array(3).fill({ allreduces: 1, barriers: 1 }));
  });

  it('original: 1 allreduce, no synchronization', async () => {
    expect(await cost({ algo: 'original' })).toEqual(Array(3).fill({ allreduces: 1, barriers: 0 }));
  });

  it('eager with the eager segment full: the eager allreduce acts as the barrier, then 1 base allreduce', async () => {
    expect(await cost({ algo: 'new', eager: 1 }, 56)).toEqual(Array(3).fill({ allreduces: 2, barriers: 0 }));
  });

  it('settings select the options: original + eager 0 costs 1 allreduce, errors name the call', async () => {
    const options = contextIdOptions({ ctxidAlgo: 'original', ctxidEager: 1 }, 'Comm.split');
    expect(options).toEqual({ algo: 'original', eager: 1, call: 'Comm.split' });
    expect(await cost(options)).toEqual(Array(3).fill({ allreduces: 1, barriers: 0 })); // eager ignored by 'original'
  });

  it('the allocation state counts the same (stage-level counter)', async () => {
    const s = ContextIdState.create();
    const single: ContextIdCollectives = { allreduceBand: async (w) => w, barrier: async () => {} };
    const poller = new ContextIdPoller(s, 4, 0, single, { eager: 1 });
    while (!poller.test()) await new Promise((r) => setImmediate(r));
    expect(poller.allocation.collectives).toBe(1);
  });
});

describe('eager on/off produce the same ids', () => {
  it('for a seeded sequence of creations and frees on overlapping communicators', async () => {
    const run = async (options: ContextIdOptions): Promise<number[]> => {
      const sim = newSim(3);
      const world = worldOf(3);
      const random = rng(42);
      const live: SimComm[] = [];
      const ids: number[] = [];
      for (let step = 0; step < 400; step++) {
        const x = random();
        if (x < 0.35 && live.length > 0) {
          const [c] = live.splice(Math.floor(random() * live.length), 1);
          freeAll(sim, c!);
        } else if (x < 0.8) {
          const c = await dupAll(sim, world, options);
          live.push(c);
          ids.push(c.ctx);
        } else {
          const members = [0, 1, 2].filter(() => random() < 0.6);
          if (members.length === 0) continue;
          const tag = Math.floor(random() * 5);
          const made = await Promise.all(members.map((r) => create(sim, r, world, options, tag, members)));
          live.push(made[0]!);
          ids.push(made[0]!.ctx);
        }
      }
      return ids;
    };
    const eager = await run({ eager: 1 });
    const base = await run({ eager: 0 });
    expect(eager.length).toBeGreaterThan(200);
    expect(Math.max(...eager)).toBeGreaterThan(contextIdOfPrefix(64)); // went past the eager segment
    expect(eager).toEqual(base);
  });
});

// ---------------------------------------------------------------- exhaustion

describe('running out of context ids', () => {
  it.each(BOTH_EAGER)('full mask: ERR_OTHER naming the call, mask intact, works again after a free (eager $eager)', async (options) => {
    const sim = newSim(1);
    const self = selfOf(0);
    const ids: number[] = [];
    for (let i = 0; i < 16384 - RESERVED_PREFIXES; i++) ids.push((await create(sim, 0, self, options)).ctx);
    expect(new Set(ids).size).toBe(16376);
    const s = sim.states[0]!;
    const before = s.snapshotMask();
    expect(Array.from(before).every((w) => w === 0)).toBe(true);
    const err = await create(sim, 0, self, { ...options, call: 'Comm.dup' }).catch((e: unknown) => e);
    expectMPIError(err, ERR_OTHER, 'Comm.dup');
    expect((err as Error).message).toMatch(/no free context id: 16376 communicators in use/);
    expect(s.snapshotMask()).toEqual(before);
    expect([s.maskInUse, s.eagerMaskInUse, s.lowestContextId, s.lowestTag]).toEqual([false, false, NO_PRIORITY, NO_PRIORITY]);
    freeContextId(s, ids[9000]!);
    expect((await create(sim, 0, self, options)).ctx).toBe(ids[9000]);
  }, 60_000);

  it.each(BOTH_EAGER)('fragmented masks with no common free id: ERR_OTHER at every member, masks intact (eager $eager)', async (options) => {
    const sim = newSim(2, { maskWords: 4, eagerWords: 1 });
    const ids = [0, 1].map(() => [] as number[]);
    for (const r of [0, 1]) for (let i = 0; i < 128 - RESERVED_PREFIXES; i++) ids[r]!.push((await create(sim, r, selfOf(r), options)).ctx);
    // process 0 frees even prefixes, process 1 odd ones: each has 60 free ids, none in common.
    for (const r of [0, 1]) for (const id of ids[r]!) if (contextPrefix(id) % 2 === r) freeContextId(sim.states[r]!, id);
    const before = sim.states.map((s) => s.snapshotMask());
    const results = await Promise.allSettled([0, 1].map((r) => create(sim, r, worldOf(2), options)));
    for (const res of results) {
      expect(res.status).toBe('rejected');
      expectMPIError((res as PromiseRejectedResult).reason, ERR_OTHER, 'allocateContextId');
    }
    expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/60 communicators in use at this process, 60 ids free here/);
    expect(sim.states.map((s) => s.snapshotMask())).toEqual(before);
    // Nothing is left held: a free at one process makes a common id, and the world dup succeeds.
    freeContextId(sim.states[1]!, contextIdOfPrefix(10));
    expect((await dupAll(sim, worldOf(2), options)).ctx).toBe(contextIdOfPrefix(10));
  });
});

// ---------------------------------------------------------------- threads

describe.each([
  { algo: 'new', eager: 1 },
  { algo: 'new', eager: 0 },
  { algo: 'original', eager: 0 },
] as const)('concurrent allocations, algo $algo eager $eager', (options) => {
  it('3 processes x 4 threads, distinct tags on one parent: all succeed, ids uniform per creation, distinct per process', async () => {
    const counts: Participant[] = [];
    for (let seed = 1; seed <= 5; seed++) {
      const sim = newSim(3);
      const world = worldOf(3);
      const random = rng(seed);
      const ROUNDS = 8;
      // ids[rank][thread][round]
      const ids = await Promise.all(
        [0, 1, 2].map((rank) =>
          Promise.all(
            [0, 1, 2, 3].map(async (thread) => {
              const mine: number[] = [];
              for (let round = 0; round < ROUNDS; round++) {
                if (random() < 0.5) await new Promise((r) => setImmediate(r));
                mine.push((await create(sim, rank, world, options, thread, world.members, counts)).ctx);
              }
              return mine;
            }),
          ),
        ),
      );
      for (let t = 0; t < 4; t++) for (let k = 0; k < ROUNDS; k++) expect(new Set([0, 1, 2].map((r) => ids[r]![t]![k])).size).toBe(1);
      for (let r = 0; r < 3; r++) {
        const all = ids[r]!.flat();
        expect(new Set(all).size).toBe(4 * ROUNDS);
        expect(contextIdsInUse(sim.states[r]!)).toBe(4 * ROUNDS);
        expect([sim.states[r]!.maskInUse, sim.states[r]!.eagerMaskInUse, sim.states[r]!.lowestContextId]).toEqual([false, false, NO_PRIORITY]);
      }
    }
    // The threads really contended: some allocations needed retries (a thread without the mask sent zeros).
    expect(counts.filter((c) => c.allreduces >= 2).length).toBeGreaterThan(10);
  });

  it('threads creating on different parents and groups at once (dup of per-thread comms, createGroup subsets)', async () => {
    const sim = newSim(4);
    const world = worldOf(4);
    const threadComms: SimComm[] = [];
    for (let t = 0; t < 3; t++) threadComms.push(await dupAll(sim, world, options));
    const random = rng(7);
    const made = await Promise.all(
      [0, 1, 2, 3].flatMap((rank) =>
        [0, 1, 2].map(async (t) => {
          const out: number[] = [];
          for (let k = 0; k < 6; k++) {
            await sleep(Math.floor(random() * 2));
            out.push((await create(sim, rank, threadComms[t]!, options)).ctx);
            const group = t === 0 ? [0, 1] : [2, 3]; // createGroup over a pair, tag per thread
            if (group.includes(rank)) out.push((await create(sim, rank, world, options, 100 + t, group)).ctx);
          }
          return out;
        }),
      ),
    );
    for (let rank = 0; rank < 4; rank++) {
      const mine = made.slice(rank * 3, rank * 3 + 3).flat();
      expect(new Set(mine).size).toBe(mine.length);
    }
  });
});

// ---------------------------------------------------------------- Figure 1

/**
 * Figure 1 of the paper: 2 processes x 2 threads; thread t of every process
 * shares thread_comm_t. The thread whose id equals its process rank dups
 * COMM_SELF first (after `selfDelayMs`), then every thread dups its thread_comm.
 */
async function figure1(options: ContextIdOptions, delays: (rank: number, thread: number) => number, timeoutMs = 400) {
  const sim = newSim(2);
  const threadComm = [await dupAll(sim, worldOf(2)), await dupAll(sim, worldOf(2))];
  const runs = [0, 1].flatMap((rank) =>
    [0, 1].map(async (thread) => {
      await sleep(delays(rank, thread));
      let selfDup: SimComm | null = null;
      if (thread === rank) selfDup = await create(sim, rank, selfOf(rank), options);
      const dup = await create(sim, rank, threadComm[thread]!, options);
      return { rank, thread, selfDup, dup };
    }),
  );
  const all = Promise.allSettled(runs);
  const outcome = await Promise.race([all.then(() => 'done' as const), sleep(timeoutMs)]);
  const masksHeld = sim.states.map((s) => s.maskInUse);
  if (outcome === 'timeout') sim.fabric.abort(new Error('deadlock: aborted by the test'));
  const settled = await all;
  return { outcome, masksHeld, settled, sim };
}

describe('Figure 1 (hold-and-wait deadlock)', () => {
  // The thread_comm dups start first and reach the mask; the COMM_SELF dups come 5 ms later.
  const selfLater = (rank: number, thread: number): number => (thread === rank ? 5 : 0);

  it("'original' deadlocks: both thread_comm dups hold their process's mask and wait forever", async () => {
    const { outcome, masksHeld, settled } = await figure1({ algo: 'original' }, selfLater);
    expect(outcome).toBe('timeout');
    expect(masksHeld).toEqual([true, true]);
    expect(settled.every((s) => s.status === 'rejected')).toBe(true); // the test's abort ended them
  });

  it.each(BOTH_EAGER)("'new' completes the same schedule 50 times in a row (eager $eager)", async (eager) => {
    for (let i = 0; i < 50; i++) {
      const { outcome, settled, sim } = await figure1({ algo: 'new', ...eager }, selfLater);
      expect(outcome).toBe('done');
      const values = settled.map((s) => (s.status === 'fulfilled' ? s.value : null));
      expect(values.every((v) => v !== null)).toBe(true);
      for (const t of [0, 1]) {
        const pair = values.filter((v) => v!.thread === t).map((v) => v!.dup.ctx);
        expect(pair[0]).toBe(pair[1]); // same id at both members of thread_comm_t
      }
      for (const s of sim.states) expect([s.maskInUse, s.eagerMaskInUse, s.lowestContextId]).toEqual([false, false, NO_PRIORITY]);
    }
  });

  it.each(BOTH_EAGER)("'new' completes 50 random schedules (eager $eager)", async (eager) => {
    const random = rng(1234);
    for (let i = 0; i < 50; i++) {
      const { outcome } = await figure1({ algo: 'new', ...eager }, () => Math.floor(random() * 4));
      expect(outcome).toBe('done');
    }
  });
});

describe('equal parent and tag at one process (an intercommunicator merge beside another creation)', () => {
  // Process 0 is an intercommunicator's low group, processes 1 and 2 its high group. B merges it:
  // over 0, 1, 2 with parent the low group's id (48, an id of process 0). A dups another
  // intercommunicator whose high side (processes 1 and 2) also has id 48 there, at the same
  // sequence tag. Without the leader key both "have priority" at 1 and 2, each owns the mask at one
  // of them and gets zeros from the other, round after round (intercomm.it hung so).
  async function schedule(options: ContextIdOptions, leaders: { a: number; b: number }, delay: () => number, timeoutMs = 400) {
    const sim: Sim = { fabric: new Fabric(delay), states: [0, 1, 2].map(() => ContextIdState.create()) };
    const tag = collectivePriorityTag(1);
    const merge: SimComm = { ctx: 48, members: [0, 1, 2] };
    const highSide: SimComm = { ctx: 48, members: [1, 2] };
    const later = async <T>(f: () => Promise<T>): Promise<T> => {
      await sleep(delay());
      return f();
    };
    const runs = [
      ...[0, 1, 2].map((r) => later(() => create(sim, r, merge, { ...options, leader: leaders.b }, tag))),
      ...[1, 2].map((r) => later(() => create(sim, r, highSide, { ...options, leader: leaders.a }, tag))),
    ];
    const all = Promise.allSettled(runs);
    const outcome = await Promise.race([all.then(() => 'done' as const), sleep(timeoutMs)]);
    if (outcome === 'timeout') sim.fabric.abort(new Error('livelock: aborted by the test'));
    await all;
    return { outcome, sim };
  }

  it.each(BOTH_EAGER)('completes 50 random schedules when the leaders differ (eager $eager)', async (eager) => {
    const random = rng(4242);
    // Eager on or off: whichever allocation misses the eager segment meets the other in the base loop.
    const options = { algo: 'new' as const, ...eager };
    for (let i = 0; i < 50; i++) {
      const { outcome, sim } = await schedule(options, { a: 1, b: 0 }, () => Math.floor(random() * 4));
      expect(outcome).toBe('done');
      for (const s of sim.states) expect([s.maskInUse, s.lowestContextId, s.lowestLeader]).toEqual([false, NO_PRIORITY, NO_PRIORITY]);
    }
  });

  it('livelocks in some schedule when both allocations carry the same leader (the old <parent, tag> key)', async () => {
    const random = rng(4242);
    let stuck = 0;
    for (let i = 0; i < 30 && stuck === 0; i++) {
      const { outcome } = await schedule({ algo: 'new', eager: 0 }, { a: 0, b: 0 }, () => Math.floor(random() * 4), 200);
      if (outcome === 'timeout') stuck++;
    }
    expect(stuck).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------- polling driver, failures, free

describe('ContextIdPoller (nonblocking driver, same stages)', () => {
  it.each(BOTH_EAGER)('mixed with blocking participants, gets the same id (eager $eager)', async (options) => {
    const sim = newSim(3);
    const world = worldOf(3);
    await dupAll(sim, world, options); // take 32 everywhere
    const poller = new ContextIdPoller(sim.states[1]!, world.ctx, 0, sim.fabric.participant(`${keyOf(world)}#0,1,2`, 3, 1, 0), options);
    expect(poller.contextId).toBe(-1);
    const blocking = [0, 2].map((r) => create(sim, r, world, options));
    let polls = 0;
    while (!poller.test()) {
      polls++;
      await new Promise((r) => setImmediate(r));
    }
    expect(polls).toBeGreaterThan(0);
    expect(poller.test()).toBe(true); // stays done
    const others = await Promise.all(blocking);
    expect(others.map((c) => c.ctx)).toEqual([36, 36]);
    expect(poller.contextId).toBe(36);
  });

  it('reports exhaustion as ERR_OTHER, on every later test() too', async () => {
    const s = ContextIdState.create({ maskWords: 1, eagerWords: 0 });
    const single: ContextIdCollectives = { allreduceBand: async (w) => w, barrier: async () => {} };
    for (let i = 0; i < 24; i++) await allocateContextId(s, 4, 0, single);
    const poller = new ContextIdPoller(s, 4, 0, single, { call: 'Comm.idup' });
    let err: unknown;
    for (let i = 0; i < 100 && err === undefined; i++) {
      try {
        poller.test();
      } catch (e) {
        err = e;
      }
      await new Promise((r) => setImmediate(r));
    }
    expectMPIError(err, ERR_OTHER, 'Comm.idup');
    expect(() => poller.test()).toThrow(MPIError);
    expect(s.maskInUse).toBe(false);
  });
});

describe('a failing collective', () => {
  it.each(BOTH_EAGER)('rejects the allocation and releases the segments and priority it held (eager $eager)', async (options) => {
    const s = ContextIdState.create();
    const boom = new Error('peer lost');
    let calls = 0;
    const failing: ContextIdCollectives = {
      allreduceBand: async () => {
        calls++;
        // Inside the collective the segment is held by this allocation.
        expect(options.eager ? s.eagerMaskInUse : s.maskInUse).toBe(true);
        throw boom;
      },
      barrier: async () => {},
    };
    await expect(allocateContextId(s, 12, 3, failing, options)).rejects.toBe(boom);
    expect(calls).toBe(1);
    expect([s.maskInUse, s.eagerMaskInUse, s.lowestContextId, s.lowestTag]).toEqual([false, false, NO_PRIORITY, NO_PRIORITY]);
    expect(contextIdsInUse(s)).toBe(0);
    const single: ContextIdCollectives = { allreduceBand: async (w) => w, barrier: async () => {} };
    expect(await allocateContextId(s, 4, 0, single, options)).toBe(32);
  });

  it('a poller whose collective fails throws that error and releases the mask', async () => {
    const s = ContextIdState.create();
    const boom = new Error('peer lost');
    const poller = new ContextIdPoller(s, 4, 0, { allreduceBand: () => Promise.reject(boom), barrier: async () => {} }, { eager: 0 });
    let err: unknown;
    for (let i = 0; i < 100 && err === undefined; i++) {
      try {
        poller.test();
      } catch (e) {
        err = e;
      }
      await new Promise((r) => setImmediate(r));
    }
    expect(err).toBe(boom);
    expect([s.maskInUse, s.lowestContextId]).toEqual([false, NO_PRIORITY]);
  });
});

describe('freeContextId', () => {
  it('frees at once, even while another allocation owns the mask', async () => {
    const sim = newSim(2);
    const c = await dupAll(sim, worldOf(2));
    const s = sim.states[0]!;
    // Process 0 owns its mask in a world dup whose partner has not arrived yet.
    // ('original': no initial synchronization, so it takes the mask before the partner comes.)
    const pending = create(sim, 0, worldOf(2), { algo: 'original' });
    await sleep(5);
    expect(s.maskInUse).toBe(true);
    freeContextId(s, withSuffix(c.ctx, CONTEXT_SUFFIX.GROUP_COLL)); // any suffix names the communicator
    expect(s.isFree(c.ctx)).toBe(true);
    freeContextId(sim.states[1]!, c.ctx);
    const partner = create(sim, 1, worldOf(2), { algo: 'original' });
    // The running allocation used its snapshot (32 taken); 32 is seen free again next time.
    expect((await pending).ctx).toBe(36);
    expect((await partner).ctx).toBe(36);
    expect((await dupAll(sim, worldOf(2))).ctx).toBe(32);
  });

  it.each([
    ['eager', {}],
    ['base', { eager: 0 }],
    ['original', { algo: 'original' as const }],
  ])('finds the mutex free whenever other code of the allocating thread runs (%s; issue 34)', async (_what, options) => {
    // A free on the thread of a pending allocation (a user's Comm.free between two of its
    // stages) waits in lockSync, the event loop stopped: a mutex the allocation held across
    // an await would never be released. One participant: the collectives settle in
    // microtasks, so the stages and the observer's microtasks interleave as tightly as they can.
    const s = ContextIdState.create();
    const alone: ContextIdCollectives = { allreduceBand: (words) => Promise.resolve(words), barrier: () => Promise.resolve() };
    let isDone = false;
    let turns = 0;
    let heldTurns = 0;
    const observe = (): void => {
      turns++;
      if (s.mutex.isLocked) heldTurns++;
      if (!isDone) queueMicrotask(observe);
    };
    queueMicrotask(observe);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push(await allocateContextId(s, PREDEFINED_CONTEXT_ID.COMM_SELF, i, alone, options));
    for (const id of ids) freeContextId(s, id);
    isDone = true;
    expect(new Set(ids).size).toBe(20);
    expect(turns).toBeGreaterThan(20);
    expect(heldTurns).toBe(0);
  });

  it('freeing a reserved or unallocated id is an internal error (ERR_INTERN)', () => {
    const s = ContextIdState.create();
    for (const id of [PREDEFINED_CONTEXT_ID.COMM_WORLD, PREDEFINED_CONTEXT_ID.COMM_SELF, 28, 32]) {
      let err: unknown;
      try {
        freeContextId(s, id);
      } catch (e) {
        err = e;
      }
      expect((err as MPIError).errorClass).toBe(ERR_INTERN);
    }
    expect(s.mutex.isLocked).toBe(false); // the failed free took no lock
  });

  it('a free takes no lock: it returns while the mutex is held, and the next allocation sees the id free (intercomm.it hang)', async () => {
    // A record destroyed on a thread whose allocation waits for the mutex used to sleep in
    // lockSync; the holder's wake-up could go to that thread's own async waiter: frozen for good.
    const s = ContextIdState.create();
    const alone: ContextIdCollectives = { allreduceBand: (words) => Promise.resolve(words), barrier: () => Promise.resolve() };
    const id = await allocateContextId(s, PREDEFINED_CONTEXT_ID.COMM_SELF, 0, alone);
    expect(s.mutex.tryLock()).toBe(true); // another thread's stage holds it
    freeContextId(s, id);
    expect(s.isFree(id)).toBe(true);
    s.mutex.unlock();
    expect(await allocateContextId(s, PREDEFINED_CONTEXT_ID.COMM_SELF, 1, alone)).toBe(id);
  });
});
