/**
 * Neighborhood collectives (MPI 4.0 section 8.6): every rank sends block j
 * to destinations[j] and receives block i from sources[i]; a PROC_NULL
 * neighbour moves nothing and its receive block is left as it was. The
 * allgather forms send one block to every destination; the api layer passes
 * it as the same bytes for every j.
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
import type { CollPt2pt, VBuffer } from './pt2pt.ts';

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
