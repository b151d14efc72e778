/**
 * Init's warm-up of the small allreduce (setting collWarmup, docs/adr/0026-tier-up-window-at-init.md):
 * before init returns, every rank runs N 8-byte allreduces on COMM_WORLD through the call a program
 * makes (COMM_WORLD.Allreduce, its lean path of docs/adr/0022-small-collectives-lean.md, recursive
 * doubling, the collectives' send and receive), alternating a Float64 SUM and an Int32 MAX, so that
 * V8 has compiled them before the program's first collective. Two kinds, so that the reduction's call
 * site has seen more than one target and a program's third kind should take a generic call there
 * rather than throw the compiled code away (a Float32 SUM, not run here, gained about as much as the
 * two kinds run here: docs/PERFORMANCE.md 4.31). init runs it
 * inside a window of a lower V8 interrupt budget (runtime/tier-up.ts, setting warmUpTierUpBudget), so
 * that what it runs is optimised within it; not the lean path's warm-up (lean-warm-up.ts), whose
 * window made the 8 MiB allreduce's calls dearer.
 *
 * Why it cannot disturb the program: an allreduce is collective, so every rank must run the same
 * number or the job hangs in init. Each rank publishes its count before the wire-up fence, reads
 * every rank's after it (as init reads every rank's address), and runs the warm-up only where all
 * counts are equal and not 0; every rank sees the same counts and so decides the same. Every rank
 * then has taken the same number of collective sequence numbers on COMM_WORLD when init returns, so
 * the program's first collective has the same tag on every rank, and a warm-up message, received
 * on its own tag, cannot match a program's. A rank sends and receives exactly the messages its peers
 * in the recursive doubling receive and send (coll/allreduce.ts recursiveDoublingPeers), all
 * received before its last warm-up call returns; they are taken out of MPI.stats afterwards.
 */
import { recursiveDoublingPeers } from '../coll/index.ts';
import type { Device } from '../device/index.ts';
import type { Comm } from './comm.ts';
import { MAX, SUM } from './op.ts';

/** Bytes of every warm-up call's vector: the small allreduce of issue 15. */
const VECTOR_BYTES = 8;

/** The PMI key under which rank `rank` publishes its warm-up calls before the fence. */
export function collWarmUpKey(rank: number): string {
  return `collWarmup:${rank}`;
}

/**
 * How many warm-up calls to run, from every rank's published count (null: a rank published none):
 * the common count where every rank published the same, else 0 (no rank runs any).
 */
export function agreedCalls(counts: readonly (number | null)[]): number {
  const first = counts[0];
  if (first === null || first === undefined || !Number.isInteger(first) || first <= 0) return 0;
  return counts.every((c) => c === first) ? first : 0;
}

/**
 * Runs `calls` allreduces on `world` (COMM_WORLD; every rank with the same `calls`) and takes their
 * messages out of `device`'s counts. A failure of the job on the way (a lost peer) ends it early
 * without an error: the program's first call reports the failure.
 */
export async function collWarmUp(world: Comm, device: Device, calls: number): Promise<void> {
  if (calls <= 0 || world.size <= 1) return;
  const f64 = [new Float64Array(1), new Float64Array(1)] as const;
  const i32 = [new Int32Array(2), new Int32Array(2)] as const;
  f64[0][0] = world.rank + 1;
  i32[0][0] = world.rank;
  let done = 0;
  try {
    for (; done < calls; done++) {
      if ((done & 1) === 0) await world.Allreduce(f64[0], f64[1], SUM);
      else await world.Allreduce(i32[0], i32[1], MAX);
    }
  } catch {
    // The job is failing; the program's next call says so. The calls that completed are discounted.
  } finally {
    const peers = recursiveDoublingPeers(world.rank, world.size);
    const ep = world._endpoints;
    for (const to of peers.sendsTo) device.uncount(done, done * VECTOR_BYTES, ep[to]!, 0, 0, ep[to]!);
    for (const from of peers.receivesFrom) device.uncount(0, 0, ep[from]!, done, done * VECTOR_BYTES, ep[from]!);
  }
}
