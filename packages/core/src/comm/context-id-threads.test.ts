/**
 * One endpoint's ContextIdState shared by real worker_threads: every thread
 * allocates and frees COMM_SELF dups (one participant, so the collectives are
 * the identity) at the same time, taking the shared mutex with runLockedAsync and
 * freeing with the synchronous lock. Ids must never be handed out twice.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { PREDEFINED_CONTEXT_ID } from './context-id-layout.ts';
import { ContextIdState, NO_PRIORITY } from './context-id-mask.ts';
import { allocateContextId, contextIdsInUse, freeContextId } from './context-id.ts';

const INDEX_URL = new URL('./index.ts', import.meta.url).href;

const WORKER_SOURCE = `
import('node:worker_threads').then(async ({ parentPort, workerData }) => {
  const { register } = await import('tsx/esm/api');
  register();
  const { ContextIdState, allocateContextId, freeContextId } = await import(workerData.indexUrl);
  const state = ContextIdState.attach(workerData.buffer);
  const self = { allreduceBand: async (w) => w, barrier: async () => {} };
  const { count, eager, self: selfCtx } = workerData;
  const kept = [];
  const held = [];
  for (let i = 0; i < count; i++) {
    const id = await allocateContextId(state, selfCtx, 0, self, { eager });
    held.push(id);
    if (i % 2 === 1) {                       // free every other one at once: ids are reused under contention
      const [gone] = held.splice(0, 1);
      freeContextId(state, gone);
    }
  }
  parentPort.postMessage(held);
});
`;

describe.each([{ eager: 1 }, { eager: 0 }])('ContextIdState shared by 4 worker threads (eager $eager)', ({ eager }) => {
  it('concurrent allocate/free never hands out an id twice', async () => {
    const state = ContextIdState.create();
    const COUNT = 2000;
    const workers = [0, 1, 2, 3].map(
      () =>
        new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { indexUrl: INDEX_URL, buffer: state.buffer, count: COUNT, eager, self: PREDEFINED_CONTEXT_ID.COMM_SELF },
        }),
    );
    try {
      const held = await Promise.all(
        workers.map(
          (w) =>
            new Promise<number[]>((resolve, reject) => {
              w.once('message', resolve);
              w.once('error', reject);
              w.once('exit', (code) => reject(new Error(`worker exited (code ${code}) before it finished`)));
            }),
        ),
      );
      const all = held.flat();
      expect(all.length).toBe(4 * (COUNT / 2));
      expect(new Set(all).size).toBe(all.length); // every id held by exactly one thread
      expect(contextIdsInUse(state)).toBe(all.length);
      for (const id of all) expect(state.isFree(id)).toBe(false);
      expect([state.maskInUse, state.eagerMaskInUse, state.lowestContextId, state.mutex.isLocked]).toEqual([false, false, NO_PRIORITY, false]);
      for (const id of all) freeContextId(state, id);
      expect(contextIdsInUse(state)).toBe(0);
      // The main thread still allocates normally afterwards.
      const self = { allreduceBand: async (w: Uint32Array) => w, barrier: async () => {} };
      expect(await allocateContextId(state, PREDEFINED_CONTEXT_ID.COMM_SELF, 0, self, { eager })).toBe(32);
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  }, 60_000);
});
