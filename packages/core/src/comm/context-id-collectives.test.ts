/**
 * The allocator over the real collective algorithms (coll/ allreduce and
 * barrier through contextIdCollectives) on simulated ranks (coll/sim.test-util.ts):
 * several creations in flight at once on one "thread" per rank, with
 * overlapping groups, one of them over a single rank whose collectives finish
 * in microtasks (the case that needs the driver to yield).
 */
import { describe, expect, it } from 'vitest';
import type { CollPt2pt } from '../coll/index.ts';
import { Sim } from '../coll/sim.test-util.ts';
import { collectivePriorityTag, contextIdCollectives, GROUP_COLL_TAG_BASE, groupCollTag } from './context-id-collectives.ts';
import { ContextIdState, NO_PRIORITY } from './context-id-mask.ts';
import { allocateContextId, freeContextId } from './context-id.ts';
import type { ContextIdOptions } from './context-id-stages.ts';

/** A CollPt2pt over the sim ranks `members` (group ranks -> sim ranks). */
function subset(sim: Sim, members: readonly number[], me: number): CollPt2pt {
  const pt = sim.endpoints[me]!;
  return {
    rank: members.indexOf(me),
    size: members.length,
    send: (dest, tag, data) => pt.send(members[dest]!, tag, data),
    recv: (source, tag) => pt.recv(members[source]!, tag),
  };
}

interface Creation { readonly members: readonly number[]; readonly wireTag: number; readonly priority: number }

const WORLD_CTX = 0;

async function runCreations(size: number, creations: readonly Creation[], options: ContextIdOptions, seed: number): Promise<Map<number, number>[]> {
  const sim = new Sim(size, { seed, rendezvousBytes: 1 << 20 });
  const states = Array.from({ length: size }, () => ContextIdState.create());
  // Each rank starts its creations in its own order, all at once (one thread per rank).
  const results = Array.from({ length: size }, () => new Map<number, number>());
  const all: Promise<void>[] = [];
  for (let r = 0; r < size; r++) {
    const mine = creations.map((c, i) => [c, i] as const).filter(([c]) => c.members.includes(r));
    if (r % 2 === 1) mine.reverse();
    for (const [c, i] of mine) {
      const coll = contextIdCollectives(subset(sim, c.members, r), c.wireTag);
      all.push(allocateContextId(states[r]!, WORLD_CTX, c.priority, coll, options).then((id) => void results[r]!.set(i, id)));
    }
  }
  await Promise.all(all);
  for (let r = 0; r < size; r++) {
    expect(states[r]!.maskInUse || states[r]!.eagerMaskInUse).toBe(false);
    expect(states[r]!.lowestContextId).toBe(NO_PRIORITY);
  }
  for (let r = 0; r < size; r++) for (const id of results[r]!.values()) freeContextId(states[r]!, id);
  return results;
}

describe('context ids over the collective algorithms', () => {
  const creations: Creation[] = [
    { members: [0, 1, 2, 3, 4], wireTag: 11, priority: collectivePriorityTag(11) }, // a dup of the world
    { members: [0, 1, 2], wireTag: groupCollTag(1), priority: 1 },
    { members: [4, 2, 1], wireTag: groupCollTag(2), priority: 2 },
    { members: [3, 0], wireTag: groupCollTag(3), priority: 3 },
    { members: [2], wireTag: groupCollTag(4), priority: 4 }, // one rank: collectives finish in microtasks
    { members: [1, 3, 4], wireTag: groupCollTag(0), priority: 0 },
  ];

  it.each([
    ['eager', { eager: 1 }],
    ['base only', { eager: 0 }],
    ['original', { algo: 'original' }],
  ] as const)('concurrent overlapping creations agree on ids, distinct at each rank (%s)', async (_name, options) => {
    for (const seed of [1, 2, 3, 4]) {
      const results = await runCreations(5, creations, options, seed);
      creations.forEach((c, i) => {
        const ids = c.members.map((r) => results[r]!.get(i));
        expect(new Set(ids).size, `creation ${i} seed ${seed}: ${JSON.stringify(ids)}`).toBe(1);
      });
      for (const res of results) expect(new Set(res.values()).size).toBe(res.size);
    }
  });

  it('keeps comm-collective priorities above every createGroup tag and below NO_PRIORITY', () => {
    expect(groupCollTag(0)).toBe(GROUP_COLL_TAG_BASE);
    expect(groupCollTag(2 ** 30 - 1)).toBe(2 ** 31 - 1);
    for (const seq of [0, 1, 2 ** 30 - 2, 2 ** 30 - 1, 2 ** 31, 2 ** 40]) {
      const p = collectivePriorityTag(seq);
      expect(p).toBeGreaterThan(2 ** 30 - 1);
      expect(p).toBeLessThan(NO_PRIORITY);
    }
  });
});
