// Receive claims on real threads (docs/adr/0023 step 1's matching rules, match-queues.ts with
// claim-table.ts): two threads arrive messages of one key from two sources without pause while a
// third takes them from the shared queues, claims the key (claimIfClear), takes what is handed
// to it, and gives the claim up with part of its lane still unread (demoteInto), then reads the
// rest from the shared queues. Every message is read once and each source's in the order sent,
// whichever moment the claim and its end fall on.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { CLAIM_STATE, ClaimTable, claimOwner, claimState } from './claim-table.ts';
import { MatchQueues } from './match-queues.ts';
import { NIL, RequestTable } from './request-table.ts';

const SOURCES = 2;
const PER_SOURCE = 3_000;
const CTX = 4;
const TAG = 9;
const OWNER = 5;
const THREADS = 8;
/** how far an arriving thread may run ahead of the reader; more than the 8 messages the lane keeps unread */
const WINDOW = 100;

/** The key's holder as the arriving side sees it, the device's rule: CLAIMED or DEMOTING. */
function holder(t: ClaimTable, ctx: number, tag: number): number {
  const e = t.find(0, ctx, tag);
  if (e < 0) return -1;
  const w = t.word(e);
  const st = claimState(w);
  return st === CLAIM_STATE.CLAIMED || st === CLAIM_STATE.DEMOTING ? claimOwner(w) : -1;
}

describe('receive claims on real threads', () => {
  it('reads every message once and in order per source across a claim and its end', async () => {
    for (let round = 0; round < 4; round++) {
      const slots = RequestTable.allocateBuffers(SOURCES * PER_SOURCE + 8);
      const table = new RequestTable(slots, true, true);
      const queueBuffer = MatchQueues.allocateBuffer(SOURCES);
      const q = new MatchQueues(table, queueBuffer, SOURCES, 'parallel', true, true);
      const claimBuffer = new SharedArrayBuffer(ClaimTable.bytesFor(THREADS));
      const claims = new ClaimTable(claimBuffer, THREADS);
      // [0] entries written; then slot + 1 of each handed-off message, in hand-off order.
      const handoff = new SharedArrayBuffer(4 * (1 + SOURCES * PER_SOURCE));
      const start = new SharedArrayBuffer(4);
      // per source: messages the reader has taken from the queues or the hand-off list
      const seen = new SharedArrayBuffer(4 * SOURCES);
      const body = `
        import('node:worker_threads').then(async ({ parentPort, workerData: d }) => {
          const { register } = await import('tsx/esm/api');
          register();
          const { RequestTable, SLOT, SLOT_WORDS } = await import(d.tableUrl);
          const { MatchQueues } = await import(d.queuesUrl);
          const { ClaimTable, CLAIM_STATE, claimOwner, claimState } = await import(d.claimsUrl);
          const table = new RequestTable(d.slots, false, true);
          const q = new MatchQueues(table, d.queueBuffer, d.sources, 'parallel', false, true);
          const claims = new ClaimTable(d.claimBuffer, d.threads);
          const list = new Int32Array(d.handoff);
          q.setClaimHook({
            holder: (ctx, tag) => {
              const e = claims.find(0, ctx, tag);
              if (e < 0) return -1;
              const w = claims.word(e);
              const st = claimState(w);
              return st === CLAIM_STATE.CLAIMED || st === CLAIM_STATE.DEMOTING ? claimOwner(w) : -1;
            },
            handOff: (msg) => Atomics.store(list, 1 + Atomics.add(list, 0, 1), msg + 1),
          });
          const start = new Int32Array(d.start);
          const seen = new Int32Array(d.seen);
          Atomics.add(start, 0, 1);
          while (Atomics.load(start, 0) < d.sources + 1) {}
          const w = table.words;
          for (let seq = 0; seq < d.perSource; seq++) {
            const slot = d.me * d.perSource + seq;
            const b = slot * SLOT_WORDS;
            w[b + SLOT.CTX] = d.ctx;
            w[b + SLOT.SRC] = d.me;
            w[b + SLOT.TAG] = d.tag;
            // At most WINDOW ahead of the reader, so that the claim and its end fall mid-stream.
            while (seq - Atomics.load(seen, d.me) > d.window) {}
            q.arrive(slot);
          }
          parentPort.postMessage('done');
        });`;
      const workerData = (me: number) => ({
        tableUrl: new URL('./request-table.ts', import.meta.url).href,
        queuesUrl: new URL('./match-queues.ts', import.meta.url).href,
        claimsUrl: new URL('./claim-table.ts', import.meta.url).href,
        slots, queueBuffer, claimBuffer, handoff, start, seen, window: WINDOW,
        sources: SOURCES, perSource: PER_SOURCE, threads: THREADS, ctx: CTX, tag: TAG, me,
      });
      const workers = [0, 1].map((me) => new Worker(body, { eval: true, workerData: workerData(me) }));
      const finished = Promise.all(workers.map((w) => new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); })));
      try {
        const readers = new Int32Array(start);
        const deadline = Date.now() + 120_000;
        const guard = (what: string): void => {
          if (Date.now() > deadline) throw new Error(`round ${round}: ${what} after 120 s (read ${read.join('/')} of ${PER_SOURCE} per source)`);
        };
        // Wait for both arriving threads, then start them and the reader together.
        while (Atomics.load(readers, 0) < SOURCES) {
          guard('the arriving threads did not start');
          await new Promise((r) => setTimeout(r, 5));
        }
        Atomics.add(readers, 0, 1);
        const read = [0, 0];
        const outOfOrder: string[] = [];
        const seenBy = new Int32Array(seen);
        const saw = (slot: number): void => {
          Atomics.add(seenBy, (slot / PER_SOURCE) | 0, 1);
        };
        const take = (slot: number, how: string): void => {
          const src = (slot / PER_SOURCE) | 0;
          const seq = slot % PER_SOURCE;
          if (seq !== read[src]) outOfOrder.push(`${how}: source ${src} seq ${seq}, expected ${read[src]}`);
          read[src] = seq + 1;
        };
        const fromQueues = (): void => {
          for (let s = 0; s < SOURCES; s++) {
            for (let m = q.takeMatching(CTX, s, TAG); m !== NIL; m = q.takeMatching(CTX, s, TAG)) {
              saw(m);
              take(m, 'shared queues');
            }
          }
        };
        // The general path until some messages were read, then the claim (retried: it needs the key clear here).
        const claimAfter = 200 + round * 500;
        while (read[0]! + read[1]! < claimAfter) {
          guard('reading before the claim');
          fromQueues();
        }
        let entry = -1;
        while (entry < 0) {
          guard('claiming');
          fromQueues();
          q.claimIfClear(CTX, TAG, () => {
            const r = claims.claim(0, CTX, TAG, OWNER);
            if (r.held) entry = r.entry;
            return r.held;
          });
        }
        expect(holder(claims, CTX, TAG)).toBe(OWNER);
        // The lane: read what was handed off, up to a point, leaving the last few unread.
        const list = new Int32Array(handoff);
        let next = 0;
        const lane: number[] = [];
        const handedUntil = Math.min(SOURCES * PER_SOURCE, read[0]! + read[1]! + 1_000);
        while (read[0]! + read[1]! + lane.length < handedUntil) {
          guard('reading the lane');
          const v = Atomics.load(list, 1 + next);
          if (v === 0) continue;
          next++;
          lane.push(v - 1);
          saw(v - 1);
          if (lane.length > 7) take(lane.shift()!, 'lane');
        }
        // Give the claim up with `lane` unread: it goes back in order, with every later hand-off.
        // The arriving threads are let run ahead first, so that they arrive while it happens.
        for (let s = 0; s < SOURCES; s++) Atomics.add(seenBy, s, 5 * WINDOW);
        q.demoteInto(() => {
          const written = Atomics.load(list, 0);
          while (next < written) {
            const v = Atomics.load(list, 1 + next);
            if (v === 0) throw new Error('a hand-off reserved but not written while every lock is held');
            next++;
            lane.push(v - 1);
          }
          return { posted: [], unexpected: lane };
        }, () => {
          expect(claims.requestDemotion(entry)).toBe(OWNER);
          expect(claims.finishDemotion(entry, OWNER)).toBe(true);
        });
        expect(holder(claims, CTX, TAG)).toBe(-1);
        const handed = Atomics.load(list, 0);
        while (read[0]! + read[1]! < SOURCES * PER_SOURCE) {
          guard('reading after the claim ended');
          if (Atomics.load(list, 0) !== handed) throw new Error(`round ${round}: a message was handed off after the claim ended (lost to the reader)`);
          fromQueues();
        }
        await finished;
        expect(outOfOrder).toEqual([]);
        expect(read).toEqual([PER_SOURCE, PER_SOURCE]);
        // Nothing was handed off after the claim ended, and nothing is left anywhere.
        expect(Atomics.load(list, 0)).toBe(handed);
        expect(q.unexpectedCount).toBe(0);
        expect(handed).toBeGreaterThan(0);
      } finally {
        await Promise.all(workers.map((w) => w.terminate()));
      }
    }
  }, 600_000);
});
