/**
 * Intercommunicators (API.md Part 2 "Intercommunicators"; MPI 4.0 sections
 * 7.6 and 6.2.2): Comm.createIntercomm, the Intercomm class (remote group,
 * point-to-point to remote ranks, collectives between the groups, dup, split,
 * create, merge).
 *
 * Context ids (papers/context-id-allocation.txt, as MPICH's
 * MPIR_Get_intercomm_contextid): each group allocates an id over its own
 * members only, with the paper's allocator (deadlock-free with threads: a
 * creation never waits for the other group while it holds its mask), and the
 * leaders (local rank 0, or createIntercomm's local leader) swap them. An
 * intercommunicator receives on its group's id (`_ctx`, freed by the record
 * as any communicator's) and sends on the remote group's (`_sendCtx`):
 * ```
 *   suffix  traffic                                    sent on            received on
 *   0       point-to-point (remote ranks)              remote id + 0      local id + 0
 *   1       collective phases between the groups       remote id + 1      local id + 1
 *   2       phases inside the group (and allocation)   local id + 2       local id + 2
 *   3*      createIntercomm's leaders, on peerComm      peer id + 3        peer id + 3
 * ```
 * Every collective call takes the next number of the intercommunicator's
 * collective sequence (both groups call collectives in the same order, as MPI
 * requires) as its tag on suffixes 1 and 2. createGroup is intracommunicator
 * only, so suffix 2 is free for the group phases; the leaders' bootstrap uses
 * the peer communicator's unused suffix 3 with the user's tag, so it can match
 * no user message on peerComm.
 *
 * merge allocates over both groups (a PeerPt2pt over the merged order), with
 * the low group's id and leader as the priority's parent and leader (the same
 * at every member; comm/context-id-stages.ts says why the leader is needed). The merged order: the group that passed high = false first; when
 * both passed the same, the group whose leader has the lower endpoint.
 *
 * createIntercomm is api/intercomm-create.ts; what Intercomm does with the
 * other methods of Comm is api/intercomm-stubs.ts.
 *
 * Collectives: the object forms barrier/ibarrier, bcast, reduce, allreduce,
 * gather, scatter, allgather, alltoall; every buffer collective of MPI 4.0
 * that has a meaning here, in its blocking, nonblocking (I…) and persistent
 * (…Init) forms (checks and bodies in intercomm-coll.ts). Every other method
 * of Comm (scans, topologies, createGroup) throws ERR_COMM naming the call
 * (intercomm-stubs.ts). IN_PLACE is not allowed on intercommunicators (MPI).
 *
 * Its remote group and send context live in the wrapper, not in the shared
 * record: they cross threads with the wrapper's mark (revive.ts).
 */
import {
  allocateContextId, collectivePriorityTag, contextIdCollectives, CONTEXT_SUFFIX, decodeSplitEntry, encodeSplitEntry, freeContextId,
  Group as GroupLogic, GroupPt2pt, PeerPt2pt, splitRanks,
} from '../comm/index.ts';
import {
  allgatherBytes, interAllgather, interAlltoall, interBcast, interGather, interScatter, interSendToRoot, leaderSwap,
  packBlocks, reduceObjects, unpackBlocks, type InterRole,
} from '../coll/index.ts';
import { runtime } from '../runtime/index.ts';
import { ERR_ARG, ERR_COUNT, ERR_GROUP, collTag, mpiError } from '../util/index.ts';
import { inheritAttrs } from './attributes.ts';
import { describe, type BufSpec, type WBufSpec } from './buffer.ts';
import { Comm, type Creation } from './comm.ts';
import { UNDEFINED, type InPlace } from './constants.ts';
import { Group } from './group.ts';
import { Info, infoEntries } from './info.ts';
import { installIntercommStubs } from './intercomm-stubs.ts';
import {
  allgatherInter, allgathervInter, allreduceInter, alltoallInter, alltoallvInter, alltoallwInter, barrierInter, bcastInter, gatherInter,
  gathervInter, interRole, reduceInter, reduceScatterBlockInter, reduceScatterInter, scatterInter, scattervInter, type InterPlan,
} from './intercomm-coll.ts';
import type { VBufSpec } from './coll-runs.ts';
import type { Op } from './op.ts';
import { Request } from './request.ts';
import { codecOf, objectOp } from './coll-object-comm.ts';

const CTX_COLL = CONTEXT_SUFFIX.COLL;
const CTX_GROUP = CONTEXT_SUFFIX.GROUP_COLL;

/** Intercommunicator object collectives decode as the intracommunicator ones do (coll-object-comm.ts). */
const codec = codecOf('intercomm collective');

/** A context id and a list of endpoints as bytes (the leaders' swaps). */
export function encodeSide(ctx: number, endpoints: Int32Array): Uint8Array {
  const words = new Int32Array(1 + endpoints.length);
  words[0] = ctx;
  words.set(endpoints, 1);
  return new Uint8Array(words.buffer);
}
export function decodeSide(bytes: Uint8Array): { ctx: number; endpoints: Int32Array } {
  const words = new Int32Array(Uint8Array.from(bytes).buffer); // a copy: a Node Buffer (a TLS read) is a view of a larger one
  return { ctx: words[0]!, endpoints: words.slice(1) };
}

/** An intercommunicator: a local group, a remote group, and traffic between them. See API.md "Intercommunicators". */
export class Intercomm extends Comm {
  readonly #remoteRankOf: Map<number, number>;

  /** @internal */
  constructor(name: string, ctx: number, local: Int32Array, remote: Int32Array, remoteCtx: number) {
    super(name, ctx, local, false);
    this._peers = remote;
    this._sendCtx = remoteCtx;
    this.#remoteRankOf = new Map(Array.from(remote, (e, i) => [e, i] as [number, number]));
    installIntercommStubs(Intercomm, Comm);
  }

  override get isInter(): boolean {
    return true;
  }

  /** The size of the remote group (MPI_Comm_remote_size). */
  get remoteSize(): number {
    this._checkNotFreed('Intercomm.remoteSize');
    return this._peers.length;
  }

  /** The remote group (MPI_Comm_remote_group): a new Group, free it when done. */
  get remoteGroup(): Group {
    const call = 'Intercomm.remoteGroup';
    this._checkNotFreed(call);
    return Group._ofMembers(new GroupLogic(this._peers), call);
  }

  /** @internal */
  override _peersAre(): string {
    return 'remote size';
  }

  /**
   * @internal The local rank of a local endpoint; for an endpoint of the remote group, its remote
   * rank (a status's source). The groups are disjoint, so the two never clash.
   */
  override _rankOfEndpoint(endpoint: number): number {
    const r = super._rankOfEndpoint(endpoint);
    return r !== UNDEFINED ? r : (this.#remoteRankOf?.get(endpoint) ?? UNDEFINED);
  }

  // --- views and the collective sequence ----------------------------------------

  /** The local group's view (suffix 2). */
  #local(call: string): GroupPt2pt {
    return new GroupPt2pt(runtime(call).device, this._endpoints, this._me(call), this._ctx + CTX_GROUP, call);
  }
  /** The remote group's view (suffix 1): rank = the caller's local rank. */
  #inter(call: string): PeerPt2pt {
    const me = this._me(call);
    const remote = this._peers;
    return new PeerPt2pt(runtime(call).device, me, this._rankOfEndpoint(me), remote, new Int32Array(remote.length).fill(this._sendCtx + CTX_COLL), this._ctx + CTX_COLL, call);
  }
  /** Starts one collective: the next sequence number as its tag, the two views. */
  #start<T>(call: string, body: (local: GroupPt2pt, inter: PeerPt2pt, tag: number) => Promise<T>): Promise<T> {
    const local = this.#local(call);
    const inter = this.#inter(call);
    const tag = collTag(this._collSeq++, 0);
    return body(local, inter, tag);
  }

  /** The caller's part in a rooted collective (MPI 4.0 6.2.2): ROOT, PROC_NULL, or the root's rank in the remote group. */
  #role(root: number, call: string): InterRole {
    return interRole(this, root, call);
  }

  // --- object collectives -------------------------------------------------------

  /** Returns once every rank of both groups has called it. */
  override barrier(): Promise<void> {
    return this.#blocking('barrier', barrierInter());
  }
  /** Nonblocking barrier. */
  override ibarrier(): Request<void> {
    return this.#nonblocking('ibarrier', barrierInter());
  }
  /** Nonblocking barrier (buffer-form spelling). */
  override Ibarrier(): Request<void> {
    return this.#nonblocking('Ibarrier', barrierInter());
  }

  /**
   * root's value reaches every rank of the other group. root: MPI.ROOT at the root, PROC_NULL at the
   * rest of its group (they resolve undefined), the root's remote rank in the other group.
   */
  override bcast<T>(value: T, root = 0): Promise<T> {
    const call = 'bcast';
    const role = this.#role(root, call);
    return this._collBlocking(call, this.#start(call, async (l, i, tag) => {
      const got = await interBcast(l, i, tag, role.kind === 'root' ? codec.encode(value) : null, role);
      return (role.kind === 'root' ? value : role.kind === 'idle' ? undefined : codec.decode(got!)) as T;
    }));
  }

  /** The other group's values reduced, at the root (MPI.ROOT); undefined elsewhere. */
  override reduce<T>(value: T, op: Op, root = 0): Promise<T | undefined> {
    const call = 'reduce';
    const role = this.#role(root, call);
    const o = objectOp(op, call);
    return this._collBlocking(call, this.#start(call, async (l, i, tag) => {
      if (role.kind === 'root') return codec.decode(await i.recv(0, tag)) as T;
      if (role.kind === 'idle') return undefined;
      const sum = await reduceObjects(l, tag, value, o, codec, 0);
      await interSendToRoot(l, i, tag, l.rank === 0 ? codec.encode(sum) : null, role.root);
      return undefined;
    }));
  }

  /** Every rank resolves the reduction of the other group's values. */
  override allreduce<T>(value: T, op: Op): Promise<T> {
    const call = 'allreduce';
    const o = objectOp(op, call);
    return this._collBlocking(call, this.#start(call, async (l, i, tag) => {
      const sum = await reduceObjects(l, tag, value, o, codec, 0);
      return codec.decode(await leaderSwap(l, i, tag, l.rank === 0 ? codec.encode(sum) : null)) as T;
    }));
  }

  /** The root (MPI.ROOT) resolves the other group's values, by remote rank; undefined elsewhere. */
  override gather<T>(value: T, root = 0): Promise<T[] | undefined> {
    const call = 'gather';
    const role = this.#role(root, call);
    return this._collBlocking(call, this.#start(call, async (l, i, tag) => {
      const all = await interGather(l, i, tag, role.kind === 'remote' ? codec.encode(value) : null, role);
      return all === null ? undefined : (all.map((b) => codec.decode(b)) as T[]);
    }));
  }

  /** values[j] of the root (MPI.ROOT; remoteSize values) goes to remote rank j; the root's group resolves undefined. */
  override scatter<T>(values: T[] | undefined, root = 0): Promise<T> {
    const call = 'scatter';
    const role = this.#role(root, call);
    if (role.kind === 'root' && (!Array.isArray(values) || values.length !== this._peers.length)) {
      throw mpiError(ERR_ARG, call, `values is ${describe(values)}: expected an array of ${this._peers.length} values (one per remote rank) at the root`);
    }
    return this._collBlocking(call, this.#start(call, async (l, i, tag) => {
      const mine = await interScatter(l, i, tag, role.kind === 'root' ? values!.map((v) => codec.encode(v)) : null, role);
      return (mine === null ? undefined : codec.decode(mine)) as T;
    }));
  }

  /** Every rank resolves the other group's values, by remote rank. */
  override allgather<T>(value: T): Promise<T[]> {
    const call = 'allgather';
    return this._collBlocking(call, this.#start(call, async (l, i, tag) => (await interAllgather(l, i, tag, codec.encode(value))).map((b) => codec.decode(b) as T)));
  }

  /** values[j] goes to remote rank j; resolves what each remote rank sent here, by remote rank. */
  override alltoall<T>(values: T[]): Promise<T[]> {
    const call = 'alltoall';
    this._me(call);
    if (!Array.isArray(values) || values.length !== this._peers.length) {
      throw mpiError(ERR_COUNT, call, `values is ${describe(values)}: expected an array of ${this._peers.length} values (one per remote rank)`);
    }
    return this._collBlocking(call, this.#start(call, async (_l, i, tag) => (await interAlltoall(i, tag, values.map((v) => codec.encode(v)))).map((b) => codec.decode(b) as T)));
  }

  // --- buffer collectives (intercomm-coll.ts checks and runs them) ------------------

  /** The blocking form of a checked call. */
  #blocking(call: string, p: InterPlan): Promise<void> {
    return this._collBlocking(call, this.#start(call, p.run));
  }
  /** The nonblocking form: a request over the started call (references the plan's buffer and op). */
  #nonblocking(call: string, p: InterPlan): Request<void> {
    return this._collNonblocking(call, this.#start(call, p.run), p.buf, p.op);
  }
  /**
   * The persistent form (MPI 4.0 …Init): the views and the sequence number are taken here, in call
   * order as for any collective; every start() runs the plan again (as CollComm's _collPersistent).
   */
  #persistent(call: string, p: InterPlan): Request<void> {
    const local = this.#local(call);
    const inter = this.#inter(call);
    const tag = collTag(this._collSeq++, 0);
    return Request._persistentFromPromise(this, call, p.buf, () => p.run(local, inter, tag), p.op === null ? 0 : p.op._handle);
  }

  /** Persistent barrier over both groups. */
  override BarrierInit(): Request<void> {
    this._me('BarrierInit');
    return this.#persistent('BarrierInit', barrierInter());
  }

  /** The root's buf (MPI.ROOT) into every buf of the other group; PROC_NULL: not used. */
  override Bcast(buf: BufSpec, root = 0): Promise<void> {
    return this.#blocking('Bcast', bcastInter(this, buf, root, 'Bcast'));
  }
  /** Nonblocking Bcast. */
  override Ibcast(buf: BufSpec, root = 0): Request<void> {
    return this.#nonblocking('Ibcast', bcastInter(this, buf, root, 'Ibcast'));
  }
  /** Persistent Bcast. */
  override BcastInit(buf: BufSpec, root = 0): Request<void> {
    return this.#persistent('BcastInit', bcastInter(this, buf, root, 'BcastInit'));
  }

  /** The other group's sendbufs reduced into the root's recvbuf (MPI.ROOT); PROC_NULL: nothing. */
  override Reduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Promise<void> {
    return this.#blocking('Reduce', reduceInter(this, sendbuf, recvbuf, op, root, 'Reduce'));
  }
  /** Nonblocking Reduce. */
  override Ireduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Request<void> {
    return this.#nonblocking('Ireduce', reduceInter(this, sendbuf, recvbuf, op, root, 'Ireduce'));
  }
  /** Persistent Reduce. */
  override ReduceInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Request<void> {
    return this.#persistent('ReduceInit', reduceInter(this, sendbuf, recvbuf, op, root, 'ReduceInit'));
  }

  /** Every recvbuf gets the reduction of the other group's sendbufs. */
  override Allreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    return this.#blocking('Allreduce', allreduceInter(this, sendbuf, recvbuf, op, 'Allreduce'));
  }
  /** Nonblocking Allreduce. */
  override Iallreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this.#nonblocking('Iallreduce', allreduceInter(this, sendbuf, recvbuf, op, 'Iallreduce'));
  }
  /** Persistent Allreduce. */
  override AllreduceInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this.#persistent('AllreduceInit', allreduceInter(this, sendbuf, recvbuf, op, 'AllreduceInit'));
  }

  /** The other group's vectors (sum(recvcounts) items, the same count in both groups) reduced; local rank r gets recvcounts[r] items of it. */
  override ReduceScatter(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op): Promise<void> {
    return this.#blocking('ReduceScatter', reduceScatterInter(this, sendbuf, recvbuf, recvcounts, op, 'ReduceScatter'));
  }
  /** Nonblocking ReduceScatter. */
  override IreduceScatter(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op): Request<void> {
    return this.#nonblocking('IreduceScatter', reduceScatterInter(this, sendbuf, recvbuf, recvcounts, op, 'IreduceScatter'));
  }
  /** Persistent ReduceScatter. */
  override ReduceScatterInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op): Request<void> {
    return this.#persistent('ReduceScatterInit', reduceScatterInter(this, sendbuf, recvbuf, recvcounts, op, 'ReduceScatterInit'));
  }

  /** The other group's vectors (size blocks of recvbuf's size) reduced; local rank r gets block r. */
  override ReduceScatterBlock(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    return this.#blocking('ReduceScatterBlock', reduceScatterBlockInter(this, sendbuf, recvbuf, op, 'ReduceScatterBlock'));
  }
  /** Nonblocking ReduceScatterBlock. */
  override IreduceScatterBlock(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this.#nonblocking('IreduceScatterBlock', reduceScatterBlockInter(this, sendbuf, recvbuf, op, 'IreduceScatterBlock'));
  }
  /** Persistent ReduceScatterBlock. */
  override ReduceScatterBlockInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this.#persistent('ReduceScatterBlockInit', reduceScatterBlockInter(this, sendbuf, recvbuf, op, 'ReduceScatterBlockInit'));
  }

  /** The root's recvbuf (MPI.ROOT; remoteSize blocks) gets each remote rank's sendbuf, by remote rank. */
  override Gather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Promise<void> {
    return this.#blocking('Gather', gatherInter(this, sendbuf, recvbuf, root, 'Gather'));
  }
  /** Nonblocking Gather. */
  override Igather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Request<void> {
    return this.#nonblocking('Igather', gatherInter(this, sendbuf, recvbuf, root, 'Igather'));
  }
  /** Persistent Gather. */
  override GatherInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Request<void> {
    return this.#persistent('GatherInit', gatherInter(this, sendbuf, recvbuf, root, 'GatherInit'));
  }

  /** Remote rank j's sendbuf into block j of the root's [recvbuf, counts, displs] (remoteSize entries). */
  override Gatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root = 0): Promise<void> {
    return this.#blocking('Gatherv', gathervInter(this, sendbuf, recvbuf, root, 'Gatherv'));
  }
  /** Nonblocking Gatherv. */
  override Igatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root = 0): Request<void> {
    return this.#nonblocking('Igatherv', gathervInter(this, sendbuf, recvbuf, root, 'Igatherv'));
  }
  /** Persistent Gatherv. */
  override GathervInit(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root = 0): Request<void> {
    return this.#persistent('GathervInit', gathervInter(this, sendbuf, recvbuf, root, 'GathervInit'));
  }

  /** Block j of the root's sendbuf (MPI.ROOT; remoteSize blocks) into remote rank j's recvbuf. */
  override Scatter(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Promise<void> {
    return this.#blocking('Scatter', scatterInter(this, sendbuf, recvbuf, root, 'Scatter'));
  }
  /** Nonblocking Scatter. */
  override Iscatter(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this.#nonblocking('Iscatter', scatterInter(this, sendbuf, recvbuf, root, 'Iscatter'));
  }
  /** Persistent Scatter. */
  override ScatterInit(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this.#persistent('ScatterInit', scatterInter(this, sendbuf, recvbuf, root, 'ScatterInit'));
  }

  /** Block j of the root's [sendbuf, counts, displs] (remoteSize entries) into remote rank j's recvbuf. */
  override Scatterv(sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Promise<void> {
    return this.#blocking('Scatterv', scattervInter(this, sendbuf, recvbuf, root, 'Scatterv'));
  }
  /** Nonblocking Scatterv. */
  override Iscatterv(sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this.#nonblocking('Iscatterv', scattervInter(this, sendbuf, recvbuf, root, 'Iscatterv'));
  }
  /** Persistent Scatterv. */
  override ScattervInit(sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this.#persistent('ScattervInit', scattervInter(this, sendbuf, recvbuf, root, 'ScattervInit'));
  }

  /** Every recvbuf (remoteSize blocks) gets each remote rank's sendbuf, by remote rank. */
  override Allgather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Promise<void> {
    return this.#blocking('Allgather', allgatherInter(this, sendbuf, recvbuf, 'Allgather'));
  }
  /** Nonblocking Allgather. */
  override Iallgather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('Iallgather', allgatherInter(this, sendbuf, recvbuf, 'Iallgather'));
  }
  /** Persistent Allgather. */
  override AllgatherInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#persistent('AllgatherInit', allgatherInter(this, sendbuf, recvbuf, 'AllgatherInit'));
  }

  /** Remote rank j's sendbuf into block j of every [recvbuf, counts, displs] (remoteSize entries). */
  override Allgatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec): Promise<void> {
    return this.#blocking('Allgatherv', allgathervInter(this, sendbuf, recvbuf, 'Allgatherv'));
  }
  /** Nonblocking Allgatherv. */
  override Iallgatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this.#nonblocking('Iallgatherv', allgathervInter(this, sendbuf, recvbuf, 'Iallgatherv'));
  }
  /** Persistent Allgatherv. */
  override AllgathervInit(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this.#persistent('AllgathervInit', allgathervInter(this, sendbuf, recvbuf, 'AllgathervInit'));
  }

  /** Block j of sendbuf (remoteSize blocks) to remote rank j; block i of recvbuf from remote rank i. */
  override Alltoall(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Promise<void> {
    return this.#blocking('Alltoall', alltoallInter(this, sendbuf, recvbuf, 'Alltoall'));
  }
  /** Nonblocking Alltoall. */
  override Ialltoall(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('Ialltoall', alltoallInter(this, sendbuf, recvbuf, 'Ialltoall'));
  }
  /** Persistent Alltoall. */
  override AlltoallInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#persistent('AlltoallInit', alltoallInter(this, sendbuf, recvbuf, 'AlltoallInit'));
  }

  /** Alltoall with [buf, counts, displs] blocks, one per remote rank. */
  override Alltoallv(sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec): Promise<void> {
    return this.#blocking('Alltoallv', alltoallvInter(this, sendbuf, recvbuf, 'Alltoallv'));
  }
  /** Nonblocking Alltoallv. */
  override Ialltoallv(sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this.#nonblocking('Ialltoallv', alltoallvInter(this, sendbuf, recvbuf, 'Ialltoallv'));
  }
  /** Persistent Alltoallv. */
  override AlltoallvInit(sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this.#persistent('AlltoallvInit', alltoallvInter(this, sendbuf, recvbuf, 'AlltoallvInit'));
  }

  /** Alltoall with [buf, counts, byteDispls, types] blocks, one per remote rank. */
  override Alltoallw(sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec): Promise<void> {
    return this.#blocking('Alltoallw', alltoallwInter(this, sendbuf, recvbuf, 'Alltoallw'));
  }
  /** Nonblocking Alltoallw. */
  override Ialltoallw(sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec): Request<void> {
    return this.#nonblocking('Ialltoallw', alltoallwInter(this, sendbuf, recvbuf, 'Ialltoallw'));
  }
  /** Persistent Alltoallw. */
  override AlltoallwInit(sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec): Request<void> {
    return this.#persistent('AlltoallwInit', alltoallwInter(this, sendbuf, recvbuf, 'AlltoallwInit'));
  }

  // --- communicator management -------------------------------------------------------

  /**
   * A new context id over the local group, and the remote group's, swapped by the leaders: the ids
   * of a new intercommunicator between the same groups (MPIR_Get_intercomm_contextid). `extra` (the
   * local group's payload, significant at local rank 0) travels with the id.
   */
  async #allocatePair(c: Creation, local: GroupPt2pt, inter: PeerPt2pt, tag: number, priority: number, extra: Uint8Array | null): Promise<{ ctx: number; remoteCtx: number; remoteExtra: Uint8Array }> {
    const ctx = await allocateContextId(c.state, this._ctx, priority, contextIdCollectives(local, tag), c.options);
    try {
      const mine = local.rank === 0 ? packBlocks([encodeSide(ctx, new Int32Array(0)), extra ?? new Uint8Array(0)]) : null;
      const [side, remoteExtra] = unpackBlocks(await leaderSwap(local, inter, tag, mine));
      return { ctx, remoteCtx: decodeSide(side!).ctx, remoteExtra: remoteExtra! };
    } catch (e) {
      freeContextId(c.state, ctx);
      throw e;
    }
  }

  #creation(call: string): { c: Creation; local: GroupPt2pt; inter: PeerPt2pt; tag: number; priority: number } {
    const c = this._beginCreation(call);
    const local = this.#local(call);
    const inter = this.#inter(call);
    const seq = this._collSeq++;
    return { c, local, inter, tag: collTag(seq, 0), priority: collectivePriorityTag(seq) };
  }

  /** An intercommunicator between the same groups, with a new context (attributes copied, hints kept). Collective over both groups. */
  override dup(): Promise<Intercomm> {
    return this._collBlocking('Comm.dup', this.#dup('Comm.dup'));
  }
  /** Nonblocking dup. */
  override idup(): Request<Intercomm> {
    return Request._fromPromise(this.#dup('Comm.idup'), this, 'idup');
  }

  /** dup whose copy has the hints of `info` (MPI_Comm_dup_with_info). */
  override dupWithInfo(info: Info): Promise<Intercomm> {
    const call = 'Comm.dupWithInfo';
    return this._collBlocking(call, this.#dup(call, infoEntries(info, call) ?? []));
  }
  /** Nonblocking dupWithInfo. */
  override idupWithInfo(info: Info): Request<Intercomm> {
    const call = 'Comm.idupWithInfo';
    return Request._fromPromise(this.#dup(call, infoEntries(info, call) ?? []), this, 'idupWithInfo');
  }

  async #dup(call: string, hints: [string, string][] = this._hints): Promise<Intercomm> {
    const { c, local, inter, tag, priority } = this.#creation(call);
    const remote = this._peers;
    const { ctx, remoteCtx } = await this.#allocatePair(c, local, inter, tag, priority, null);
    const comm = Comm._makeWith(c, `${this.name}.dup`, ctx, this._endpoints, null, (n, x, e) => new Intercomm(n, x, e, remote, remoteCtx)) as Intercomm;
    comm._hints = hints.slice();
    inheritAttrs(this, comm);
    return comm;
  }

  /**
   * Splits both groups by color: an intercommunicator between the local and remote ranks of the same
   * color (ordered by key, ties by rank); null for color UNDEFINED, or when the color has no member
   * on the other side. Collective over both groups.
   */
  override split(color: number, key = 0): Promise<Intercomm | null> {
    const call = 'Comm.split';
    if (color !== UNDEFINED && !(Number.isInteger(color) && color >= 0 && color <= 0x7fffffff)) {
      throw mpiError(ERR_ARG, call, `color ${String(color)} is invalid: expected an integer 0..2147483647 or UNDEFINED`);
    }
    if (!Number.isInteger(key) || key < -0x80000000 || key > 0x7fffffff) {
      throw mpiError(ERR_ARG, call, `key ${describe(key)} is invalid: expected an integer -2147483648..2147483647`);
    }
    return this._collBlocking(call, this.#split(call, color === UNDEFINED ? null : String(color), key, `${this.name}.split(${color})`));
  }

  /**
   * An intercommunicator between `group` (a subgroup of the local group) and the group the remote side
   * passed; null outside `group`, or when either side's group is empty. Collective over both groups.
   */
  override create(group: Group): Promise<Intercomm | null> {
    const call = 'Comm.create';
    const g = Group._check(group, call, 'group');
    this._me(call);
    const members = g._logic.members;
    for (let r = 0; r < members.length; r++) {
      if (super._rankOfEndpoint(members[r]!) === UNDEFINED) {
        throw mpiError(ERR_GROUP, call, `group rank ${r} (endpoint ${members[r]}) is not a member of the local group of ${this.name}: the group must be a subgroup of the local group`);
      }
    }
    const myRank = g.rank;
    return this._collBlocking(call, this.#split(call, myRank === UNDEFINED ? null : 'in', myRank === UNDEFINED ? 0 : myRank, `${this.name}.create`));
  }

  async #split(call: string, color: string | null, key: number, name: string): Promise<Intercomm | null> {
    const { c, local, inter, tag, priority } = this.#creation(call);
    const localEntries = (await allgatherBytes(local, tag, encodeSplitEntry({ color, key }))).map(decodeSplitEntry);
    const payload = local.rank === 0 ? packBlocks(localEntries.map((e) => encodeSplitEntry(e))) : null;
    const { ctx, remoteCtx, remoteExtra } = await this.#allocatePair(c, local, inter, tag, priority, payload);
    const remoteEntries = unpackBlocks(remoteExtra).map(decodeSplitEntry);
    const localRanks = color === null ? [] : splitRanks(localEntries, color);
    const remoteRanks = color === null ? [] : splitRanks(remoteEntries, color);
    if (color === null || remoteRanks.length === 0) {
      freeContextId(c.state, ctx);
      return null;
    }
    const localEps = Int32Array.from(localRanks, (r) => this._endpoints[r]!);
    const remoteEps = Int32Array.from(remoteRanks, (r) => this._peers[r]!);
    return Comm._makeWith(c, name, ctx, localEps, null, (n, x, e) => new Intercomm(n, x, e, remoteEps, remoteCtx)) as Intercomm;
  }

  /**
   * An intracommunicator of both groups (MPI_Intercomm_merge): the group that passes high = false
   * comes first; when both pass the same, the group whose leader has the lower endpoint (in
   * COMM_ENDPOINTS). Every rank of a group passes the same high. Collective over both groups.
   * @example const all = await inter.merge(isUpper);
   */
  merge(high = false): Promise<Comm> {
    const call = 'Intercomm.merge';
    const c = this._beginCreation(call);
    const local = this.#local(call);
    const inter = this.#inter(call);
    // Two sequence numbers: one for the swap of `high`, one for the allocation over both groups.
    const swapTag = collTag(this._collSeq++, 0);
    const seq = this._collSeq++;
    const me = c.me;
    return this._collBlocking(call, (async () => {
      const theirs = await leaderSwap(local, inter, swapTag, new Uint8Array([high ? 1 : 0]));
      const remoteHigh = theirs[0] === 1;
      const isLow = high !== remoteHigh ? !high : this._endpoints[0]! < this._peers[0]!;
      const [first, second] = isLow ? [this._endpoints, this._peers] : [this._peers, this._endpoints];
      const merged = new Int32Array(first.length + second.length);
      merged.set(first, 0);
      merged.set(second, first.length);
      const sendCtxs = Int32Array.from(merged, (e) => (super._rankOfEndpoint(e) !== UNDEFINED ? this._ctx : this._sendCtx) + CTX_COLL);
      const myRank = merged.indexOf(me);
      const pt = new PeerPt2pt(runtime(call).device, me, myRank, merged, sendCtxs, this._ctx + CTX_COLL, call);
      const parent = isLow ? this._ctx : this._sendCtx;
      // Priority <low group's id, low group's leader, tag>: the same at every member of both groups.
      const options = { ...c.options, leader: first[0]! };
      const ctx = await allocateContextId(c.state, parent, collectivePriorityTag(seq), contextIdCollectives(pt, collTag(seq, 0)), options);
      return Comm._makeWith(c, `${this.name}.merge`, ctx, merged, null, (n, x, e) => new Comm(n, x, e, false));
    })());
  }
}
