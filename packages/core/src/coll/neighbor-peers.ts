/**
 * The per-peer neighbourhood exchange (neighbor.ts's header: NeighborAlltoall and NeighborAllgather
 * with blocks of one size, one message per distinct neighbour) as a step machine that the
 * receives' and sends' completions drive, the mechanism of the short allreduce (short-allreduce.ts,
 * docs/adr/0053): a run posts every receive and every send through the view's callback entries
 * (pt2pt.ts recvIntoThen, or recvThen, and sendThen: no promise, no closure, no async frame per
 * neighbour; recvIntoThen lands a message in the caller's buffer, as recvInto did) and reports
 * to a RunTarget once every one of them has reported. A topology's neighbours are fixed when the
 * communicator is made, so the grouping by peer is made once per plan, and a machine (its receive
 * targets, its packed send buffers) once per communicator and form (LeanNeighbor, the blocking and
 * nonblocking calls) or per persistent request (NeighborExchangePlan, …Init). A run whose messages
 * were already there finishes before run() returns: the blocking call then returns LEAN_DONE and
 * enters no blocking wait, as the lean Allreduce does.
 *
 * Errors, as the promise body this replaces gave them: ERR_TRUNCATE when a neighbour's message is
 * longer than its blocks, ERR_COUNT when several packed blocks are not `blockBytes` each, a message
 * of another collective call (the view's mismatch(), by the message's tag), a failed peer. The run
 * reports the first one once every operation of the run has reported (as the short allreduce does),
 * so nothing of a run can reach the next one and its packed buffers are free again.
 *
 * State of a run: the tag, the caller's byte views, the block size, the outstanding operations
 * (plus one while posting, so a completion during posting does not finish the run), the first
 * error, the target. Views without the callback entries (the unit tests' simulator) run through
 * recv() and send(); a view with recvThen but not recvIntoThen gets fresh bytes and copies them.
 */
import { ERR_COUNT, ERR_TRUNCATE, PROC_NULL, mpiError, rejectAtCallSite, type MPIError } from '../util/index.ts';
import { LEAN_DONE, type BlockingWait } from './lean-allreduce.ts';
import type { CollPlan, RunTarget } from './plan.ts';
import type { CollPt2pt, ReceiveIntoTarget, ReceiveTarget, SendTarget } from './pt2pt.ts';

/** Who a rank exchanges with (comm/topology.ts NeighborLists): ranks of the communicator or PROC_NULL. */
export interface NeighborPlan {
  readonly sources: readonly number[];
  readonly destinations: readonly number[];
  /** indices into destinations: the order the sends are posted in */
  readonly sendOrder: readonly number[];
}

/** One distinct neighbour and the indices of its blocks, in the order they pair up. */
interface PeerBlocks {
  readonly peer: number;
  readonly blocks: readonly number[];
  /** receive side: the blocks are i, i + 1, ... (adjacent in a buffer of equal blocks) */
  readonly adjacent: boolean;
}

/** A plan's traffic by distinct neighbour: sends in sendOrder, receives in source order. */
interface PlanPeers {
  readonly sends: readonly PeerBlocks[];
  readonly recvs: readonly PeerBlocks[];
}

/** Each plan's peers, built at its first per-peer run (a topology communicator keeps one plan). */
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
  return Array.from(groups, ([peer, blocks]) => ({ peer, blocks, adjacent: blocks.every((b, k) => b === blocks[0]! + k) }));
}

/**
 * Where one neighbour's message reports: the machine, told which neighbour (a target per peer, made
 * once). With recvIntoThen the message lands in the receive buffer itself when the peer's blocks are
 * adjacent (one block, or a periodic dimension of size 1 or 2), else in `scratch`, split from there.
 */
class PeerReceive implements ReceiveTarget, ReceiveIntoTarget {
  readonly #machine: NeighborExchange;
  readonly group: PeerBlocks;
  /** a non-adjacent group's landing area, kept for the next run (free once a run has reported) */
  scratch: Uint8Array = NO_BYTES;

  constructor(machine: NeighborExchange, group: PeerBlocks) {
    this.#machine = machine;
    this.group = group;
  }

  received(data: Uint8Array | null, tag: number, error: MPIError | null): void {
    this.#machine.receivedFrom(this, data, -1, tag, error);
  }

  receivedInto(count: number, tag: number, error: MPIError | null): void {
    this.#machine.receivedFrom(this, null, count, tag, error);
  }
}

/** The per-peer exchange of one rank on one plan and view; runs one call at a time. */
export class NeighborExchange implements SendTarget {
  readonly #pt: CollPt2pt;
  readonly #recvs: readonly PeerReceive[];
  readonly #sends: readonly PeerBlocks[];
  /** per send group of several blocks: its packed buffer, kept for the next run (free once a run has reported) */
  readonly #packs: Uint8Array[];
  #tag = 0;
  #recv: Uint8Array = NO_BYTES;
  #bb = 0;
  #call = '';
  #pending = 0;
  #error: MPIError | null = null;
  #done: RunTarget | null = null;

  constructor(pt: CollPt2pt, plan: NeighborPlan) {
    this.#pt = pt;
    const peers = peersOf(plan);
    this.#recvs = peers.recvs.map((g) => new PeerReceive(this, g));
    this.#sends = peers.sends;
    this.#packs = peers.sends.map(() => NO_BYTES);
  }

  /**
   * One exchange with `tag`: block j of the send side at j * sendStride in `send` (0: the
   * allgather's one block), block i of the receive side at i * bb in `recv`; tells `done` once,
   * possibly before run() returns. Only when the previous run has reported.
   */
  run(tag: number, send: Uint8Array, sendStride: number, recv: Uint8Array, bb: number, call: string, done: RunTarget): void {
    const pt = this.#pt;
    this.#tag = tag;
    this.#recv = recv;
    this.#bb = bb;
    this.#call = call;
    this.#error = null;
    this.#done = done;
    this.#pending = 1;
    // Every receive is posted before any send (a rendezvous send completes only once matched).
    for (const r of this.#recvs) {
      this.#pending++;
      if (pt.recvIntoThen !== undefined) pt.recvIntoThen(r.group.peer, tag, landing(r, recv, bb), r);
      else if (pt.recvThen !== undefined) pt.recvThen(r.group.peer, tag, r);
      else pt.recv(r.group.peer, tag).then((d) => r.received(d, tag, null), (e: MPIError) => r.received(null, -1, e));
    }
    const sends = this.#sends;
    for (let s = 0; s < sends.length; s++) {
      const { peer, blocks } = sends[s]!;
      const n = blocks.length;
      let data: Uint8Array;
      if (n === 1) {
        const at = blocks[0]! * sendStride;
        data = send.subarray(at, at + bb);
      } else {
        data = this.#packs[s]!;
        if (data.length !== n * bb) this.#packs[s] = data = new Uint8Array(n * bb);
        for (let k = 0; k < n; k++) {
          const at = blocks[k]! * sendStride;
          data.set(send.subarray(at, at + bb), k * bb);
        }
      }
      this.#pending++;
      if (pt.sendThen !== undefined) pt.sendThen(peer, tag, data, this);
      else pt.send(peer, tag, data).then(() => this.sent(null), (e: MPIError) => this.sent(e));
    }
    if (--this.#pending === 0) this.#finish();
  }

  /**
   * Neighbour r.group.peer's message (or its error) has come: `data` its bytes (recvThen, recv), or
   * null and `count` its length, already in landing(r) (recvIntoThen). Its blocks go to their places.
   */
  receivedFrom(r: PeerReceive, data: Uint8Array | null, count: number, tag: number, error: MPIError | null): void {
    let e = error;
    if (e === null && tag !== this.#tag && tag >= 0 && this.#pt.mismatch !== undefined) e = this.#pt.mismatch(tag, this.#tag, r.group.peer);
    if (e === null && this.#error === null) e = data !== null ? this.#place(r.group, data) : this.#landed(r, count);
    if (e !== null) this.#error ??= e;
    if (--this.#pending === 0) this.#finish();
  }

  /** A message received in place (recvIntoThen, which refuses one longer than its area): checks its length, splits a non-adjacent group's. */
  #landed(r: PeerReceive, count: number): MPIError | null {
    const bb = this.#bb;
    const { blocks, adjacent } = r.group;
    const n = blocks.length;
    if (n === 1) return null;
    if (count !== n * bb) return countMismatch(this.#call, r.group.peer, count, n, bb);
    if (!adjacent) for (let k = 0; k < n; k++) this.#recv.set(r.scratch.subarray(k * bb, (k + 1) * bb), blocks[k]! * bb);
    return null;
  }

  sent(error: MPIError | null): void {
    if (error !== null) this.#error ??= error;
    if (--this.#pending === 0) this.#finish();
  }

  /** Copies g's blocks out of its message; the error of a message that does not fit them, else null. */
  #place(g: PeerBlocks, data: Uint8Array): MPIError | null {
    const bb = this.#bb;
    const recv = this.#recv;
    const blocks = g.blocks;
    const n = blocks.length;
    const first = blocks[0]! * bb;
    if (data.length > n * bb) return mpiError(ERR_TRUNCATE, this.#call, `received ${data.length} bytes from rank ${g.peer} for ${n === 1 ? 'a block' : `${n} blocks`} of ${bb} bytes`);
    // One block may come shorter (MPI allows a shorter message); several must each be whole to be split.
    if (n === 1 || g.adjacent) {
      if (n > 1 && data.length !== n * bb) return countMismatch(this.#call, g.peer, data.length, n, bb);
      recv.set(data, first);
      return null;
    }
    if (data.length !== n * bb) return countMismatch(this.#call, g.peer, data.length, n, bb);
    for (let k = 0; k < n; k++) recv.set(data.subarray(k * bb, (k + 1) * bb), blocks[k]! * bb);
    return null;
  }

  #finish(): void {
    const error = this.#error;
    // Nothing of this run stays reachable from the machine (the caller's arrays).
    this.#recv = NO_BYTES;
    this.#error = null;
    const done = this.#done!;
    this.#done = null;
    done.finished(error);
  }
}

/** Where r's message lands: its blocks in `recv` when adjacent, else r's scratch area (grown to the run's size). */
function landing(r: PeerReceive, recv: Uint8Array, bb: number): Uint8Array {
  const { blocks, adjacent } = r.group;
  const n = blocks.length;
  if (n === 1 || adjacent) return recv.subarray(blocks[0]! * bb, (blocks[0]! + n) * bb);
  if (r.scratch.length !== n * bb) r.scratch = new Uint8Array(n * bb);
  return r.scratch;
}

function countMismatch(call: string, peer: number, got: number, n: number, bb: number): MPIError {
  return mpiError(ERR_COUNT, call, `rank ${peer} sent ${got} bytes for ${n} blocks of ${bb} bytes: the ranks called ${call} with different block sizes (every rank must pass the same count and datatype)`);
}

/** A persistent NeighborAlltoall or NeighborAllgather (…Init) on contiguous buffers: its machine and arguments, fixed at init. */
export class NeighborExchangePlan implements CollPlan {
  readonly #machine: NeighborExchange;
  readonly #tag: number;
  readonly #send: Uint8Array;
  readonly #sendStride: number;
  readonly #recv: Uint8Array;
  readonly #bb: number;
  readonly #call: string;

  /** Arguments as NeighborExchange.run's, on the request's view and tag (taken at init). */
  constructor(pt: CollPt2pt, plan: NeighborPlan, tag: number, send: Uint8Array, sendStride: number, recv: Uint8Array, bb: number, call: string) {
    this.#machine = new NeighborExchange(pt, plan);
    this.#tag = tag;
    this.#send = send;
    this.#sendStride = sendStride;
    this.#recv = recv;
    this.#bb = bb;
    this.#call = call;
  }

  start(done: RunTarget): void {
    this.#machine.run(this.#tag, this.#send, this.#sendStride, this.#recv, this.#bb, this.#call, done);
  }
}

/**
 * One call's run of a machine as the promise the API returns: LEAN_DONE (lean-allreduce.ts) when
 * the run ended before run() returned, so the blocking form need not wait, else a promise the run settles.
 * Its run/finished pair is LeanCall's (lean-allreduce.ts) written again, not shared: each class keeps
 * its own V8 feedback, so the short allreduce's path stays monomorphic whatever else runs.
 */
export class NeighborCall implements RunTarget {
  readonly #machine: NeighborExchange;
  readonly #owner: LeanNeighbor;
  readonly #key: string;
  /** A blocking call's wait (the roll-call and the poll loop), told when a run must wait; null for the I… forms. */
  readonly #wait: BlockingWait | null;
  /** inside run(): a report then is the synchronous outcome */
  #inRun = false;
  #outcome: unknown = PENDING;
  #resolve: ((v: void | PromiseLike<void>) => void) | null = null;
  #reject: ((e: unknown) => void) | null = null;
  // Bound once: a call that does wait costs its promise and no closure of ours.
  readonly #executor = (resolve: (v: void | PromiseLike<void>) => void, reject: (e: unknown) => void): void => {
    this.#resolve = resolve;
    this.#reject = reject;
  };

  constructor(owner: LeanNeighbor, key: string, pt: CollPt2pt, plan: NeighborPlan, wait: BlockingWait | null) {
    this.#owner = owner;
    this.#key = key;
    this.#machine = new NeighborExchange(pt, plan);
    this.#wait = wait;
  }

  run(tag: number, send: Uint8Array, sendStride: number, recv: Uint8Array, bb: number): Promise<void> {
    this.#inRun = true;
    this.#outcome = PENDING;
    this.#machine.run(tag, send, sendStride, recv, bb, this.#key, this);
    this.#inRun = false;
    const outcome = this.#outcome;
    if (outcome === PENDING) {
      this.#wait?.enter();
      return new Promise<void>(this.#executor);
    }
    this.#outcome = PENDING;
    this.#owner.idle(this.#key, this);
    if (outcome === null) return LEAN_DONE;
    return this.#wait !== null ? rejectAtCallSite(outcome) : Promise.reject(outcome);
  }

  finished(error: unknown): void {
    if (this.#inRun) {
      this.#outcome = error;
      return;
    }
    const resolve = this.#resolve!;
    const reject = this.#reject!;
    this.#resolve = null;
    this.#reject = null;
    this.#owner.idle(this.#key, this);
    const wait = this.#wait;
    if (wait !== null) wait.leave();
    if (error === null) resolve();
    // Made where a message completed the run: rejected at the awaiting call, its stack names the user's (as LeanCall does).
    else if (wait !== null) resolve(rejectAtCallSite(error));
    else reject(error);
  }
}

/**
 * A topology communicator's state for the neighbourhood collectives on plain typed arrays: per
 * call name (NeighborAlltoall, IneighborAllgather, ...) its point-to-point view (whose errors name
 * the call), its wait (a blocking call's roll-call and poll loop, told only when a run must wait:
 * the API puts no async frame around these calls) and a machine not running now. Calls may overlap (I… forms, calls not yet awaited):
 * each running call has a machine of its own, and one idle machine per call name is kept.
 */
export class LeanNeighbor {
  readonly #plan: NeighborPlan;
  readonly #viewOf: (call: string) => CollPt2pt;
  readonly #waitOf: (call: string) => BlockingWait | null;
  readonly #views = new Map<string, CollPt2pt>();
  readonly #waits = new Map<string, BlockingWait | null>();
  readonly #idle = new Map<string, NeighborCall>();

  /**
   * @param viewOf makes the point-to-point view of a call (once per call name)
   * @param waitOf the wait of a blocking call name (once per call name), null for a nonblocking one
   */
  constructor(plan: NeighborPlan, viewOf: (call: string) => CollPt2pt, waitOf: (call: string) => BlockingWait | null = () => null) {
    this.#plan = plan;
    this.#viewOf = viewOf;
    this.#waitOf = waitOf;
  }

  /** Whether this state was made for `plan` (a communicator's plan is remade when its rank changes). */
  serves(plan: NeighborPlan): boolean {
    return plan === this.#plan;
  }

  /** Starts one exchange as NeighborExchange.run; returns LEAN_DONE itself when it finished within the call. */
  start(call: string, tag: number, send: Uint8Array, sendStride: number, recv: Uint8Array, bb: number): Promise<void> {
    let c = this.#idle.get(call);
    if (c !== undefined) this.#idle.delete(call);
    else {
      let pt = this.#views.get(call);
      if (pt === undefined) {
        pt = this.#viewOf(call);
        this.#views.set(call, pt);
        this.#waits.set(call, this.#waitOf(call));
      }
      c = new NeighborCall(this, call, pt, this.#plan, this.#waits.get(call) ?? null);
    }
    return c.run(tag, send, sendStride, recv, bb);
  }

  /** A call's machine that has reported: kept for the next call of its name. */
  idle(call: string, c: NeighborCall): void {
    if (!this.#idle.has(call)) this.#idle.set(call, c);
  }
}

/** The outcome of a run not yet reported. */
const PENDING = Symbol('pending');

const NO_BYTES = new Uint8Array(0);
