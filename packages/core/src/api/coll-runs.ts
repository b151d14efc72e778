/**
 * The buffer collectives' argument checks, and the body each call then runs
 * (API.md "Comm: collectives", "All collectives, in every form").
 *
 * Each builder checks its arguments, once, before anything changes (STYLE.md
 * rule 19), and returns a CollRun that packs, calls one coll/ algorithm and
 * unpacks. coll-comm.ts runs it in the blocking form (await), the I… form (a
 * Request over the same promise) or the …Init form (the same run at every
 * start(): what it closes over — resolved buffers, the op on the datatype —
 * is built once, so a persistent request pays for its plan at init only).
 *
 * Buffers travel packed (buffer.ts): a contiguous layout is used in place,
 * any other is packed into a staging buffer before and unpacked after.
 * Counts (API.md, as mpi4py): the per-process count of Gather, Scatter,
 * Allgather, Alltoall and ReduceScatterBlock is the length of the
 * per-process buffer; the root's (or every rank's) buffer holds `size` blocks.
 * ReduceScatter takes recvcounts in items of recvbuf's datatype.
 */
import {
  allgather as collAllgather, allgatherv as collAllgatherv, alltoall as collAlltoall, alltoallv as collAlltoallv, bcast as collBcast,
  gather as collGather, gatherv as collGatherv, reduce as collReduce, reduceScatter as collReduceScatter,
  reduceScatterBlock as collReduceScatterBlock, scatter as collScatter, scatterv as collScatterv, promisePlan, type ByteOp, type CollPlanner,
} from '../coll/index.ts';
import { ERR_BUFFER, ERR_COUNT, ERR_ROOT, mpiError } from '../util/index.ts';
import { IN_PLACE } from './constants.ts';
import type { CollRun, CommPlanner } from './coll-object-comm.ts';
import type { CommCollPt2pt } from './coll-pt2pt.ts';
import { byteOpOf, type Op } from './op.ts';
import {
  describe, packedOf, packV, recvAreaOf, resolveBuf, resolveV, resolveW, stageW, unpackArea, unpackV, unstageW,
  type BufSpec, type ResolvedBuf, type WBufSpec,
} from './buffer.ts';

type InPlace = typeof IN_PLACE;

/** A `[buf, counts, displs]` argument of the v-collectives. */
export type VBufSpec = [BufSpec, number[], number[]];

/** What a builder needs of the communicator: its size, the caller's rank, and the caller check. */
export interface RunComm {
  readonly rank: number;
  readonly size: number;
  readonly name: string;
  /** Checks that the communicator is usable and the caller a member (Pt2ptComm._me). */
  _me(call: string): number;
}

/** A reduction's algorithm over packed bytes: Allreduce, Scan or Exscan. */
export type VectorAlgorithm = (pt: CommCollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp) => Promise<void>;

/** Plans a reduction once for buffers that stay put (a persistent request's): coll/ chooses the algorithm at init. */
export type VectorPlanner = (size: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp) => CollPlanner;

/** The BufSpec inside a v-spec (what a request references for its datatype); the spec itself when malformed (already rejected). */
export function vBase(spec: unknown): unknown {
  return Array.isArray(spec) ? spec[0] : spec;
}

function checkRoot(c: RunComm, root: number, call: string): void {
  c._me(call);
  if (!Number.isInteger(root) || root < 0 || root >= c.size) {
    throw mpiError(ERR_ROOT, call, `root ${String(root)} is out of range for ${c.name} (size ${c.size}): expected 0..${c.size - 1}`);
  }
}

function sameBytes(a: ResolvedBuf, b: ResolvedBuf, call: string): void {
  if (a.packedBytes !== b.packedBytes) {
    throw mpiError(ERR_COUNT, call, `sendbuf holds ${a.count} ${a.datatype.name} (${a.packedBytes} bytes) but recvbuf holds ${b.count} ${b.datatype.name} (${b.packedBytes} bytes): they must match`);
  }
}

function blocks(rb: ResolvedBuf, size: number, call: string, arg: string): number {
  if (rb.count % size !== 0) {
    throw mpiError(ERR_COUNT, call, `${arg} holds ${rb.count} items of ${rb.datatype.name}, not a multiple of the communicator size ${size} (one block per rank)`);
  }
  return rb.packedBytes / size;
}

function blockIs(rb: ResolvedBuf, bb: number, call: string, arg: string): void {
  if (rb.packedBytes !== bb) {
    throw mpiError(ERR_COUNT, call, `${arg} holds ${rb.packedBytes} bytes but one block of the other buffer is ${bb} bytes: they must match`);
  }
}

function noInPlace(x: unknown, call: string, arg: string, where: string): void {
  if (x === IN_PLACE) throw mpiError(ERR_BUFFER, call, `${arg} is IN_PLACE, which MPI allows only ${where}`);
}

/** Bcast: root's buffer into every rank's buffer (same size everywhere). */
export function bcastRun(c: RunComm, buf: BufSpec, root: number, call: string): CollRun {
  checkRoot(c, root, call);
  const rb = resolveBuf(buf, call, 'buf');
  return async (pt, tag) => {
    const isRoot = pt.rank === root;
    const area = isRoot ? packedOf(rb) : recvAreaOf(rb);
    await collBcast(pt, tag, area, root);
    if (!isRoot) unpackArea(rb, area);
  };
}

/** Reduce: every rank's sendbuf into root's recvbuf (IN_PLACE at the root: its input is in recvbuf). */
export function reduceRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root: number, call: string): CollRun {
  checkRoot(c, root, call);
  const isRoot = c.rank === root;
  let send: ResolvedBuf | null = null;
  let recv: ResolvedBuf | null = null;
  if (isRoot) {
    recv = resolveBuf(recvbuf, call, 'recvbuf');
    if (sendbuf !== IN_PLACE) {
      send = resolveBuf(sendbuf, call, 'sendbuf');
      sameBytes(send, recv, call);
    }
  } else {
    noInPlace(sendbuf, call, 'sendbuf', 'at the root');
    send = resolveBuf(sendbuf, call, 'sendbuf');
  }
  const dt = (send ?? recv)!;
  const bop = byteOpOf(op, dt.datatype, dt.packedBytes, call);
  return async (pt, tag) => {
    const area = recv === null ? null : send === null ? packedOf(recv) : recvAreaOf(recv);
    await collReduce(pt, tag, send === null ? null : packedOf(send), area, bop, root);
    if (recv !== null) unpackArea(recv, area!);
  };
}

/** The checked arguments of a reduction over a vector: its buffers and the op on their datatype. */
interface CheckedVector {
  readonly send: ResolvedBuf | null;
  readonly recv: ResolvedBuf;
  readonly bop: ByteOp;
}

/** The shared checks of Allreduce, Scan and Exscan: IN_PLACE or a sendbuf the size of recvbuf. */
function checkVector(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: string): CheckedVector {
  c._me(call);
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
  if (send !== null) sameBytes(send, recv, call);
  return { send, recv, bop: byteOpOf(op, recv.datatype, recv.packedBytes, call) };
}

/** The body of a checked vector reduction on buffers of any layout: packed around the algorithm. Exscan leaves rank 0's recvbuf as it was. */
function packedVectorRun(v: CheckedVector, algorithm: VectorAlgorithm, isExclusive: boolean): CollRun {
  const { send, recv, bop } = v;
  return async (pt, tag) => {
    const area = send === null ? packedOf(recv) : recvAreaOf(recv);
    await algorithm(pt, tag, send === null ? null : packedOf(send), area, bop);
    if (!(isExclusive && pt.rank === 0)) unpackArea(recv, area);
  };
}

/**
 * The send buffer's own bytes (null for IN_PLACE) when both buffers are contiguous (the common
 * case: the algorithm then works on the user's memory, with nothing to pack or unpack around it,
 * and recv.contiguous is the result's), else undefined.
 */
function contiguousSend(v: CheckedVector): Uint8Array | null | undefined {
  if (v.recv.contiguous === null) return undefined;
  if (v.send === null) return null;
  return v.send.contiguous ?? undefined;
}

/** The shared shape of Allreduce, Scan and Exscan: IN_PLACE or a sendbuf the size of recvbuf. Exscan leaves rank 0's recvbuf as it was. */
export function vectorRun(
  c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: string, algorithm: VectorAlgorithm, isExclusive: boolean,
): CollRun {
  const v = checkVector(c, sendbuf, recvbuf, op, call);
  const sendBytes = contiguousSend(v);
  if (sendBytes !== undefined) {
    const recvBytes = v.recv.contiguous!;
    const bop = v.bop;
    return (pt, tag) => algorithm(pt, tag, sendBytes, recvBytes, bop);
  }
  return packedVectorRun(v, algorithm, isExclusive);
}

/**
 * vectorRun for a persistent request planned at init (AllreduceInit): contiguous buffers (what a
 * persistent request starts again and again) go to coll/'s planner, which chooses the algorithm
 * and its schedule once; other layouts run the packed body at every start.
 */
export function vectorPlan(
  c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: string, algorithm: VectorAlgorithm, planner: VectorPlanner,
): CommPlanner {
  const v = checkVector(c, sendbuf, recvbuf, op, call);
  const sendBytes = contiguousSend(v);
  if (sendBytes !== undefined) return planner(c.size, sendBytes, v.recv.contiguous!, v.bop);
  const run = packedVectorRun(v, algorithm, false);
  return (pt, tag) => promisePlan(() => run(pt, tag));
}

/** ReduceScatterBlock: size blocks reduced, rank i gets block i (IN_PLACE: recvbuf holds the size blocks, the result goes to its first). */
export function reduceScatterBlockRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: string): CollRun {
  c._me(call);
  const size = c.size;
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  let send: ResolvedBuf | null = null;
  let bb: number;
  if (sendbuf === IN_PLACE) {
    bb = blocks(recv, size, call, 'recvbuf');
  } else {
    send = resolveBuf(sendbuf, call, 'sendbuf');
    bb = recv.packedBytes;
    if (send.packedBytes !== size * bb) {
      throw mpiError(ERR_COUNT, call, `sendbuf holds ${send.packedBytes} bytes: expected ${size} blocks of recvbuf's ${bb} bytes`);
    }
  }
  const bop = byteOpOf(op, recv.datatype, size * bb, call);
  if (bb % bop.itemBytes !== 0) throw mpiError(ERR_COUNT, call, `a block of ${bb} bytes splits an item of ${bop.itemBytes} bytes`);
  return async (pt, tag) => {
    const area = send === null ? packedOf(recv) : recvAreaOf(recv);
    await collReduceScatterBlock(pt, tag, send === null ? null : packedOf(send), area, bb, bop);
    unpackArea(recv, area, bb);
  };
}

/**
 * ReduceScatter: sendbuf holds sum(recvcounts) items (IN_PLACE: recvbuf does); rank i gets the
 * reduction of the recvcounts[i] items after the blocks of ranks 0..i-1, in the first
 * recvcounts[i] items of its recvbuf. Counts are in items of recvbuf's datatype.
 */
export function reduceScatterRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op, call: string): CollRun {
  c._me(call);
  const size = c.size;
  if (!Array.isArray(recvcounts) || recvcounts.length !== size) {
    throw mpiError(ERR_COUNT, call, `recvcounts is ${describe(recvcounts)}: expected an array of ${size} integers >= 0 (one per rank)`);
  }
  for (let i = 0; i < size; i++) {
    const n = recvcounts[i];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw mpiError(ERR_COUNT, call, `recvcounts[${i}] is ${String(n)}: expected an integer >= 0`);
    }
  }
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const itemBytes = recv.datatype.size;
  const total = recvcounts.reduce((a, b) => a + b, 0);
  const mine = recvcounts[c.rank]!;
  let send: ResolvedBuf | null = null;
  if (sendbuf === IN_PLACE) {
    if (recv.count < total) throw mpiError(ERR_COUNT, call, `recvbuf (IN_PLACE) holds ${recv.count} items of ${recv.datatype.name}: expected at least sum(recvcounts) = ${total}`);
  } else {
    send = resolveBuf(sendbuf, call, 'sendbuf');
    if (send.packedBytes < total * itemBytes) {
      throw mpiError(ERR_COUNT, call, `sendbuf holds ${send.packedBytes} bytes: expected at least sum(recvcounts) = ${total} items of ${recv.datatype.name} (${total * itemBytes} bytes)`);
    }
    if (recv.count < mine) throw mpiError(ERR_COUNT, call, `recvbuf holds ${recv.count} items of ${recv.datatype.name}: expected at least recvcounts[${c.rank}] = ${mine}`);
  }
  const bop = byteOpOf(op, recv.datatype, total * itemBytes, call);
  const blockBytes = recvcounts.map((n) => n * itemBytes);
  blockBytes.forEach((b, i) => {
    if (b % bop.itemBytes !== 0) throw mpiError(ERR_COUNT, call, `recvcounts[${i}] = ${recvcounts[i]} splits an item of ${bop.itemBytes} bytes (${op.name} takes pairs)`);
  });
  return async (pt, tag) => {
    const area = send === null ? packedOf(recv) : recvAreaOf(recv);
    await collReduceScatter(pt, tag, send === null ? null : packedOf(send).subarray(0, total * itemBytes), area, blockBytes, bop, call);
    unpackArea(recv, area, mine * itemBytes);
  };
}

/** Gather: equal blocks to root (IN_PLACE at the root). */
export function gatherRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root: number, call: string): CollRun {
  checkRoot(c, root, call);
  const isRoot = c.rank === root;
  let send: ResolvedBuf | null = null;
  let recv: ResolvedBuf | null = null;
  let bb: number;
  if (isRoot) {
    recv = resolveBuf(recvbuf, call, 'recvbuf');
    bb = blocks(recv, c.size, call, 'recvbuf');
    if (sendbuf !== IN_PLACE) {
      send = resolveBuf(sendbuf, call, 'sendbuf');
      blockIs(send, bb, call, 'sendbuf');
    }
  } else {
    noInPlace(sendbuf, call, 'sendbuf', 'at the root');
    send = resolveBuf(sendbuf, call, 'sendbuf');
    bb = send.packedBytes;
  }
  return async (pt, tag) => {
    const area = recv === null ? null : send === null ? packedOf(recv) : recvAreaOf(recv);
    await collGather(pt, tag, send === null ? null : packedOf(send), area, bb, root);
    if (recv !== null) unpackArea(recv, area!);
  };
}

/** Gatherv: blocks of varying size to root (IN_PLACE at the root: its block is already in place). */
export function gathervRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root: number, call: string): CollRun {
  checkRoot(c, root, call);
  const isRoot = c.rank === root;
  const recv = isRoot ? resolveV(recvbuf, c.size, call, 'recvbuf') : null;
  if (!isRoot) noInPlace(sendbuf, call, 'sendbuf', 'at the root');
  const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
  return async (pt, tag) => {
    if (recv !== null && send === null) packV(recv, root);
    await collGatherv(pt, tag, send === null ? null : packedOf(send), recv === null ? null : recv.v, root);
    if (recv !== null) unpackV(recv);
  };
}

/** Scatter: equal blocks from root (IN_PLACE at the root). */
export function scatterRun(c: RunComm, sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root: number, call: string): CollRun {
  checkRoot(c, root, call);
  const isRoot = c.rank === root;
  let send: ResolvedBuf | null = null;
  let recv: ResolvedBuf | null = null;
  let bb: number;
  if (isRoot) {
    send = resolveBuf(sendbuf, call, 'sendbuf');
    bb = blocks(send, c.size, call, 'sendbuf');
    if (recvbuf !== IN_PLACE) {
      recv = resolveBuf(recvbuf, call, 'recvbuf');
      blockIs(recv, bb, call, 'recvbuf');
    }
  } else {
    noInPlace(recvbuf, call, 'recvbuf', 'at the root');
    recv = resolveBuf(recvbuf, call, 'recvbuf');
    bb = recv.packedBytes;
  }
  return async (pt, tag) => {
    const area = recv === null ? null : recvAreaOf(recv);
    await collScatter(pt, tag, send === null ? null : packedOf(send), area, bb, root);
    if (recv !== null) unpackArea(recv, area!);
  };
}

/** Scatterv: blocks of varying size from root (IN_PLACE at the root). */
export function scattervRun(c: RunComm, sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root: number, call: string): CollRun {
  checkRoot(c, root, call);
  const isRoot = c.rank === root;
  const send = isRoot ? resolveV(sendbuf, c.size, call, 'sendbuf') : null;
  if (!isRoot) noInPlace(recvbuf, call, 'recvbuf', 'at the root');
  const recv = recvbuf === IN_PLACE ? null : resolveBuf(recvbuf, call, 'recvbuf');
  return async (pt, tag) => {
    if (send !== null) packV(send);
    const area = recv === null ? null : recvAreaOf(recv);
    await collScatterv(pt, tag, send === null ? null : send.v, area, root);
    if (recv !== null) unpackArea(recv, area!);
  };
}

/** Allgather: every rank's block to every rank (IN_PLACE: the own block is already in recvbuf). */
export function allgatherRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, call: string): CollRun {
  c._me(call);
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const bb = blocks(recv, c.size, call, 'recvbuf');
  const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
  if (send !== null) blockIs(send, bb, call, 'sendbuf');
  return async (pt, tag) => {
    const area = send === null ? packedOf(recv) : recvAreaOf(recv);
    await collAllgather(pt, tag, send === null ? null : packedOf(send), area, bb);
    unpackArea(recv, area);
  };
}

/** Allgatherv: blocks of varying size (IN_PLACE: the own block is already in place). */
export function allgathervRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: VBufSpec, call: string): CollRun {
  c._me(call);
  const recv = resolveV(recvbuf, c.size, call, 'recvbuf');
  const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
  return async (pt, tag) => {
    if (send === null) packV(recv, pt.rank);
    await collAllgatherv(pt, tag, send === null ? null : packedOf(send), recv.v);
    unpackV(recv);
  };
}

/** Alltoall: block j of sendbuf to rank j (IN_PLACE: sent from recvbuf). */
export function alltoallRun(c: RunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, call: string): CollRun {
  c._me(call);
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const bb = blocks(recv, c.size, call, 'recvbuf');
  const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
  if (send !== null) sameBytes(send, recv, call);
  return async (pt, tag) => {
    const area = send === null ? packedOf(recv) : recvAreaOf(recv);
    await collAlltoall(pt, tag, send === null ? null : packedOf(send), area, bb);
    unpackArea(recv, area);
  };
}

/** Alltoallv: blocks of varying size (IN_PLACE: sent from recvbuf with its counts and displs). */
export function alltoallvRun(c: RunComm, sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec, call: string): CollRun {
  c._me(call);
  const recv = resolveV(recvbuf, c.size, call, 'recvbuf');
  const send = sendbuf === IN_PLACE ? null : resolveV(sendbuf, c.size, call, 'sendbuf');
  return async (pt, tag) => {
    if (send !== null) packV(send);
    else packV(recv);
    await collAlltoallv(pt, tag, send === null ? null : send.v, recv.v);
    unpackV(recv);
  };
}

/** Alltoallw: a datatype per block, displacements in bytes (IN_PLACE: sent from recvbuf with its counts, displs and types). */
export function alltoallwRun(c: RunComm, sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec, call: string): CollRun {
  c._me(call);
  const recv = resolveW(recvbuf, c.size, call, 'recvbuf', 'rank');
  const send = sendbuf === IN_PLACE ? null : resolveW(sendbuf, c.size, call, 'sendbuf', 'rank');
  return async (pt, tag) => {
    // alltoallv in place sends from a copy of recv's staging buffer.
    stageW(send ?? recv);
    await collAlltoallv(pt, tag, send === null ? null : send.v, recv.v);
    unstageW(recv);
  };
}
