/**
 * Intercommunicator collectives (MPI 4.0 section 6.2.2), as MPICH builds
 * them (src/mpi/coll/*_inter_*.c): a phase inside each group over its local
 * view, and a phase between the groups over the inter view, where the local
 * group's rank 0 (its leader) talks to the remote group's.
 *
 * Views (both CollPt2pt): `local` addresses the caller's own group (rank =
 * local rank), `inter` addresses the remote group (rank = the caller's local
 * rank, size = the remote size; sends reach remote ranks). The API layer
 * (api/intercomm.ts) gives both the same tag; they travel on different
 * contexts, and local and remote groups are disjoint, so the invariant of
 * coll/pt2pt.ts holds per view.
 * ```
 *   leaderSwap   local leader <-> remote leader, then bcast in each group:
 *                every rank gets the remote leader's payload
 *   barrier      local barrier, leaderSwap of nothing
 *   bcast        root -> remote leader, bcast in the remote group
 *   gather       gather in the sending group to its leader, leader -> root
 *   scatter      root -> remote leader, scatter in the remote group
 *   allgather    gather in each group, leaderSwap of the blocks
 *   alltoall     every rank with every remote rank, directly
 * ```
 * Reductions (reduce, allreduce) are a local reduce to the leader (coll's
 * reduce or reduceObjects) followed by interSendToRoot or leaderSwap: the API
 * layer composes them, since the reduce itself is the intracommunicator one.
 *
 * Blocks of varying length travel as one frame: a Uint32 count, the lengths,
 * then the bytes (packBlocks / unpackBlocks).
 */
import { barrier } from './barrier.ts';
import { bcastBytes } from './bcast.ts';
import { gatherBytes } from './gather.ts';
import { scatterBytes } from './scatter.ts';
import type { CollPt2pt } from './pt2pt.ts';

const EMPTY = new Uint8Array(0);

/** Blocks of any lengths as one frame. */
export function packBlocks(blocks: readonly Uint8Array[]): Uint8Array {
  const header = 4 * (1 + blocks.length);
  let total = header;
  for (const b of blocks) total += b.length;
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, blocks.length, true);
  let at = header;
  blocks.forEach((b, i) => {
    dv.setUint32(4 * (1 + i), b.length, true);
    out.set(b, at);
    at += b.length;
  });
  return out;
}

/** The blocks of a packBlocks frame (subarrays of `frame`). */
export function unpackBlocks(frame: Uint8Array): Uint8Array[] {
  const dv = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const n = dv.getUint32(0, true);
  const out: Uint8Array[] = [];
  let at = 4 * (1 + n);
  for (let i = 0; i < n; i++) {
    const len = dv.getUint32(4 * (1 + i), true);
    out.push(frame.subarray(at, at + len));
    at += len;
  }
  return out;
}

/**
 * The leaders swap payloads; every rank of each group resolves the other group's leader's payload.
 * @param mine significant at local rank 0 only
 */
export async function leaderSwap(local: CollPt2pt, inter: CollPt2pt, tag: number, mine: Uint8Array | null): Promise<Uint8Array> {
  let got: Uint8Array | null = null;
  if (local.rank === 0) {
    // Both at once: a failed receive must not go unobserved while the send waits.
    [got] = await Promise.all([inter.recv(0, tag), inter.send(0, tag, mine ?? EMPTY)]);
  }
  return bcastBytes(local, tag, got, 0);
}

/** Returns once every rank of both groups has called it. */
export async function interBarrier(local: CollPt2pt, inter: CollPt2pt, tag: number): Promise<void> {
  await barrier(local, tag);
  await leaderSwap(local, inter, tag, null);
}

/** What the caller is in a rooted intercommunicator collective (MPI.ROOT / PROC_NULL / a remote rank). */
export type InterRole = { readonly kind: 'root' } | { readonly kind: 'idle' } | { readonly kind: 'remote'; readonly root: number };

/** Bcast: the root's data reaches every rank of the other group (resolves it there; `data` at the root; null where idle). */
export async function interBcast(local: CollPt2pt, inter: CollPt2pt, tag: number, data: Uint8Array | null, role: InterRole): Promise<Uint8Array | null> {
  if (role.kind === 'root') {
    await inter.send(0, tag, data!);
    return data;
  }
  if (role.kind === 'idle') return null;
  const got = local.rank === 0 ? await inter.recv(role.root, tag) : null;
  return bcastBytes(local, tag, got, 0);
}

/** The leader of the sending group hands `data` (the group's result) to the remote root. */
export async function interSendToRoot(local: CollPt2pt, inter: CollPt2pt, tag: number, data: Uint8Array | null, root: number): Promise<void> {
  if (local.rank === 0) await inter.send(root, tag, data!);
}

/** Gather: the root resolves every remote rank's block, by remote rank; the others resolve null. */
export async function interGather(local: CollPt2pt, inter: CollPt2pt, tag: number, mine: Uint8Array | null, role: InterRole): Promise<Uint8Array[] | null> {
  if (role.kind === 'root') return unpackBlocks(await inter.recv(0, tag));
  if (role.kind === 'idle') return null;
  const blocks = await gatherBytes(local, tag, mine!, 0);
  await interSendToRoot(local, inter, tag, blocks === undefined ? null : packBlocks(blocks), role.root);
  return null;
}

/** Scatter: remote rank i resolves blocks[i] of the root; the root and the idle resolve null. */
export async function interScatter(local: CollPt2pt, inter: CollPt2pt, tag: number, blocks: readonly Uint8Array[] | null, role: InterRole): Promise<Uint8Array | null> {
  if (role.kind === 'root') {
    await inter.send(0, tag, packBlocks(blocks!));
    return null;
  }
  if (role.kind === 'idle') return null;
  const all = local.rank === 0 ? unpackBlocks(await inter.recv(role.root, tag)) : undefined;
  return scatterBytes(local, tag, all, 0);
}

/** Allgather: every rank resolves every remote rank's block, by remote rank. */
export async function interAllgather(local: CollPt2pt, inter: CollPt2pt, tag: number, mine: Uint8Array): Promise<Uint8Array[]> {
  const blocks = await gatherBytes(local, tag, mine, 0);
  return unpackBlocks(await leaderSwap(local, inter, tag, blocks === undefined ? null : packBlocks(blocks)));
}

/** Alltoall: blocks[j] goes to remote rank j; resolves the block from each remote rank, by remote rank. */
export async function interAlltoall(inter: CollPt2pt, tag: number, blocks: readonly Uint8Array[]): Promise<Uint8Array[]> {
  const recvs: Promise<Uint8Array>[] = [];
  for (let i = 0; i < inter.size; i++) recvs.push(inter.recv(i, tag));
  const sends: Promise<void>[] = [];
  for (let j = 0; j < inter.size; j++) sends.push(inter.send(j, tag, blocks[j]!));
  const [got] = await Promise.all([Promise.all(recvs), Promise.all(sends)]);
  return got;
}
