/**
 * The buffer collectives of an intercommunicator (MPI 4.0 6.2.2; API.md
 * "Intercommunicators"): their argument checks, and the body each call then
 * runs over the two views of api/intercomm.ts (the local group on suffix 2,
 * the remote group on suffix 1), as coll-runs.ts is for intracommunicators.
 * Intercomm runs each plan in the three forms (blocking, I…, …Init).
 *
 * Each builder checks its arguments once, before anything changes, and
 * returns an InterPlan: the body (packs, calls coll/inter.ts or coll/'s
 * intracommunicator algorithm over the local view, unpacks) and the buffer
 * and op a request references. Rooted calls take MPI.ROOT at the root,
 * PROC_NULL at the rest of its group (they do nothing but keep the call
 * order) and the root's remote rank in the other group. Counts follow MPI:
 * blocks are per remote rank (remoteSize of them); ReduceScatter(Block)
 * reduces the other group's vectors and scatters the result over this
 * group's ranks (both groups reduce the same number of items). IN_PLACE is
 * refused (ERR_BUFFER, as MPICH).
 */
import {
  interAllgather, interAlltoall, interBarrier, interBcast, interGather, interScatter, interSendToRoot, leaderSwap,
  reduce as collReduce, scatterBytes, type CollPt2pt, type InterRole,
} from '../coll/index.ts';
import { ERR_BUFFER, ERR_COUNT, ERR_ROOT, ERR_TRUNCATE, mpiError } from '../util/index.ts';
import {
  describe, packedOf, packV, recvAreaOf, resolveBuf, resolveV, resolveW, stageW, unpackArea, unpackV, unstageW,
  type BufSpec, type ResolvedBuf, type WBufSpec,
} from './buffer.ts';
import { IN_PLACE, PROC_NULL, ROOT, type InPlace } from './constants.ts';
import type { VBufSpec } from './coll-runs.ts';
import { byteOpOf, type Op } from './op.ts';

/** The body of one intercommunicator collective: the local view, the remote view, the call's tag. */
export type InterRun = (local: CollPt2pt, inter: CollPt2pt, tag: number) => Promise<void>;

/** A checked call: its body, and what a request over it references (a checked BufSpec or null; the op). */
export interface InterPlan {
  readonly run: InterRun;
  readonly buf: unknown;
  readonly op: Op | null;
}

/** What a builder needs of the intercommunicator. */
export interface InterRunComm {
  readonly name: string;
  readonly rank: number;
  readonly size: number;
  /** the remote group's endpoints, by remote rank */
  readonly _peers: Int32Array;
  /** Checks that the communicator is usable and the caller a member. */
  _me(call: string): number;
}

function plan(run: InterRun, buf: unknown = null, op: Op | null = null): InterPlan {
  return { run, buf, op };
}

function noInPlace(x: unknown, call: string, arg: string): void {
  if (x === IN_PLACE) throw mpiError(ERR_BUFFER, call, `${arg} is IN_PLACE, which MPI does not allow on an intercommunicator`);
}

/** The caller's part in a rooted collective: ROOT, PROC_NULL, or the root's rank in the remote group. */
export function interRole(c: InterRunComm, root: number, call: string): InterRole {
  c._me(call);
  if (root === ROOT) return { kind: 'root' };
  if (root === PROC_NULL) return { kind: 'idle' };
  const n = c._peers.length;
  if (!Number.isInteger(root) || root < 0 || root >= n) {
    throw mpiError(ERR_ROOT, call, `root ${String(root)} is invalid on intercommunicator ${c.name}: expected MPI.ROOT (the root), PROC_NULL (the root's group) or a remote rank 0..${n - 1}`);
  }
  return { kind: 'remote', root };
}

/** The packed bytes of a buffer collective land in `rb` (ERR_TRUNCATE when they do not fit). */
export function landBytes(rb: ResolvedBuf, bytes: Uint8Array, call: string): void {
  const area = recvAreaOf(rb);
  landInto(area, bytes, call);
  unpackArea(rb, area, bytes.length);
}
function landInto(area: Uint8Array, bytes: Uint8Array, call: string): void {
  if (bytes.length > area.length) throw mpiError(ERR_TRUNCATE, call, `the message of ${bytes.length} bytes is longer than the receive buffer (${area.length} bytes)`);
  area.set(bytes);
}
/** Block j (from remote rank j) into block j of a v-buffer's packed view (ERR_TRUNCATE when longer than counts[j]). */
function landBlocks(v: { buf: Uint8Array; counts: readonly number[]; displs: readonly number[] }, blocks: readonly Uint8Array[], call: string, arg: string): void {
  blocks.forEach((b, j) => {
    if (b.length > v.counts[j]!) throw mpiError(ERR_TRUNCATE, call, `remote rank ${j} sent ${b.length} bytes, more than ${arg} block ${j} holds (${v.counts[j]} bytes)`);
    v.buf.set(b, v.displs[j]!);
  });
}
/** The packed blocks of a v-buffer's view, by remote rank. */
function blocksOfV(v: { buf: Uint8Array; counts: readonly number[]; displs: readonly number[] }): Uint8Array[] {
  return v.counts.map((n, j) => v.buf.subarray(v.displs[j]!, v.displs[j]! + n));
}
function concat(blocks: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const b of blocks) n += b.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}
/** Bytes of one of `n` equal blocks of rb (ERR_COUNT when rb does not split in n). */
function blocksOf(rb: ResolvedBuf, n: number, call: string, arg: string): number {
  if (rb.count % n !== 0) {
    throw mpiError(ERR_COUNT, call, `${arg} holds ${rb.count} items of ${rb.datatype.name}, not a multiple of the remote group size ${n} (one block per remote rank)`);
  }
  return rb.packedBytes / n;
}
/** Equal blocks of a packed buffer. */
function split(all: Uint8Array, n: number, bb: number): Uint8Array[] {
  return Array.from({ length: n }, (_, j) => all.subarray(j * bb, (j + 1) * bb));
}

export function barrierInter(): InterPlan {
  return plan((l, i, tag) => interBarrier(l, i, tag));
}

/** Bcast: the root's buffer into every buffer of the other group. */
export function bcastInter(c: InterRunComm, buf: BufSpec, root: number, call: string): InterPlan {
  const role = interRole(c, root, call);
  const rb = role.kind === 'idle' ? null : resolveBuf(buf, call, 'buf');
  return plan(async (l, i, tag) => {
    const got = await interBcast(l, i, tag, role.kind === 'root' ? packedOf(rb!) : null, role);
    if (role.kind === 'remote') landBytes(rb!, got!, call);
  }, rb === null ? null : buf);
}

/** Reduce: the other group's sendbufs reduced into the root's recvbuf. */
export function reduceInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root: number, call: string): InterPlan {
  const role = interRole(c, root, call);
  noInPlace(sendbuf, call, 'sendbuf');
  if (role.kind === 'idle') return plan(async () => undefined);
  const spec = role.kind === 'root' ? recvbuf : sendbuf;
  const rb = resolveBuf(spec, call, role.kind === 'root' ? 'recvbuf' : 'sendbuf');
  const bop = byteOpOf(op, rb.datatype, rb.packedBytes, call);
  return plan(async (l, i, tag) => {
    if (role.kind === 'root') {
      landBytes(rb, await i.recv(0, tag), call);
      return;
    }
    const sum = l.rank === 0 ? new Uint8Array(rb.packedBytes) : null;
    await collReduce(l, tag, packedOf(rb), sum, bop, 0);
    await interSendToRoot(l, i, tag, sum, role.root);
  }, spec, op);
}

/** Allreduce: every recvbuf gets the reduction of the other group's sendbufs. */
export function allreduceInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const send = resolveBuf(sendbuf, call, 'sendbuf');
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const bop = byteOpOf(op, send.datatype, send.packedBytes, call);
  return plan(async (l, i, tag) => {
    const sum = l.rank === 0 ? new Uint8Array(send.packedBytes) : null;
    await collReduce(l, tag, packedOf(send), sum, bop, 0);
    landBytes(recv, await leaderSwap(l, i, tag, sum), call);
  }, recvbuf, op);
}

/**
 * The reduction of the other group's vectors (total bytes), scattered over this group in blocks of
 * blockBytes[r]: local reduce to the leader, the leaders swap, the leader scatters. A remote vector
 * of another length (the groups disagree on the count) gives ERR_COUNT at the leader; the other
 * ranks then get an empty block, an ERR_COUNT too unless theirs is empty.
 */
function reduceScatterBody(send: ResolvedBuf, recv: ResolvedBuf, blockBytes: readonly number[], bop: ReturnType<typeof byteOpOf>, call: string): InterRun {
  const total = blockBytes.reduce((a, b) => a + b, 0);
  return async (l, i, tag) => {
    const sum = l.rank === 0 ? new Uint8Array(total) : null;
    await collReduce(l, tag, packedOf(send).subarray(0, total), sum, bop, 0);
    let blocks: Uint8Array[] | undefined;
    let mismatch: Error | null = null;
    if (l.rank === 0) {
      const [got] = await Promise.all([i.recv(0, tag), i.send(0, tag, sum!)]);
      if (got.length === total) {
        let at = 0;
        blocks = blockBytes.map((n) => got.subarray(at, (at += n)));
      } else {
        mismatch = mpiError(ERR_COUNT, call, `the other group reduced ${got.length} bytes but this group ${total}: both groups must reduce the same number of items`);
        blocks = blockBytes.map(() => new Uint8Array(0));
      }
    }
    const mine = await scatterBytes(l, tag, blocks, 0);
    if (mismatch !== null) throw mismatch;
    if (mine.length !== blockBytes[l.rank]) {
      throw mpiError(ERR_COUNT, call, `this rank's block of the result is ${mine.length} bytes, not ${blockBytes[l.rank]}: both groups must reduce the same number of items`);
    }
    landBytes(recv, mine, call);
  };
}

/** ReduceScatterBlock: sendbuf holds size (local) blocks of recvbuf's size; local rank r gets block r of the other group's reduction. */
export function reduceScatterBlockInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const size = c.size;
  const send = resolveBuf(sendbuf, call, 'sendbuf');
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const bb = recv.packedBytes;
  if (send.packedBytes !== size * bb) {
    throw mpiError(ERR_COUNT, call, `sendbuf holds ${send.packedBytes} bytes: expected ${size} blocks (the local group size) of recvbuf's ${bb} bytes`);
  }
  const bop = byteOpOf(op, send.datatype, send.packedBytes, call);
  if (bb % bop.itemBytes !== 0) throw mpiError(ERR_COUNT, call, `a block of ${bb} bytes splits an item of ${bop.itemBytes} bytes`);
  return plan(reduceScatterBody(send, recv, new Array<number>(size).fill(bb), bop, call), recvbuf, op);
}

/** ReduceScatter: sendbuf holds sum(recvcounts) items (recvcounts: one per local rank); local rank r gets recvcounts[r] items of the other group's reduction. */
export function reduceScatterInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const size = c.size;
  if (!Array.isArray(recvcounts) || recvcounts.length !== size) {
    throw mpiError(ERR_COUNT, call, `recvcounts is ${describe(recvcounts)}: expected an array of ${size} integers >= 0 (one per local rank)`);
  }
  recvcounts.forEach((n, r) => {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw mpiError(ERR_COUNT, call, `recvcounts[${r}] is ${String(n)}: expected an integer >= 0`);
  });
  const send = resolveBuf(sendbuf, call, 'sendbuf');
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const itemBytes = recv.datatype.size;
  const total = recvcounts.reduce((a, b) => a + b, 0);
  if (send.packedBytes < total * itemBytes) {
    throw mpiError(ERR_COUNT, call, `sendbuf holds ${send.packedBytes} bytes: expected at least sum(recvcounts) = ${total} items of ${recv.datatype.name} (${total * itemBytes} bytes)`);
  }
  const mine = recvcounts[c.rank]!;
  if (recv.count < mine) throw mpiError(ERR_COUNT, call, `recvbuf holds ${recv.count} items of ${recv.datatype.name}: expected at least recvcounts[${c.rank}] = ${mine}`);
  const bop = byteOpOf(op, recv.datatype, total * itemBytes, call);
  const blockBytes = recvcounts.map((n) => n * itemBytes);
  blockBytes.forEach((b, r) => {
    if (b % bop.itemBytes !== 0) throw mpiError(ERR_COUNT, call, `recvcounts[${r}] = ${recvcounts[r]} splits an item of ${bop.itemBytes} bytes (${op.name} takes pairs)`);
  });
  return plan(reduceScatterBody(send, recv, blockBytes, bop, call), recvbuf, op);
}

/** Gather: the root's recvbuf (remoteSize blocks) gets each remote rank's sendbuf, by remote rank. */
export function gatherInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root: number, call: string): InterPlan {
  const role = interRole(c, root, call);
  noInPlace(sendbuf, call, 'sendbuf');
  if (role.kind === 'idle') return plan(async () => undefined);
  const spec = role.kind === 'root' ? recvbuf : sendbuf;
  const rb = resolveBuf(spec, call, role.kind === 'root' ? 'recvbuf' : 'sendbuf');
  if (role.kind === 'root') blocksOf(rb, c._peers.length, call, 'recvbuf');
  return plan(async (l, i, tag) => {
    const all = await interGather(l, i, tag, role.kind === 'remote' ? packedOf(rb) : null, role);
    if (all !== null) landBytes(rb, concat(all), call);
  }, spec);
}

/** Gatherv: remote rank j's sendbuf lands in block j of the root's [recvbuf, counts, displs] (remoteSize entries). */
export function gathervInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root: number, call: string): InterPlan {
  const role = interRole(c, root, call);
  noInPlace(sendbuf, call, 'sendbuf');
  if (role.kind === 'idle') return plan(async () => undefined);
  if (role.kind === 'root') {
    const recv = resolveV(recvbuf, c._peers.length, call, 'recvbuf');
    return plan(async (l, i, tag) => {
      landBlocks(recv.v, (await interGather(l, i, tag, null, role))!, call, 'recvbuf');
      unpackV(recv);
    }, (recvbuf as VBufSpec)[0]);
  }
  const send = resolveBuf(sendbuf, call, 'sendbuf');
  return plan(async (l, i, tag) => {
    await interGather(l, i, tag, packedOf(send), role);
  }, sendbuf);
}

/** Scatter: block j of the root's sendbuf (remoteSize blocks) into remote rank j's recvbuf. */
export function scatterInter(c: InterRunComm, sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root: number, call: string): InterPlan {
  const role = interRole(c, root, call);
  noInPlace(recvbuf, call, 'recvbuf');
  if (role.kind === 'idle') return plan(async () => undefined);
  const spec = role.kind === 'root' ? sendbuf : recvbuf;
  const rb = resolveBuf(spec, call, role.kind === 'root' ? 'sendbuf' : 'recvbuf');
  const n = c._peers.length;
  const bb = role.kind === 'root' ? blocksOf(rb, n, call, 'sendbuf') : 0;
  return plan(async (l, i, tag) => {
    const mine = await interScatter(l, i, tag, role.kind === 'root' ? split(packedOf(rb), n, bb) : null, role);
    if (mine !== null) landBytes(rb, mine, call);
  }, spec);
}

/** Scatterv: block j of the root's [sendbuf, counts, displs] (remoteSize entries) into remote rank j's recvbuf. */
export function scattervInter(c: InterRunComm, sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root: number, call: string): InterPlan {
  const role = interRole(c, root, call);
  noInPlace(recvbuf, call, 'recvbuf');
  if (role.kind === 'idle') return plan(async () => undefined);
  if (role.kind === 'root') {
    const send = resolveV(sendbuf, c._peers.length, call, 'sendbuf');
    return plan(async (l, i, tag) => {
      packV(send);
      await interScatter(l, i, tag, blocksOfV(send.v), role);
    }, (sendbuf as VBufSpec)[0]);
  }
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  return plan(async (l, i, tag) => landBytes(recv, (await interScatter(l, i, tag, null, role))!, call), recvbuf);
}

/** Allgather: every recvbuf (remoteSize blocks) gets each remote rank's sendbuf, by remote rank. */
export function allgatherInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const send = resolveBuf(sendbuf, call, 'sendbuf');
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  blocksOf(recv, c._peers.length, call, 'recvbuf');
  return plan(async (l, i, tag) => landBytes(recv, concat(await interAllgather(l, i, tag, packedOf(send))), call), recvbuf);
}

/** Allgatherv: remote rank j's sendbuf lands in block j of every [recvbuf, counts, displs] (remoteSize entries). */
export function allgathervInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: VBufSpec, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const send = resolveBuf(sendbuf, call, 'sendbuf');
  const recv = resolveV(recvbuf, c._peers.length, call, 'recvbuf');
  return plan(async (l, i, tag) => {
    landBlocks(recv.v, await interAllgather(l, i, tag, packedOf(send)), call, 'recvbuf');
    unpackV(recv);
  }, recvbuf[0]);
}

/** Alltoall: block j of sendbuf (remoteSize blocks) goes to remote rank j; block j of recvbuf comes from it. */
export function alltoallInter(c: InterRunComm, sendbuf: BufSpec | InPlace, recvbuf: BufSpec, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const send = resolveBuf(sendbuf, call, 'sendbuf');
  const recv = resolveBuf(recvbuf, call, 'recvbuf');
  const n = c._peers.length;
  const bb = blocksOf(send, n, call, 'sendbuf');
  blocksOf(recv, n, call, 'recvbuf');
  return plan(async (_l, i, tag) => landBytes(recv, concat(await interAlltoall(i, tag, split(packedOf(send), n, bb))), call), recvbuf);
}

/** Alltoallv: block j of [sendbuf, counts, displs] to remote rank j, block j of [recvbuf, counts, displs] from it (remoteSize entries each). */
export function alltoallvInter(c: InterRunComm, sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const n = c._peers.length;
  const send = resolveV(sendbuf, n, call, 'sendbuf');
  const recv = resolveV(recvbuf, n, call, 'recvbuf');
  return plan(async (_l, i, tag) => {
    packV(send);
    landBlocks(recv.v, await interAlltoall(i, tag, blocksOfV(send.v)), call, 'recvbuf');
    unpackV(recv);
  }, recvbuf[0]);
}

/** Alltoallw: as Alltoallv with a datatype per block and displacements in bytes ([buf, counts, byteDispls, types], one entry per remote rank). */
export function alltoallwInter(c: InterRunComm, sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec, call: string): InterPlan {
  c._me(call);
  noInPlace(sendbuf, call, 'sendbuf');
  const n = c._peers.length;
  const send = resolveW(sendbuf, n, call, 'sendbuf', 'remote rank');
  const recv = resolveW(recvbuf, n, call, 'recvbuf', 'remote rank');
  return plan(async (_l, i, tag) => {
    stageW(send);
    landBlocks(recv.v, await interAlltoall(i, tag, blocksOfV(send.v)), call, 'recvbuf');
    unstageW(recv);
  });
}
