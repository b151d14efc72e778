/**
 * Neighborhood collectives (MPI 4.0 section 8.6): every rank sends block j
 * to destinations[j] and receives block i from sources[i]; a PROC_NULL
 * neighbour moves nothing and its receive block is left as it was. The
 * allgather forms send one block to every destination; the api layer passes
 * it as the same bytes for every j.
 *
 * Two algorithms (select.ts row neighborAlltoall). per-block: a message per
 * block, straight from and to the caller's buffers (the v and w forms, and
 * large blocks). per-peer, for blocks of one size that every rank knows
 * (NeighborAlltoall, NeighborAllgather): one message per distinct neighbour,
 * its blocks packed in send order, split on arrival in source order. On a
 * periodic Cartesian dimension of size 1 or 2 (and a graph with repeated
 * edges) a neighbour appears twice: the halo of a 2x2 periodic grid is then
 * 2 messages per rank instead of 4, and the blocks from one neighbour are
 * adjacent in the receive buffer, so they land there with no copy. MPI
 * requires as many edges a -> b in a's list as in b's (MPI 4.0 section 8.6,
 * the graph restriction; a distributed graph's lists must agree), so both
 * sides group alike.
 *
 * Sources: MPICH src/mpi/coll/ineighbor_alltoallv/ineighbor_alltoallv_allcomm_sched_linear.c
 * (post every receive and every send, then wait); Open MPI coll/basic
 * neighbor_alltoall for Cartesian communicators (a tag per direction, which
 * gives the halo pairing that `sendOrder` gives here with one tag).
 *
 * One step, no rounds: every receive and every send is posted before any is
 * awaited, so rendezvous sends cannot deadlock. Matching uses the call's one
 * tag; the k-th message from a to b meets the k-th receive b posts from a
 * (pt2pt.ts ordering rule), which is why the sends go out in `sendOrder` and
 * the receives in source order (comm/topology.ts says why that pairs halo
 * blocks correctly when a neighbour appears twice).
 */
import { ERR_COUNT, PROC_NULL, mpiError } from '../util/index.ts';
import { recvInto } from './exchange.ts';
import type { CollPt2pt, VBuffer } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';

/** Who a rank exchanges with (comm/topology.ts NeighborLists): ranks of the communicator or PROC_NULL. */
export interface NeighborPlan {
  readonly sources: readonly number[];
  readonly destinations: readonly number[];
  /** indices into destinations: the order the sends are posted in */
  readonly sendOrder: readonly number[];
}

/**
 * Sends block j of `send` to plan.destinations[j] and receives block i of `recv` from
 * plan.sources[i] (counts and displacements in bytes).
 * @throws MPIError(ERR_TRUNCATE) when a message is longer than its receive block
 */
export async function neighborAlltoallv(pt: CollPt2pt, tag: number, plan: NeighborPlan, send: VBuffer, recv: VBuffer, call: string): Promise<void> {
  const pending: Promise<unknown>[] = [];
  plan.sources.forEach((source, i) => {
    if (source === PROC_NULL) return;
    const at = recv.displs[i]!;
    pending.push(recvInto(pt, source, tag, recv.buf.subarray(at, at + recv.counts[i]!), call));
  });
  for (const j of plan.sendOrder) {
    const dest = plan.destinations[j]!;
    if (dest === PROC_NULL) continue;
    const at = send.displs[j]!;
    pending.push(pt.send(dest, tag, send.buf.subarray(at, at + send.counts[j]!)));
  }
  await Promise.all(pending);
}

/** One distinct neighbour and the indices of its blocks, in the order they pair up. */
interface PeerBlocks {
  readonly peer: number;
  readonly blocks: readonly number[];
  /** receive side: the blocks are i, i + 1, ... (adjacent in a buffer of equal blocks) */
  readonly adjacent: boolean;
  /**
   * send side, several blocks: the packed buffer of the last call that completed, reused by the next
   * (null while a call holds it: an overlapping call packs into a fresh one). A send may keep its
   * buffer until it resolves, so a buffer comes back only once its whole call has completed.
   */
  spare: Uint8Array | null;
}

/** A plan's traffic by distinct neighbour: sends in sendOrder, receives in source order. */
interface PlanPeers {
  readonly sends: readonly PeerBlocks[];
  readonly recvs: readonly PeerBlocks[];
}

/** Each plan's peers, built at its first per-peer call (a topology communicator keeps one plan). */
const PEERS = new WeakMap<NeighborPlan, PlanPeers>();

function peersOf(plan: NeighborPlan): PlanPeers {
  let peers = PEERS.get(plan);
  if (peers === undefined) {
    peers = { sends: byPeer(plan.destinations, plan.sendOrder), recvs: byPeer(plan.sources, plan.sources.map((_, i) => i)) };
    PEERS.set(plan, peers);
  }
  return peers;
}

/** The non-PROC_NULL entries of `ranks`, visited in `order`, grouped by rank (first appearance first). */
function byPeer(ranks: readonly number[], order: readonly number[]): PeerBlocks[] {
  const groups = new Map<number, number[]>();
  for (const i of order) {
    const peer = ranks[i]!;
    if (peer === PROC_NULL) continue;
    const blocks = groups.get(peer);
    if (blocks === undefined) groups.set(peer, [i]);
    else blocks.push(i);
  }
  return Array.from(groups, ([peer, blocks]) => ({ peer, blocks, adjacent: blocks.every((b, k) => b === blocks[0]! + k), spare: null }));
}

/**
 * NeighborAlltoall and NeighborAllgather: blocks of `blockBytes` each, block j of the send side
 * at j * sendStride in `send` (sendStride 0: the allgather's one block for every j), block i of
 * the receive side at i * blockBytes in `recv`. The algorithm is select.ts's (per-peer or
 * per-block); blockBytes must be the same on every rank, as MPI requires.
 * @throws MPIError(ERR_TRUNCATE) when a message is longer than its blocks; ERR_COUNT when a
 *   neighbour's packed blocks are not `blockBytes` each (the ranks passed different block sizes)
 */
export function neighborAlltoall(
  pt: CollPt2pt, tag: number, plan: NeighborPlan, send: Uint8Array, sendStride: number, recv: Uint8Array, blockBytes: number, call: string, opts?: CollOptions,
): Promise<void> {
  const bb = blockBytes;
  if (choose('neighborAlltoall', plainInput(pt.size, bb), opts) === 'per-block') {
    const v = (n: number, stride: number, buf: Uint8Array): VBuffer => ({ buf, counts: new Array<number>(n).fill(bb), displs: Array.from({ length: n }, (_, i) => i * stride) });
    return neighborAlltoallv(pt, tag, plan, v(plan.destinations.length, sendStride, send), v(plan.sources.length, bb, recv), call);
  }
  const peers = peersOf(plan);
  const pending: Promise<unknown>[] = [];
  for (const g of peers.recvs) pending.push(recvBlocks(pt, tag, g, recv, bb, call));
  let packs: [PeerBlocks, Uint8Array][] | null = null;
  for (const g of peers.sends) {
    const { peer, blocks } = g;
    const n = blocks.length;
    if (n === 1) {
      const at = blocks[0]! * sendStride;
      pending.push(pt.send(peer, tag, send.subarray(at, at + bb)));
      continue;
    }
    let packed = g.spare;
    if (packed !== null && packed.length === n * bb) g.spare = null;
    else packed = new Uint8Array(n * bb);
    for (let k = 0; k < n; k++) {
      const at = blocks[k]! * sendStride;
      packed.set(send.subarray(at, at + bb), k * bb);
    }
    pending.push(pt.send(peer, tag, packed));
    (packs ??= []).push([g, packed]);
  }
  return Promise.all(pending).then(() => {
    // Every send has resolved: the packed buffers may serve the next call.
    if (packs !== null) for (const [g, packed] of packs) g.spare = packed;
  });
}

/** Receives neighbour g.peer's message of g.blocks.length blocks into their places in `recv`. */
function recvBlocks(pt: CollPt2pt, tag: number, g: PeerBlocks, recv: Uint8Array, bb: number, call: string): Promise<unknown> {
  const n = g.blocks.length;
  const first = g.blocks[0]! * bb;
  if (n === 1) return recvInto(pt, g.peer, tag, recv.subarray(first, first + bb), call);
  // Adjacent blocks (a periodic dimension of size 2 or 1) land in place; others through a copy.
  const area = g.adjacent ? recv.subarray(first, first + n * bb) : new Uint8Array(n * bb);
  return recvInto(pt, g.peer, tag, area, call).then((got) => {
    if (got !== n * bb) {
      throw mpiError(ERR_COUNT, call, `rank ${g.peer} sent ${got} bytes for ${n} blocks of ${bb} bytes: the ranks called ${call} with different block sizes (every rank must pass the same count and datatype)`);
    }
    if (!g.adjacent) for (let k = 0; k < n; k++) recv.set(area.subarray(k * bb, (k + 1) * bb), g.blocks[k]! * bb);
  });
}

/**
 * Object form: sends datas[j] to plan.destinations[j]; resolves what each source sent, by source
 * index (undefined for a PROC_NULL source).
 */
export async function neighborAlltoallBytes(pt: CollPt2pt, tag: number, plan: NeighborPlan, datas: readonly Uint8Array[]): Promise<(Uint8Array | undefined)[]> {
  const got = plan.sources.map((source) => (source === PROC_NULL ? Promise.resolve(undefined) : pt.recv(source, tag)));
  const sends: Promise<void>[] = [];
  for (const j of plan.sendOrder) {
    const dest = plan.destinations[j]!;
    if (dest !== PROC_NULL) sends.push(pt.send(dest, tag, datas[j]!));
  }
  const [out] = await Promise.all([Promise.all(got), Promise.all(sends)]);
  return out;
}
