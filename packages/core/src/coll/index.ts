/**
 * coll/: collective algorithms over point-to-point (the semantics layer).
 *
 * Every function takes the communicator's CollPt2pt and a fresh tag per call
 * (pt2pt.ts states the contract), and resolves when this rank's part is done.
 * The same async function serves the blocking form (await) and the
 * nonblocking one (the API layer wraps the promise in a Request). Buffer
 * collectives take packed bytes (counts and displacements in BYTES); object
 * collectives take bytes the caller serialized, or values plus a Codec.
 * Algorithms are chosen by SELECTION_TABLE (select.ts).
 */
export { barrier } from './barrier.ts';
export { bcast, bcastBytes } from './bcast.ts';
export { reduce, reduceObjects } from './reduce.ts';
export { allreduce, allreduceObjects, planAllreduce } from './allreduce.ts';
export { promisePlan, runPlan } from './plan.ts';
export type { CollPlan, CollPlanner, RunTarget } from './plan.ts';
export { LeanAllreduce, LEAN_ALLREDUCE_MAX_BYTES, LEAN_DONE, type BlockingWait } from './lean-allreduce.ts';
export { scan, exscan, scanObjects, exscanObjects } from './scan.ts';
export { gather, gatherv, gatherBytes } from './gather.ts';
export { scatter, scatterv, scatterBytes } from './scatter.ts';
export { allgather, allgatherv, allgatherBytes } from './allgather.ts';
export { alltoall, alltoallv, alltoallBytes } from './alltoall.ts';
export { reduceScatter, reduceScatterBlock } from './reduce-scatter.ts';
export { neighborAlltoall, neighborAlltoallv, neighborAlltoallBytes, neighborPerPeer } from './neighbor.ts';
export { LeanNeighbor, NeighborExchangePlan } from './neighbor-peers.ts';
export { interAllgather, interAlltoall, interBarrier, interBcast, interGather, interScatter, interSendToRoot, leaderSwap, packBlocks, unpackBlocks } from './inter.ts';
export type { InterRole } from './inter.ts';
export type { NeighborPlan } from './neighbor.ts';
export { ALGORITHMS, DEFAULT_COLL_TUNING, SELECTION_TABLE, selectAlgorithm } from './select.ts';
export type { AlgorithmOf, CollOptions, Collective, CollTuning, SelectionInput, SelectionRule } from './select.ts';
export { kindMismatch, sameCollective, signatureOf } from './signature.ts';
export type { ByteOp, Codec, CollPt2pt, Combine, ObjectOp, ReceiveIntoTarget, ReceiveTarget, SendTarget, VBuffer } from './pt2pt.ts';
