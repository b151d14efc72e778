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
 * adjacent in the receive buffer, so they land there with one copy. The
 * per-peer exchange is a step machine (neighbor-peers.ts, docs/adr/0053's
 * mechanism): no promise per neighbour, planned once per communicator. MPI
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
import { PROC_NULL } from '../util/index.ts';
import { recvInto } from './exchange.ts';
import { NeighborExchangePlan, type NeighborPlan } from './neighbor-peers.ts';
import { runPlan } from './plan.ts';
import type { CollPt2pt, VBuffer } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';

export type { NeighborPlan } from './neighbor-peers.ts';

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

/** Whether NeighborAlltoall or NeighborAllgather with blocks of `blockBytes` on `size` ranks takes the per-peer algorithm (select.ts). */
export function neighborPerPeer(size: number, blockBytes: number, opts?: CollOptions): boolean {
  return choose('neighborAlltoall', plainInput(size, blockBytes), opts) === 'per-peer';
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
  if (!neighborPerPeer(pt.size, bb, opts)) {
    const v = (n: number, stride: number, buf: Uint8Array): VBuffer => ({ buf, counts: new Array<number>(n).fill(bb), displs: Array.from({ length: n }, (_, i) => i * stride) });
    return neighborAlltoallv(pt, tag, plan, v(plan.destinations.length, sendStride, send), v(plan.sources.length, bb, recv), call);
  }
  // The per-peer step machine (neighbor-peers.ts), run once as a promise (the API's lean path and …Init keep theirs).
  return runPlan(new NeighborExchangePlan(pt, plan, tag, send, sendStride, recv, bb, call));
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
