/**
 * Partitioned point-to-point communication (MPI 4.0 chapter 4; API.md "More point-to-point"):
 * comm.PsendInit / comm.PrecvInit make a PartitionedRequest, a persistent request whose buffer is
 * split evenly into `partitions` parts. After start(), the sender marks parts ready (pready,
 * preadyRange, preadyList) from any thread of its process, each part travels as soon as it is
 * ready, and the receiver can ask whether a part has arrived (parrived) before the whole request
 * completes.
 *
 * How: one message per part, [u32 part index][the part's bytes], sent by the thread that started
 * the request, on the communicator's context suffix INTERCOMM_BOOT with tag PARTITIONED_TAG_BASE +
 * tag (createIntercomm's bootstrap uses that suffix with tags up to TAG_UB only, and receives by exact
 * tag, so the two never meet; no user receive, ANY_TAG included, looks at that context). The
 * receiver posts one receive per part at start() and copies each part into place by its index;
 * parts of one start never meet another start's receives, as a start posts all of them and the
 * request completes only when all are in.
 *
 * Threads: the ready and arrived marks live in shared memory (an Int32Array over a
 * SharedArrayBuffer), so a request passed to an MPI.Worker (MPI.dehydrate / revive, or the Worker's
 * workerData) is there a view that can call pready and parrived; start, wait and free stay with the
 * thread that made it. A part another thread marks ready is sent by the owner's event loop, which
 * waits on the ready count (Atomics.waitAsync). For other threads to fill the parts, the buffer must
 * be over a SharedArrayBuffer.
 */
import { DevRequest, REQ_KIND } from '../device/index.ts';
import { CONTEXT_SUFFIX, ERR_ARG, ERR_BUFFER, ERR_COUNT, ERR_RANK, ERR_TAG, mpiError, waitAsync } from '../util/index.ts';
import { ANY_SOURCE, ANY_TAG, PROC_NULL } from './constants.ts';
import { describe } from './buffer.ts';
import { Request } from './request.ts';
import { runtime } from '../runtime/index.ts';
import type { Pt2ptComm } from './pt2pt-comm.ts';

/** Tags of partitioned messages: above every user tag (TAG_UB = 2^30 - 1), on the INTERCOMM_BOOT suffix. */
const PARTITIONED_TAG_BASE = 2 ** 30;
const CTX_PARTITIONED = CONTEXT_SUFFIX.INTERCOMM_BOOT;
const MAX_PARTITIONS = 1 << 20;

/** Shared cells: [ACTIVE] 1 while started, [COUNT] parts ready (send) or arrived (receive), then one mark per part. */
const CELL = { ACTIVE: 0, COUNT: 1, PARTS: 2 } as const;

/** How a PartitionedRequest crosses to another thread (revive.ts). */
export interface PartitionedMark {
  readonly cells: SharedArrayBuffer;
  readonly partitions: number;
  readonly isSend: boolean;
}

export class PartitionedRequest extends Request<void> {
  /** @internal the ready / arrived marks, shared with every thread that holds a view */
  declare _cells: Int32Array;
  declare _partitions: number;
  declare _isSend: boolean;
  /** @internal false for a view revived in another thread: only pready / parrived work there */
  declare _owner: boolean;

  /** @internal */
  constructor(comm: Pt2ptComm | null, call: string, partitions: number, isSend: boolean, cells?: SharedArrayBuffer) {
    super(null, comm, call);
    this._partitions = partitions;
    this._isSend = isSend;
    this._owner = cells === undefined;
    this._pump = null;
    this._cells = new Int32Array(cells ?? new SharedArrayBuffer((CELL.PARTS + partitions) * 4));
  }

  /** @internal What MPI.dehydrate carries to another thread. */
  _mark(): PartitionedMark {
    return { cells: this._cells.buffer as SharedArrayBuffer, partitions: this._partitions, isSend: this._isSend };
  }

  /** @internal The view of a request made in another thread (revive.ts). */
  static _revive(m: PartitionedMark): PartitionedRequest {
    return new PartitionedRequest(null, 'PartitionedRequest', m.partitions, m.isSend, m.cells);
  }

  #checkPart(i: unknown, call: string, arg = 'partition'): number {
    if (!Number.isInteger(i) || (i as number) < 0 || (i as number) >= this._partitions) {
      throw mpiError(ERR_ARG, call, `${arg} ${describe(i)} is out of range: expected 0..${this._partitions - 1}`);
    }
    return i as number;
  }

  #checkSendActive(call: string): void {
    if (!this._isSend) throw mpiError(ERR_ARG, call, `${call} is for a request of PsendInit; this one is a PrecvInit's (use parrived)`);
    if (Atomics.load(this._cells, CELL.ACTIVE) !== 1) throw mpiError(ERR_ARG, call, 'the request is not active: start() it first (and mark each part ready once per start)');
  }

  #ready(i: number, call: string): void {
    const c = this._cells;
    if (Atomics.compareExchange(c, CELL.PARTS + i, 0, 1) !== 0) throw mpiError(ERR_ARG, call, `partition ${i} is already marked ready in this start`);
    Atomics.add(c, CELL.COUNT, 1);
    Atomics.notify(c, CELL.COUNT);
  }

  /** Marks part i ready to send (MPI_Pready); from any thread of the process. @throws MPIError(ERR_ARG) for a bad index, a part already ready, or a request not started */
  pready(i: number): void {
    this.#checkSendActive('pready');
    this.#ready(this.#checkPart(i, 'pready'), 'pready');
    this._pump?.();
  }

  /** Marks parts lo..hi (inclusive) ready (MPI_Pready_range). */
  preadyRange(lo: number, hi: number): void {
    const call = 'preadyRange';
    this.#checkSendActive(call);
    const a = this.#checkPart(lo, call, 'lo');
    const b = this.#checkPart(hi, call, 'hi');
    if (b < a) throw mpiError(ERR_ARG, call, `hi ${b} is below lo ${a}`);
    for (let i = a; i <= b; i++) this.#ready(i, call);
    this._pump?.();
  }

  /** Marks the parts in `ids` ready (MPI_Pready_list). */
  preadyList(ids: number[]): void {
    const call = 'preadyList';
    this.#checkSendActive(call);
    if (!Array.isArray(ids)) throw mpiError(ERR_ARG, call, `ids is ${describe(ids)}: expected an array of partition indices`);
    const parts = ids.map((i, k) => this.#checkPart(i, call, `ids[${k}]`));
    for (const i of parts) this.#ready(i, call);
    this._pump?.();
  }

  /** True once part i of the current start has arrived in the buffer (MPI_Parrived); from any thread. */
  parrived(i: number): boolean {
    const call = 'parrived';
    if (this._isSend) throw mpiError(ERR_ARG, call, 'parrived is for a request of PrecvInit; this one is a PsendInit\'s');
    const k = this.#checkPart(i, call);
    // A request not started, or complete, has every part in place (MPI 4.0 §4.2.2: an inactive request returns true).
    return Atomics.load(this._cells, CELL.ACTIVE) !== 1 || Atomics.load(this._cells, CELL.PARTS + k) === 1;
  }

  /** @internal the owner's: sends the parts marked ready since the last call (null on a view) */
  declare _pump: (() => void) | null;

  override start(): void {
    if (!this._owner) throw mpiError(ERR_ARG, `${this._call}.start`, 'a partitioned request starts only in the thread that made it (other threads call pready / parrived)');
    super.start();
  }
  override wait(): Promise<void> {
    if (!this._owner) return Promise.reject(mpiError(ERR_ARG, `${this._call}.wait`, 'a partitioned request is waited for only in the thread that made it'));
    return super.wait();
  }
}

/** The byte view of a partitioned buffer and its part size; checks that the elements split evenly. */
function partsOf(buf: unknown, partitions: number, call: string): { bytes: Uint8Array; partBytes: number } {
  if (!ArrayBuffer.isView(buf)) throw mpiError(ERR_BUFFER, call, `buf is ${describe(buf)}: expected a typed array or DataView (partitioned buffers are contiguous)`);
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
    throw mpiError(ERR_COUNT, call, `partitions ${describe(partitions)} is out of range: expected 1..${MAX_PARTITIONS}`);
  }
  const elementBytes = 'BYTES_PER_ELEMENT' in buf ? (buf as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT : 1;
  const elements = buf.byteLength / elementBytes;
  if (elements % partitions !== 0) {
    throw mpiError(ERR_COUNT, call, `buf has ${elements} elements, which do not split evenly into ${partitions} partitions`);
  }
  return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), partBytes: (elements / partitions) * elementBytes };
}

/** comm.PsendInit: see Pt2ptModesComm. */
export function psendInit(comm: Pt2ptComm, buf: unknown, partitions: number, dest: number, tag: number): PartitionedRequest {
  const call = 'PsendInit';
  const me = comm._me(call);
  const dst = comm._dest(dest, call);
  comm._sendTag(tag, call);
  const { bytes, partBytes } = partsOf(buf, partitions, call);
  const req = new PartitionedRequest(comm, call, partitions, true);
  req._hold(comm._handle, buf);
  const cells = req._cells;
  let sent: Uint8Array;
  let pending = 0;
  let outer: DevRequest | null = null;
  const finishOne = (): void => {
    if (--pending === 0 && outer !== null) {
      const r = outer;
      outer = null;
      Atomics.store(cells, CELL.ACTIVE, 0);
      req._pump = null;
      runtime(call).device.completeNow(r);
    }
  };
  const pump = (): void => {
    const dev = runtime(call).device;
    for (let i = 0; i < partitions; i++) {
      if (sent[i] === 1 || Atomics.load(cells, CELL.PARTS + i) !== 1) continue;
      sent[i] = 1;
      if (dst === PROC_NULL) {
        finishOne();
        continue;
      }
      const payload = new Uint8Array(4 + partBytes);
      new DataView(payload.buffer).setUint32(0, i, true);
      payload.set(bytes.subarray(i * partBytes, (i + 1) * partBytes), 4);
      const r = new DevRequest(REQ_KIND.SEND, call);
      r.onComplete = finishOne;
      dev.lifetime.acquire(r, comm._handle, 0, 0);
      dev.send(r, me, dst, comm._sendCtx + CTX_PARTITIONED, PARTITIONED_TAG_BASE + tag, payload, false, false);
    }
  };
  req._starter = (r) => {
    r.kind = REQ_KIND.GENERALIZED;
    sent = new Uint8Array(partitions);
    pending = partitions;
    outer = r;
    for (let i = 0; i < partitions; i++) Atomics.store(cells, CELL.PARTS + i, 0);
    Atomics.store(cells, CELL.COUNT, 0);
    Atomics.store(cells, CELL.ACTIVE, 1);
    req._pump = pump;
    void watchOtherThreads(cells, partitions, () => outer === r, pump);
  };
  return req;
}

/**
 * The owner's side of parts marked ready in other threads: waits on the ready count and pumps,
 * until every part of this start is ready (`live` false: the start is over). The timer keeps the
 * event loop alive (waitAsync does not) and re-checks.
 */
async function watchOtherThreads(cells: Int32Array, partitions: number, live: () => boolean, pump: () => void): Promise<void> {
  for (;;) {
    const count = Atomics.load(cells, CELL.COUNT);
    pump();
    if (count >= partitions || !live()) return;
    const woken = waitAsync(cells, CELL.COUNT, count);
    if (woken === null) continue;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([woken, new Promise((resolve) => (timer = setTimeout(resolve, 50)))]);
    clearTimeout(timer);
  }
}

/** comm.PrecvInit: see Pt2ptModesComm. */
export function precvInit(comm: Pt2ptComm, buf: unknown, partitions: number, source: number, tag: number): PartitionedRequest {
  const call = 'PrecvInit';
  const me = comm._me(call);
  if (source === ANY_SOURCE) throw mpiError(ERR_RANK, call, 'source ANY_SOURCE is not allowed: a partitioned receive names its sender (MPI 4.0 §4.2)');
  if (tag === ANY_TAG) throw mpiError(ERR_TAG, call, 'tag ANY_TAG is not allowed: a partitioned receive names its tag (MPI 4.0 §4.2)');
  const src = comm._source(source, call);
  comm._sendTag(tag, call);
  const { bytes, partBytes } = partsOf(buf, partitions, call);
  const req = new PartitionedRequest(comm, call, partitions, false);
  req._hold(comm._handle, buf);
  const cells = req._cells;
  req._starter = (r) => {
    r.kind = REQ_KIND.GENERALIZED;
    for (let i = 0; i < partitions; i++) Atomics.store(cells, CELL.PARTS + i, 0);
    Atomics.store(cells, CELL.COUNT, 0);
    Atomics.store(cells, CELL.ACTIVE, 1);
    const dev = runtime(call).device;
    if (src === PROC_NULL) {
      Atomics.store(cells, CELL.ACTIVE, 0);
      r.sourceEndpoint = PROC_NULL;
      r.tag = ANY_TAG;
      return dev.completeNow(r);
    }
    let pending = partitions;
    let failure: DevRequest['error'] = null;
    const arrived = (part: DevRequest): void => {
      const data = part.value as Uint8Array | undefined;
      if (part.error !== null) failure ??= part.error;
      else if (data === undefined || data.length !== 4 + partBytes) {
        failure ??= mpiError(ERR_COUNT, call, `a part of ${data === undefined ? 0 : data.length - 4} bytes arrived; each part of this receive holds ${partBytes} (do both sides split the same number of bytes into the same number of partitions?)`);
      } else {
        const i = new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true);
        if (i < partitions) {
          bytes.set(data.subarray(4), i * partBytes);
          Atomics.store(cells, CELL.PARTS + i, 1);
          Atomics.add(cells, CELL.COUNT, 1);
        } else {
          failure ??= mpiError(ERR_COUNT, call, `part ${i} arrived; this receive has ${partitions} partitions`);
        }
      }
      if (--pending > 0) return;
      Atomics.store(cells, CELL.ACTIVE, 0);
      r.error = failure;
      r.sourceEndpoint = part.sourceEndpoint;
      r.tag = tag;
      r.count = bytes.length;
      dev.completeNow(r);
    };
    for (let i = 0; i < partitions; i++) {
      const part = new DevRequest(REQ_KIND.RECV, call);
      part.objectMode = true; // the part's bytes land in an array of their own (r.value), copied into place by index
      part.onComplete = arrived;
      dev.lifetime.acquire(part, comm._handle, 0, 0);
      dev.postRecv(part, me, comm._ctx + CTX_PARTITIONED, src, PARTITIONED_TAG_BASE + tag);
    }
  };
  return req;
}
