/**
 * Inclusive and exclusive prefix reductions by recursive doubling.
 *
 * Sources: MPICH src/mpi/coll/scan/scan_intra_recursive_doubling.c and
 * src/mpi/coll/exscan/exscan_intra_recursive_doubling.c.
 *
 * State per rank r: `partial` = reduction of the 2m-aligned group of ranks
 * containing r, as far as it exists (the group's members below p), and
 * `result` = reduction of the ranks of that group that are <= r (scan) or
 * < r (exscan; undefined while that set is empty).
 * Step mask m = 1, 2, ... < p, partner d = r ^ m (skipped when d >= p):
 *   send partial, receive the partner's partial t;
 *   d < r: partial = t op partial, result = t op result (t is lower);
 *   d > r: partial = partial op t (result unchanged).
 * The groups of r and d are adjacent aligned ranges, so every merge keeps
 * rank order: valid for non-commutative ops.
 * Tag invariant: the partners r ^ m are distinct for distinct m.
 */
import { sendrecv } from './exchange.ts';
import { byteFold, objectFold, type Fold } from './fold.ts';
import type { ByteOp, Codec, CollPt2pt, ObjectOp } from './pt2pt.ts';
import { choose, type CollOptions } from './select.ts';

/**
 * The scan skeleton. `mine` must be owned; `inclusive` selects scan (result
 * starts as mine) or exscan (result starts empty).
 */
export async function recursiveDoublingScan<V>(
  pt: CollPt2pt, tag: number, fold: Fold<V>, mine: V, inclusive: boolean,
): Promise<V | undefined> {
  const { rank, size } = pt;
  let partial = inclusive ? fold.clone(mine) : mine;
  let result: V | undefined = inclusive ? mine : undefined;
  for (let mask = 1; mask < size; mask <<= 1) {
    const peer = rank ^ mask;
    if (peer >= size) continue;
    const got = await sendrecv(pt, tag, peer, fold.encode(partial), peer);
    if (peer < rank) {
      // The byte fold leaves a lower `other` untouched, so `got` may serve twice.
      partial = fold.merge(partial, fold.decode(got), true);
      result = result === undefined ? fold.decode(got) : fold.merge(result, fold.decode(got), true);
    } else {
      partial = fold.merge(partial, fold.decode(got), false);
    }
  }
  return result;
}

/**
 * Inclusive prefix reduction: rank r's `recv` = x0 op ... op xr (MPI_Scan).
 * @param send this rank's vector; null means IN_PLACE (it is already in `recv`)
 */
export async function scan(pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp, opts?: CollOptions): Promise<void> {
  choose('scan', { size: pt.size, bytes: recv.length, items: recv.length / op.itemBytes, commute: op.commute }, opts);
  if (send !== null) recv.set(send);
  if (pt.size === 1 || recv.length === 0) return;
  const result = await recursiveDoublingScan(pt, tag, byteFold(op, pt), recv, true);
  if (result !== recv) recv.set(result!);
}

/**
 * Exclusive prefix reduction: rank r's `recv` = x0 op ... op x(r-1) for r > 0;
 * rank 0's `recv` is left untouched (MPI_Exscan).
 * @param send this rank's vector; null means IN_PLACE (it is read from `recv`, which then receives the result)
 */
export async function exscan(pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp, opts?: CollOptions): Promise<void> {
  choose('exscan', { size: pt.size, bytes: recv.length, items: recv.length / op.itemBytes, commute: op.commute }, opts);
  if (pt.size === 1 || recv.length === 0) return;
  const mine = (send ?? recv).slice();
  const result = await recursiveDoublingScan(pt, tag, byteFold(op, pt), mine, false);
  if (result !== undefined) recv.set(result);
}

/** Inclusive prefix reduction of values: rank r gets v0 op ... op vr. */
export async function scanObjects<T>(
  pt: CollPt2pt, tag: number, value: T, op: ObjectOp<T>, codec: Codec<T>, opts?: CollOptions,
): Promise<T> {
  choose('scanObjects', { size: pt.size, bytes: 0, items: 0, commute: op.commute }, opts);
  return (await recursiveDoublingScan(pt, tag, objectFold(op, codec), value, true))!;
}

/** Exclusive prefix reduction of values: rank r > 0 gets v0 op ... op v(r-1); rank 0 gets undefined. */
export async function exscanObjects<T>(
  pt: CollPt2pt, tag: number, value: T, op: ObjectOp<T>, codec: Codec<T>, opts?: CollOptions,
): Promise<T | undefined> {
  choose('exscanObjects', { size: pt.size, bytes: 0, items: 0, commute: op.commute }, opts);
  return recursiveDoublingScan(pt, tag, objectFold(op, codec), value, false);
}
