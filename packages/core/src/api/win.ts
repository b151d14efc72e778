// Over 600 lines: one class holding the whole MPI_Win surface (creation, memory, operations, four kinds of epoch); its helpers are in win-args.ts and win-origin.ts.
/**
 * Win: one-sided communication (API.md "One-sided communication (Win)", MPI 4.0 chapter 12,
 * docs/adr/0036-one-sided.md). A window is a dup of its communicator (its own context ids, so its
 * traffic never meets user messages) plus memory every member exposes. Origin operations are
 * RMA frames the device sends (RmaTarget.send, as Device.rma); at the target, whichever thread reads the channel
 * applies them to the window's memory (device/rma-target.ts) and answers fetches, locks and
 * flushes with plain messages on the window's context, which the origin receives here with
 * ordinary receives. An operation on the caller's own rank is applied at once, in this thread.
 *
 * Completion (MPI 4.0 12.5): a Put or Accumulate copies the origin buffer before it returns
 * (the buffer is free at once) and is complete at the target after the next flush, unlock,
 * complete or fence, whose answer from the target comes after every earlier frame of this origin
 * (one channel per pair keeps them in order). Fetching operations complete when their answer is
 * in the origin buffer. Epochs are checked here: an operation outside any access epoch to its
 * target is ERR_RMA_SYNC.
 *
 * Threads (docs/adr/0042-windows-across-threads.md): any thread creates windows over its
 * endpoint; each member announces its memory on its process's window directory
 * (device/rma-directory.ts), so the threads that read the channels serve it, and an origin whose
 * target is another endpoint of its own process applies the operation itself, at once, to the
 * target's memory. Lock epochs take their lock lazily (win-passive.ts): lock + Puts + unlock is
 * one batch and one answer. Limits (to extend): target datatypes are predefined; a lock that is
 * taken is asked for again by the origin (BUSY answers), not queued at the target.
 */
import { RMA_CODE, RMA_CONTROL, RMA_LOCK_TYPE, RMA_REGION_SPAN, channelHosts, type RmaWindowRecord } from '../device/index.ts';
import {
  ERR_ARG, ERR_BUFFER, ERR_COMM, ERR_GROUP, ERR_RMA_ATTACH, ERR_RMA_SHARED, ERR_RMA_SYNC, ERR_WIN, mpiError, RankTable,
} from '../util/index.ts';
import { runtime, type ThreadRuntime } from '../runtime/index.ts';
import { describe, recvAreaOf, resolveBuf, unpackArea, type BufSpec } from './buffer.ts';
import { Comm } from './comm.ts';
import { COMM_WORLD } from './predefined-comms.ts';
import { Group } from './group.ts';
import { Info } from './info.ts';
import { Request } from './request.ts';
import { ERRORS_RETURN, type Errhandler } from './errhandler.ts';
import type { WinOrigin } from './win-origin.ts';
import type { PassiveEpochs } from './win-passive.ts';
import {
  LOCK_EXCLUSIVE, MODE_NOCHECK, MODE_NOSUCCEED, NO_OP, accOpOf, checkAssert, checkLockType, checkTargetRank, elementTargetOf, originOf, targetOf,
  checkBytes, checkCreation, settle, type WinShape,
} from './win-args.ts';
import type { Op } from './op.ts';

type Flavor = 'create' | 'allocate' | 'shared' | 'dynamic';
/**
 * The origin side (win-origin.ts), loaded by the first window's creation: a program that makes no window does not
 * load it (issue 38, start-up). A Win exists only after its creation, so its methods (the synchronous ones too) find it.
 */
let originSide: typeof import('./win-origin.ts') | null = null;
function origin(): typeof import('./win-origin.ts') {
  return originSide!;
}
/** Lock epochs at the origin (win-passive.ts), loaded with win-origin.ts. */
let passiveSide: typeof import('./win-passive.ts') | null = null;
/** Words per member in the creation's allgather: bytes, dispUnit, serial. */
const SHAPE_WORDS = 3;
type Target = [disp: number, count?: number, datatype?: import('./datatype.ts').Datatype] | undefined;


export class Win implements WinShape {
  readonly #comm: Comm;
  readonly #record: RmaWindowRecord;
  /** the origin side: frames out, answers in, what is outstanding per target (win-origin.ts) */
  readonly #o: WinOrigin;
  /** the open lock epochs' acquisition (lazy: win-passive.ts) */
  readonly #passive: PassiveEpochs;
  readonly #flavor: Flavor;
  readonly #dispUnit: number;
  readonly #me: number;
  readonly sizes: readonly number[];
  readonly dispUnits: readonly number[];
  #name = '';
  #freed = false;
  /** the open epochs */
  #fenceOpen = false;
  /** open lock epochs: rank -> lock type (a RankTable: lock and unlock allocate no hash table) */
  readonly #locks = new RankTable<number>();
  #lockAll = false;
  #access: Set<number> | null = null;
  #exposure: Request<void>[] | null = null;
  readonly #attrs = new Map<number, unknown>();
  #info = new Info();
  /** a dynamic window's attached memory by region (address = region * RMA_REGION_SPAN) */
  readonly #attached = new Map<number, Uint8Array>();
  #nextRegion = 1;
  #errhandler: Errhandler = ERRORS_RETURN;
  /** the record was announced on the process's window directory (other threads apply to it) */
  readonly #shared: boolean;

  private constructor(comm: Comm, record: RmaWindowRecord, flavor: Flavor, dispUnit: number, shape: Float64Array, shared: boolean, local: Map<number, RmaWindowRecord>) {
    this.#comm = comm;
    this.#shared = shared;
    this.#record = record;
    this.#flavor = flavor;
    this.#dispUnit = dispUnit;
    this.#me = comm.rank;
    this.#o = new (origin().WinOrigin)(comm, record, this.#me, local, () => this.name);
    this.#passive = new passiveSide!.PassiveEpochs(this.#o);
    const n = comm.size;
    this.sizes = Array.from({ length: n }, (_, r) => shape[SHAPE_WORDS * r]!);
    this.dispUnits = Array.from({ length: n }, (_, r) => shape[SHAPE_WORDS * r + 1]!);
  }

  // --- creation (collective) -----------------------------------------------------------

  /**
   * MPI_Win_create: exposes `buf` (its bytes) to every member of `comm`. Under --progress threads
   * the buffer must be backed by a SharedArrayBuffer, so the channel engines can apply to it.
   * @throws MPIError(ERR_BUFFER, ERR_DISP, ERR_COMM, ERR_WIN)
   * @example const win = await MPI.Win.create(new Int32Array(new SharedArrayBuffer(40)), 4);
   */
  static create(buf: ArrayBufferView, dispUnit = 1, comm: Comm = defaultComm(), info?: Info): Promise<Win> {
    const call = 'Win.create';
    return settle(call, () => {
      if (!ArrayBuffer.isView(buf)) throw mpiError(ERR_BUFFER, call, `buf is ${describe(buf)}: expected a typed array or DataView`);
      const memory = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      const rt = checkCreation(call, comm, dispUnit, info);
      if (!(buf.buffer instanceof SharedArrayBuffer) && sharers(rt, comm).length > 0) {
        throw mpiError(ERR_BUFFER, call, `buf is backed by an ArrayBuffer: other threads apply operations to this window (${sharers(rt, comm).join(', ')}), so it must be backed by a SharedArrayBuffer (or use MPI.Win.allocate)`);
      }
      return Win.#make(call, rt, comm, memory, 'create', dispUnit);
    });
  }

  /**
   * MPI_Win_allocate: `bytes` of new memory (a SharedArrayBuffer, zeroed), exposed to `comm`; `win.memory` is it.
   * @throws MPIError(ERR_SIZE, ERR_DISP, ERR_COMM, ERR_WIN)
   * @example const win = await MPI.Win.allocate(8 * 100, 8);
   */
  static allocate(bytes: number, dispUnit = 1, comm: Comm = defaultComm(), info?: Info): Promise<Win> {
    const call = 'Win.allocate';
    return settle(call, () => {
      checkBytes(bytes, call);
      const rt = checkCreation(call, comm, dispUnit, info);
      return Win.#make(call, rt, comm, new Uint8Array(new SharedArrayBuffer(bytes)), 'allocate', dispUnit);
    });
  }

  /**
   * MPI_Win_allocate_shared: as allocate, for members that share memory (threads on the endpoints
   * of one process, e.g. COMM_CLIQUE or a splitType(COMM_TYPE_SHARED) communicator): one
   * SharedArrayBuffer holds every member's part, rank after rank with no gap (MPI's contiguous
   * default); `sharedQuery(rank)` gives rank's part. Across processes it is ERR_RMA_SHARED.
   * @throws MPIError(ERR_RMA_SHARED) when a member is in another process
   */
  static allocateShared(bytes: number, dispUnit = 1, comm: Comm = defaultComm(), info?: Info): Promise<Win> {
    const call = 'Win.allocateShared';
    return settle(call, () => {
      checkBytes(bytes, call);
      if (!(comm instanceof Comm)) throw mpiError(ERR_COMM, call, `comm is ${describe(comm)}: expected an MPI.Comm`);
      const dev = runtime(call).device;
      for (let r = 0; r < comm.size; r++) {
        const e = comm._endpoints[r]!;
        if (!dev.isLocal(e)) throw mpiError(ERR_RMA_SHARED, call, `rank ${r} of ${comm.name} runs in process ${dev.processOf(e)}, not this one (${dev.opts.process}): shared windows need every member in one process`);
      }
      const rt = checkCreation(call, comm, dispUnit, info);
      return Win.#make(call, rt, comm, bytes, 'shared', dispUnit);
    });
  }

  /**
   * MPI_Win_create_dynamic: a window with no memory yet; members attach and detach memory later
   * (attach returns the address origins use as the target displacement, with dispUnit 1).
   * @example const win = await MPI.Win.createDynamic(); const addr = win.attach(new Float64Array(new SharedArrayBuffer(80)));
   */
  static createDynamic(comm: Comm = defaultComm(), info?: Info): Promise<Win> {
    const call = 'Win.createDynamic';
    return settle(call, () => Win.#make(call, checkCreation(call, comm, 1, info), comm, new Uint8Array(new SharedArrayBuffer(0)), 'dynamic', 1));
  }

  /** `memory`: the member's memory, or (allocateShared) its bytes in the one buffer rank 0 makes. */
  static async #make(call: string, rt: ThreadRuntime, comm: Comm, memoryOrBytes: Uint8Array | number, flavor: Flavor, dispUnit: number): Promise<Win> {
    originSide ??= await import('./win-origin.ts');
    passiveSide ??= await import('./win-passive.ts');
    const winComm = await comm.dup();
    winComm.name = `window of ${comm.name}`;
    const dynamic = flavor === 'dynamic';
    const dev = rt.device;
    const dir = dev.rma.directory;
    const me = winComm._endpoints[winComm.rank]!;
    // Every member's size, unit and creation serial (its record's, rma-directory.ts whenKnown), for the origins' range checks.
    // A dynamic window's size is unbounded here: its target checks the attached region.
    const shape = new Float64Array(SHAPE_WORDS * winComm.size);
    const serial = Math.floor(Math.random() * 2 ** 52);
    const mine = new Float64Array([dynamic ? Infinity : typeof memoryOrBytes === 'number' ? memoryOrBytes : memoryOrBytes.byteLength, dispUnit, serial]);
    let memory: Uint8Array;
    if (typeof memoryOrBytes !== 'number') {
      memory = memoryOrBytes;
    } else {
      const bytes = memoryOrBytes;
      // allocateShared: rank 0 makes the one buffer, the others find it in rank 0's announced record.
      await winComm.Allgather(mine, shape);
      let offset = 0;
      for (let r = 0; r < winComm.rank; r++) offset += shape[SHAPE_WORDS * r]!;
      if (winComm.rank === 0) {
        let total = 0;
        for (let r = 0; r < winComm.size; r++) total += shape[SHAPE_WORDS * r]!;
        memory = new Uint8Array(new SharedArrayBuffer(total), 0, bytes);
      } else {
        const first = await dir!.whenKnown(winComm._ctx, winComm._endpoints[0]!, shape[2]!);
        memory = new Uint8Array(first.memory.buffer, offset, bytes);
      }
    }
    const record: RmaWindowRecord = {
      contextId: winComm._ctx, endpoint: me, serial, memory, control: new Int32Array(new SharedArrayBuffer(4 * RMA_CONTROL.WORDS)),
      ...(dynamic ? { regions: new Map<number, Uint8Array>() } : {}),
    };
    dev.rma.register(record);
    // Memory of this thread alone (create over an ArrayBuffer: no other thread applies, see create) is not announced.
    const shared = dir !== null && memory.buffer instanceof SharedArrayBuffer;
    if (shared) await dir.publish(record, hostsOf(rt));
    // After this collective every member serves the window; then this thread waits for its process's other members' memory.
    if (flavor === 'shared') await winComm.barrier();
    else await winComm.Allgather(mine, shape);
    const local = new Map<number, RmaWindowRecord>();
    await Promise.all(Array.from(winComm._endpoints, async (e, r) => {
      if (e !== me && dev.isLocal(e)) local.set(r, await dir!.whenKnown(winComm._ctx, e, shape[SHAPE_WORDS * r + 2]!));
    }));
    void call;
    return new Win(winComm, record, flavor, dispUnit, shape, shared, local);
  }

  /**
   * MPI_Win_free (collective): waits for the other members (every operation on the window is then
   * complete), and stops serving the window.
   * @throws MPIError(ERR_RMA_SYNC) when a lock, lockAll, start or post epoch is still open
   */
  async free(): Promise<void> {
    const call = 'Win.free';
    this.#live(call);
    if (this.#locks.size > 0 || this.#lockAll || this.#access !== null || this.#exposure !== null) {
      throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} still has an open ${this.#lockAll ? 'lockAll' : this.#locks.size > 0 ? `lock on rank ${this.#locks.keys()[0]}` : this.#access !== null ? 'start' : 'post'} epoch: close it first`);
    }
    this.#freed = true;
    await this.#o.completeAll();
    await this.#comm.barrier();
    const rt = runtime(call);
    const r = this.#record;
    rt.device.rma.unregister(r.contextId, r.endpoint);
    if (this.#shared) await rt.device.rma.directory!.withdraw(r, hostsOf(rt));
    this.#comm.free();
  }

  // --- properties ----------------------------------------------------------------------

  /** The local window's memory (create: the buffer's bytes; allocate, allocateShared: the new memory). */
  get memory(): Uint8Array {
    this.#live('Win.memory');
    return this.#record.memory;
  }

  /** The window's group (its communicator's). */
  get group(): Group {
    this.#live('Win.group');
    return this.#comm.group;
  }

  get size(): number {
    return this.#comm.size;
  }

  get name(): string {
    return this.#name === '' ? `(${this.#comm.name})` : this.#name;
  }
  set name(v: string) {
    this.#name = String(v);
  }

  /**
   * MPI_Win_shared_query: rank's part of a shared window and its displacement unit.
   * @throws MPIError(ERR_WIN) for a window not made by allocateShared; ERR_RANK for a bad rank
   */
  sharedQuery(rank: number): [view: Uint8Array, dispUnit: number] {
    const call = 'Win.sharedQuery';
    this.#live(call);
    if (this.#flavor !== 'shared') throw mpiError(ERR_WIN, call, `window ${this.name} was not made by MPI.Win.allocateShared`);
    checkTargetRank(rank, this, call);
    if (rank === this.#me) return [this.#record.memory, this.#dispUnit];
    // One buffer holds every member's part, rank after rank (#make): a view over this thread's own handle of it.
    let offset = 0;
    for (let r = 0; r < rank; r++) offset += this.sizes[r]!;
    return [new Uint8Array(this.#record.memory.buffer, offset, this.sizes[rank]!), this.dispUnits[rank]!];
  }

  /**
   * MPI_Win_attach: exposes `buf` in this dynamic window; returns its address (the target
   * displacement of its first byte). Under --progress threads it must be backed by a SharedArrayBuffer.
   * @throws MPIError(ERR_WIN) on a window not made by createDynamic; ERR_RMA_ATTACH for a buffer that cannot be attached
   */
  attach(buf: ArrayBufferView): number {
    const call = 'Win.attach';
    const rt = this.#dynamicCall(call);
    if (!ArrayBuffer.isView(buf)) throw mpiError(ERR_RMA_ATTACH, call, `buf is ${describe(buf)}: expected a typed array or DataView`);
    if (this.#shared && !(buf.buffer instanceof SharedArrayBuffer)) {
      throw mpiError(ERR_RMA_ATTACH, call, `buf is backed by an ArrayBuffer: other threads apply operations to this window (${sharers(rt, this.#comm).join(', ')}), so it must be backed by a SharedArrayBuffer`);
    }
    if (buf.byteLength > RMA_REGION_SPAN) throw mpiError(ERR_RMA_ATTACH, call, `buf has ${buf.byteLength} bytes: at most ${RMA_REGION_SPAN} may be attached at once`);
    const mem = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    for (const m of this.#attached.values()) {
      if (m.buffer === mem.buffer && m.byteOffset < mem.byteOffset + mem.byteLength && mem.byteOffset < m.byteOffset + m.byteLength) {
        throw mpiError(ERR_RMA_ATTACH, call, 'buf overlaps memory already attached to this window');
      }
    }
    const region = this.#nextRegion++;
    this.#attached.set(region, mem);
    this.#tellRegion(rt, region, mem);
    return region * RMA_REGION_SPAN;
  }

  /**
   * MPI_Win_detach: stops exposing `buf` (the view given to attach, or one over the same bytes).
   * @throws MPIError(ERR_RMA_ATTACH) when buf is not attached
   */
  detach(buf: ArrayBufferView): void {
    const call = 'Win.detach';
    const rt = this.#dynamicCall(call);
    if (!ArrayBuffer.isView(buf)) throw mpiError(ERR_RMA_ATTACH, call, `buf is ${describe(buf)}: expected a typed array or DataView`);
    for (const [region, m] of this.#attached) {
      if (m.buffer === buf.buffer && m.byteOffset === buf.byteOffset && m.byteLength === buf.byteLength) {
        this.#attached.delete(region);
        this.#tellRegion(rt, region, null);
        return;
      }
    }
    throw mpiError(ERR_RMA_ATTACH, call, `buf (${buf.byteLength} bytes) is not attached to window ${this.name}`);
  }

  #dynamicCall(call: string): ThreadRuntime {
    this.#live(call);
    if (this.#flavor !== 'dynamic') throw mpiError(ERR_WIN, call, `window ${this.name} was not made by MPI.Win.createDynamic`);
    return runtime(call);
  }

  /** Counts the attach or detach in the window's shared SEQ word first, then applies it here and tells the engines (RmaTarget.attach). */
  #tellRegion(rt: ThreadRuntime, region: number, mem: Uint8Array | null): void {
    const r = this.#record;
    const seq = Atomics.add(r.control, RMA_CONTROL.SEQ, 1) + 1;
    rt.device.rma.attach(r.contextId, r.endpoint, region, mem, seq);
    if (this.#shared) rt.device.rma.directory!.attach(r.contextId, r.endpoint, region, mem, seq);
  }

  setAttr(keyval: number, value: unknown): void {
    this.#live('Win.setAttr');
    this.#attrs.set(keyval, value);
  }
  getAttr(keyval: number): unknown | undefined {
    this.#live('Win.getAttr');
    return this.#attrs.get(keyval);
  }
  setErrhandler(h: Errhandler): void {
    this.#live('Win.setErrhandler');
    this.#errhandler = h;
  }
  getErrhandler(): Errhandler {
    return this.#errhandler;
  }
  setInfo(info: Info): void {
    this.#live('Win.setInfo');
    if (!(info instanceof Info)) throw mpiError(ERR_ARG, 'Win.setInfo', `info is ${describe(info)}: expected an MPI.Info`);
    this.#info = info.dup();
  }
  getInfo(): Info {
    this.#live('Win.getInfo');
    return this.#info.dup();
  }

  // --- communication -------------------------------------------------------------------

  /**
   * MPI_Put: origin's items to `target` ([disp, count?, datatype?]) of rank `targetRank`'s window.
   * The origin buffer may be reused at once; the data is at the target after the next
   * flush, unlock, complete or fence.
   * @throws MPIError(ERR_RMA_SYNC) outside an access epoch to targetRank; ERR_RMA_RANGE past its window
   * @example win.Put(new Int32Array([1, 2]), 1, [4]);
   */
  Put(origin: BufSpec, targetRank: number, target?: Target): void {
    this.#put('Win.Put', origin, targetRank, target);
  }

  /** MPI_Get: `target` of rank `targetRank`'s window into origin (there after the next flush, unlock, complete or fence). */
  Get(origin: BufSpec, targetRank: number, target?: Target): void {
    this.#get('Win.Get', origin, targetRank, target, true);
  }

  /** MPI_Accumulate: target = origin op target, atomically per element (op: a predefined op, REPLACE or NO_OP). */
  Accumulate(origin: BufSpec, targetRank: number, target: Target, op: Op): void {
    this.#accumulate('Win.Accumulate', origin, targetRank, target, op);
  }

  /** MPI_Get_accumulate: result = target, then target = origin op target, as one atomic step per element. */
  GetAccumulate(origin: BufSpec | null, result: BufSpec, targetRank: number, target: Target, op: Op): void {
    this.#getAccumulate('Win.GetAccumulate', origin, result, targetRank, target, op, true);
  }

  /** MPI_Fetch_and_op: one element: result = target[disp], then target[disp] = origin op target[disp]. */
  FetchAndOp(origin: BufSpec | null, result: BufSpec, targetRank: number, disp: number, op: Op): void {
    const call = 'Win.FetchAndOp';
    this.#live(call);
    checkTargetRank(targetRank, this, call);
    const rb = resolveBuf(result, call, 'result');
    const t = elementTargetOf(disp, targetRank, rb.datatype, this, call);
    this.#getAccumulate(call, origin, result, targetRank, [disp, 1, t.datatype], op, true);
  }

  /** MPI_Compare_and_swap: one element: result = target[disp]; if it equals compare, target[disp] = origin. */
  CompareAndSwap(origin: BufSpec, compare: BufSpec, result: BufSpec, targetRank: number, disp: number): void {
    const call = 'Win.CompareAndSwap';
    this.#live(call);
    checkTargetRank(targetRank, this, call);
    const res = resolveBuf(result, call, 'result');
    const t = elementTargetOf(disp, targetRank, res.datatype, this, call);
    const o = originOf(origin, call, 'origin').bytes;
    const c = originOf(compare, call, 'compare').bytes;
    if (o.length !== t.bytes || c.length !== t.bytes) {
      throw mpiError(ERR_BUFFER, call, `origin (${o.length} bytes) and compare (${c.length} bytes) must each be one ${t.datatype.name} (${t.bytes} bytes)`);
    }
    this.#checkAccess(targetRank, call);
    const data = new Uint8Array(2 * t.bytes);
    data.set(o, 0);
    data.set(c, t.bytes);
    const area = recvAreaOf(res);
    const fetched = this.#passive.fetch(call, targetRank, (flags) => this.#o.fetch(call, targetRank, RMA_CODE.CAS, t.elem, 0, t.byteDisp, data, area.subarray(0, t.bytes), flags), data.length, true);
    this.#o.track(targetRank, fetched.then(() => unpackArea(res, area)));
  }

  /** MPI_Rput: Put as a request, inside a lock or lockAll epoch; complete once the origin buffer is free (at once). */
  Rput(origin: BufSpec, targetRank: number, target?: Target): Request<void> {
    const call = 'Win.Rput';
    this.#checkPassive(targetRank, call);
    this.#put(call, origin, targetRank, target);
    return Request._fromPromise(Promise.resolve(), this.#comm, call);
  }

  /** MPI_Rget: Get as a request, inside a lock or lockAll epoch; complete once the data is in origin. */
  Rget(origin: BufSpec, targetRank: number, target?: Target): Request<void> {
    const call = 'Win.Rget';
    this.#checkPassive(targetRank, call);
    return Request._fromPromise(this.#get(call, origin, targetRank, target, false), this.#comm, call);
  }

  /** MPI_Raccumulate: Accumulate as a request, inside a lock or lockAll epoch. */
  Raccumulate(origin: BufSpec, targetRank: number, target: Target, op: Op): Request<void> {
    const call = 'Win.Raccumulate';
    this.#checkPassive(targetRank, call);
    this.#accumulate(call, origin, targetRank, target, op);
    return Request._fromPromise(Promise.resolve(), this.#comm, call);
  }

  /** MPI_Rget_accumulate: GetAccumulate as a request, inside a lock or lockAll epoch; complete once result holds the values. */
  RgetAccumulate(origin: BufSpec | null, result: BufSpec, targetRank: number, target: Target, op: Op): Request<void> {
    const call = 'Win.RgetAccumulate';
    this.#checkPassive(targetRank, call);
    return Request._fromPromise(this.#getAccumulate(call, origin, result, targetRank, target, op, false), this.#comm, call);
  }

  #put(call: string, origin: BufSpec, rank: number, target: Target): void {
    this.#live(call);
    checkTargetRank(rank, this, call);
    const o = originOf(origin, call, 'origin');
    const t = targetOf(target, rank, o.bytes.length, o.rb.datatype, this, call);
    this.#checkAccess(rank, call);
    this.#passive.put(call, rank, RMA_CODE.PUT, t, 0, o.bytes);
  }

  /** `deferrable`: complete at the next flush or unlock (Get), not awaited as a request (Rget); win-passive.ts may send it with the epoch's batch. */
  #get(call: string, origin: BufSpec, rank: number, target: Target, deferrable: boolean): Promise<void> {
    this.#live(call);
    checkTargetRank(rank, this, call);
    const rb = resolveBuf(origin, call, 'origin');
    const t = targetOf(target, rank, rb.packedBytes, rb.datatype, this, call);
    this.#checkAccess(rank, call);
    const area = recvAreaOf(rb);
    const fetched = this.#passive.fetch(call, rank, (flags) => this.#o.fetch(call, rank, RMA_CODE.GET, t.elem, 0, t.byteDisp, null, area.subarray(0, t.bytes), flags), 0, deferrable);
    return this.#o.track(rank, fetched.then(() => unpackArea(rb, area)));
  }

  #accumulate(call: string, origin: BufSpec, rank: number, target: Target, op: Op): void {
    this.#live(call);
    checkTargetRank(rank, this, call);
    const o = originOf(origin, call, 'origin');
    const t = targetOf(target, rank, o.bytes.length, o.rb.datatype, this, call);
    const code = accOpOf(op, t.elem, call);
    this.#checkAccess(rank, call);
    this.#passive.put(call, rank, RMA_CODE.ACC, t, code, o.bytes);
  }

  /** `deferrable`: as #get's. */
  #getAccumulate(call: string, origin: BufSpec | null, result: BufSpec, rank: number, target: Target, op: Op, deferrable: boolean): Promise<void> {
    this.#live(call);
    checkTargetRank(rank, this, call);
    const res = resolveBuf(result, call, 'result');
    const t = targetOf(target, rank, res.packedBytes, res.datatype, this, call);
    const code = accOpOf(op, t.elem, call);
    let data: Uint8Array | null = null;
    if (op !== NO_OP) {
      data = originOf(origin, call, 'origin').bytes;
      if (data.length !== t.bytes) throw mpiError(ERR_BUFFER, call, `origin holds ${data.length} bytes but result and target ${t.bytes}: they must match`);
    }
    this.#checkAccess(rank, call);
    const area = recvAreaOf(res);
    const fetched = data === null ? null : data.slice();
    const answered = this.#passive.fetch(call, rank, (flags) => this.#o.fetch(call, rank, RMA_CODE.GET_ACC, t.elem, code, t.byteDisp, fetched, area.subarray(0, t.bytes), flags), fetched?.length ?? 0, deferrable);
    return this.#o.track(rank, answered.then(() => unpackArea(res, area)));
  }

  // --- synchronization -----------------------------------------------------------------

  /**
   * MPI_Win_fence (collective): completes every operation of the epoch that ends, at origin and
   * target, and opens the next (none after MODE_NOSUCCEED).
   * @throws MPIError(ERR_RMA_SYNC) inside a lock or PSCW epoch
   */
  async fence(assert = 0): Promise<void> {
    const call = 'Win.fence';
    this.#live(call);
    checkAssert(assert, call);
    if (this.#locks.size > 0 || this.#lockAll || this.#access !== null || this.#exposure !== null) {
      throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} is inside a lock or post/start epoch: close it before fence`);
    }
    if (this.size === 2) {
      // One exchange of notices, ordered behind each side's operations (WinOrigin.noticeExchange).
      await this.#o.noticeExchange(call);
    } else {
      // A third member may observe a target's memory as soon as it leaves: every target must have
      // applied its epoch (a FLUSH round trip per target written) before anyone leaves the barrier.
      await this.#o.completeAll();
      await this.#comm.barrier();
    }
    this.#fenceOpen = (assert & MODE_NOSUCCEED) === 0;
  }

  /**
   * MPI_Win_lock: starts a passive-target access epoch to `rank` (the target's user thread need not call MPI).
   * @throws MPIError(ERR_LOCKTYPE) for a bad type; ERR_RMA_SYNC when rank is already locked by this origin
   * @example await win.lock(1); win.Put(buf, 1); await win.unlock(1);
   */
  async lock(rank: number, type = LOCK_EXCLUSIVE, assert = 0): Promise<void> {
    const call = 'Win.lock';
    this.#live(call);
    checkTargetRank(rank, this, call);
    checkLockType(type, call);
    checkAssert(assert, call);
    if (this.#locks.has(rank) || this.#lockAll) throw mpiError(ERR_RMA_SYNC, call, `rank ${rank} of window ${this.name} is already locked by this process${this.#lockAll ? ' (lockAll)' : ''}`);
    const lt = type === LOCK_EXCLUSIVE ? RMA_LOCK_TYPE.EXCLUSIVE : RMA_LOCK_TYPE.SHARED;
    this.#locks.set(rank, lt);
    try {
      // A lazy lock is open at once: no await, so lock costs no extra turn of the microtask queue.
      const held = this.#passive.open(call, rank, lt, (assert & MODE_NOCHECK) !== 0);
      if (held !== null) await held;
    } catch (e) {
      this.#locks.delete(rank);
      throw e;
    }
  }

  /**
   * MPI_Win_unlock: completes every operation to `rank` at origin and target, and releases the lock.
   * @throws MPIError(ERR_RMA_SYNC) when rank is not locked by this origin
   */
  async unlock(rank: number): Promise<void> {
    const call = 'Win.unlock';
    this.#live(call);
    checkTargetRank(rank, this, call);
    if (!this.#locks.has(rank)) throw mpiError(ERR_RMA_SYNC, call, `rank ${rank} of window ${this.name} is not locked by this process`);
    try {
      await this.#passive.close(call, rank);
    } finally {
      this.#locks.delete(rank);
    }
  }

  /** MPI_Win_lock_all: a shared lock on every member. */
  async lockAll(assert = 0): Promise<void> {
    const call = 'Win.lockAll';
    this.#live(call);
    checkAssert(assert, call);
    if (this.#lockAll || this.#locks.size > 0) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} already has a lock epoch open by this process`);
    this.#lockAll = true;
    try {
      const nocheck = (assert & MODE_NOCHECK) !== 0;
      await Promise.all(Array.from({ length: this.size }, (_, r) => this.#passive.open(call, r, RMA_LOCK_TYPE.SHARED, nocheck)));
    } catch (e) {
      this.#lockAll = false;
      throw e;
    }
  }

  /** MPI_Win_unlock_all: completes every operation and releases lockAll's locks. */
  async unlockAll(): Promise<void> {
    const call = 'Win.unlockAll';
    this.#live(call);
    if (!this.#lockAll) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} has no lockAll epoch open by this process`);
    try {
      await Promise.all(Array.from({ length: this.size }, (_, r) => this.#passive.close(call, r)));
    } finally {
      this.#lockAll = false;
    }
  }

  /** MPI_Win_flush: every operation to `rank` so far is complete at origin and target. */
  async flush(rank: number): Promise<void> {
    const call = 'Win.flush';
    this.#checkPassive(rank, call);
    await this.#passive.ready(call, rank);
    await this.#o.complete(call, rank);
  }

  /** MPI_Win_flush_all: flush to every member. */
  async flushAll(): Promise<void> {
    const call = 'Win.flushAll';
    this.#live(call);
    if (!this.#lockAll && this.#locks.size === 0) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} has no lock epoch open by this process`);
    await this.#passive.readyAll(call);
    await this.#o.completeAll();
  }

  /** MPI_Win_flush_local: every operation to `rank` is complete at the origin (its buffers may be reused, fetched data is in). */
  async flushLocal(rank: number): Promise<void> {
    const call = 'Win.flushLocal';
    this.#checkPassive(rank, call);
    // A Get held back for a lazy epoch's batch is sent with it now (a flush: more than local completion needs, never less).
    if (this.#passive.holdsFetch(rank)) await this.#passive.ready(call, rank);
    await this.#o.awaitFetches(rank);
  }

  /** MPI_Win_flush_local_all: flushLocal to every member. */
  async flushLocalAll(): Promise<void> {
    const call = 'Win.flushLocalAll';
    this.#live(call);
    if (!this.#lockAll && this.#locks.size === 0) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} has no lock epoch open by this process`);
    await this.#passive.readyFetches(call);
    await this.#o.awaitAllFetches();
  }

  /**
   * MPI_Win_sync: makes this thread's loads and stores to `win.memory` and the operations applied
   * to it by other threads agree. JavaScript's memory model orders them already at the
   * synchronization this returns through, so nothing is left to do.
   */
  sync(): void {
    this.#live('Win.sync');
  }

  /** MPI_Win_post: exposes the window to the members of `group` until wait (or a true test). */
  async post(group: Group, assert = 0): Promise<void> {
    const call = 'Win.post';
    this.#live(call);
    checkAssert(assert, call);
    if (this.#exposure !== null) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} already has a post epoch open: wait for it first`);
    const ranks = this.#ranksOf(group, call);
    this.#exposure = ranks.map((r) => this.#comm.Irecv(new Uint8Array(1), r, origin().TAG_DONE));
    await Promise.all(ranks.map((r) => this.#comm.Isend(new Uint8Array(1), r, origin().TAG_POST).wait()));
  }

  /** MPI_Win_start: an access epoch to the members of `group`, once each has posted. */
  async start(group: Group, assert = 0): Promise<void> {
    const call = 'Win.start';
    this.#live(call);
    checkAssert(assert, call);
    if (this.#access !== null) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} already has a start epoch open: complete it first`);
    const ranks = this.#ranksOf(group, call);
    await Promise.all(ranks.map((r) => this.#comm.Irecv(new Uint8Array(1), r, origin().TAG_POST).wait()));
    this.#access = new Set(ranks);
  }

  /** MPI_Win_complete: ends the start epoch; every operation is complete at its target before the targets' wait returns. */
  async complete(): Promise<void> {
    const call = 'Win.complete';
    this.#live(call);
    const access = this.#access;
    if (access === null) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} has no start epoch open`);
    try {
      await Promise.all([...access].map((r) => this.#o.complete(call, r)));
      await Promise.all([...access].map((r) => this.#comm.Isend(new Uint8Array(1), r, origin().TAG_DONE).wait()));
    } finally {
      this.#access = null;
    }
  }

  /** MPI_Win_wait: ends the post epoch once every origin of the group has completed. */
  async wait(): Promise<void> {
    const call = 'Win.wait';
    this.#live(call);
    const exposure = this.#exposure;
    if (exposure === null) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} has no post epoch open`);
    try {
      await Promise.all(exposure.map((r) => r.wait()));
    } finally {
      this.#exposure = null;
    }
  }

  /** MPI_Win_test: wait without blocking; true (and the post epoch ended) once every origin has completed. */
  test(): boolean {
    const call = 'Win.test';
    this.#live(call);
    const exposure = this.#exposure;
    if (exposure === null) throw mpiError(ERR_RMA_SYNC, call, `window ${this.name} has no post epoch open`);
    if (!Request.testall(exposure)) return false;
    this.#exposure = null;
    return true;
  }

  // --- helpers -------------------------------------------------------------------------

  #ranksOf(group: unknown, call: string): number[] {
    if (!(group instanceof Group)) throw mpiError(ERR_GROUP, call, `group is ${describe(group)}: expected an MPI.Group`);
    const ranks = group.translateRanks(Array.from({ length: group.size }, (_, i) => i), this.#comm.group);
    const bad = ranks.findIndex((r) => r < 0);
    if (bad >= 0) throw mpiError(ERR_GROUP, call, `member ${bad} of group is not a member of window ${this.name}`);
    return ranks;
  }

  #checkAccess(rank: number, call: string): void {
    if (this.#fenceOpen || this.#lockAll || this.#locks.has(rank) || this.#access?.has(rank) === true) return;
    throw mpiError(ERR_RMA_SYNC, call, `no access epoch to rank ${rank} of window ${this.name} is open: call fence, lock(${rank}), lockAll or start first`);
  }

  #checkPassive(rank: number, call: string): void {
    this.#live(call);
    checkTargetRank(rank, this, call);
    if (!this.#lockAll && !this.#locks.has(rank)) throw mpiError(ERR_RMA_SYNC, call, `no lock epoch to rank ${rank} of window ${this.name} is open: call lock(${rank}) or lockAll first`);
  }

  #live(call: string): void {
    if (this.#freed) throw mpiError(ERR_WIN, call, `window ${this.name} has been freed`);
  }
}

function defaultComm(): Comm {
  return COMM_WORLD;
}

/** The threads that read this process's channels and apply remote origins' operations (device/rma-directory.ts channelHosts). */
function hostsOf(rt: ThreadRuntime): string[] {
  const o = rt.device.opts;
  return channelHosts(o.processCount, rt.progress !== 'inline', o.channels);
}

/** Who else than the calling thread applies operations to its window over `comm`: the channels' hosts, other members in this process. */
function sharers(rt: ThreadRuntime, comm: Comm): string[] {
  const me = rt.device.opts.threadId;
  const hosts = hostsOf(rt).filter((h) => h !== `thread:${me}`);
  const dev = rt.device;
  const mine = comm._endpoints[comm.rank];
  const others = Array.from(comm._endpoints).filter((e) => e !== mine && dev.isLocal(e));
  return [...hosts.map((h) => h.replace(':', ' ')), ...(others.length > 0 ? [`members on endpoints ${others.join(', ')} of this process`] : [])];
}
