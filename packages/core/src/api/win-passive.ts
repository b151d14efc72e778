/**
 * Passive-target epochs at the origin (lock, lockAll, unlock, flush; win.ts is the API over it),
 * with lazy lock acquisition as MPICH does it: `lock` sends nothing. Operations issued while the
 * lock is not yet held wait here, in order. At `unlock`, an epoch of at most BATCH_BYTES of data
 * travels as one batch: LOCK, the operations and UNLOCK go out together (one socket write) and the
 * answers come back together (the fetches' data, then the UNLOCK's status), instead of a round
 * trip for the lock, one per fetch and one for the unlock. An epoch of one Put or Accumulate that
 * fits one frame is that one frame (RMA_EPOCH: lock, operation and unlock in one request, as
 * MPICH's ch3 sends its lock-op-unlock packet), which the target handles in one step instead of
 * three. The target applies the batch only if its LOCK is granted (device/rma-target.ts,
 * RMA_BATCH) and answers BUSY otherwise (a fetch then gets no bytes); the origin then takes the
 * lock the ordinary way (LOCK until GRANTED) and sends the operations again, which it kept. A
 * flush sends LOCK, the operations and FLUSH the same way (granted: the lock is held from then on,
 * and one answer has both granted it and confirmed the operations). The fetches that wait for the
 * batch are those MPI completes at a flush or unlock (Get, GetAccumulate, FetchAndOp,
 * CompareAndSwap; flushLocal sends the batch too); a request's fetch (Rget, RgetAccumulate), which
 * the program may await inside the epoch, or more than BATCH_BYTES takes the lock at once (one
 * round trip) and sends what waited once it is granted.
 * An epoch with no operation sends nothing at all; MODE_NOCHECK sends no lock message (the user
 * asserts that no conflicting lock exists), its unlock is a flush.
 *
 * A target in this process (the caller's own rank, another endpoint's thread) is locked at once:
 * its lock word is applied here without a message.
 */
import { RMA_BATCH, RMA_CODE, RMA_PREFIX_BYTES, RMA_STATUS } from '../device/index.ts';
import { RankTable } from '../util/index.ts';
import type { TargetSpec } from './win-args.ts';
import type { WinOrigin } from './win-origin.ts';

/**
 * The most data a lazy epoch sends in its batch: a refused batch is sent again once the lock is
 * held, so the bytes at risk stay about one eager message.
 */
export const BATCH_BYTES = 64 * 1024;

/** How a fetch issued before the lock was held starts (`flags`: RMA_BATCH in a batch, else 0), and settles its caller's promise. */
interface WaitingFetch {
  readonly start: (flags: number) => Promise<void>;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * An operation issued before the lock was held: a Put or Accumulate (`framed` holds its data,
 * `fetch` is null) or a fetch (`fetch`). One record of the operation's fields, the same shape for
 * every operation, rather than closures over them: a lazy Put allocates this record and its data's
 * copy, and the code that reads it sees one shape (PassiveEpochs.#run).
 */
class Waiting {
  readonly call: string;
  /** RMA_CODE.PUT or ACC; unused for a fetch */
  readonly code: number;
  readonly target: TargetSpec | null;
  /** the accumulate op */
  readonly op: number;
  /** RMA_PREFIX_BYTES of room for the displacement (WinOrigin.epochOp), then the data: the caller's buffer is free at once */
  readonly framed: Uint8Array | null;
  readonly fetch: WaitingFetch | null;

  constructor(call: string, code: number, target: TargetSpec | null, op: number, framed: Uint8Array | null, fetch: WaitingFetch | null) {
    this.call = call;
    this.code = code;
    this.target = target;
    this.op = op;
    this.framed = framed;
    this.fetch = fetch;
  }
}

interface Epoch {
  /** RMA_LOCK_TYPE */
  readonly type: number;
  /** lazy: no lock message yet; acquiring: LOCK sent, not granted; held; nocheck: MODE_NOCHECK, no lock at all */
  state: 'lazy' | 'acquiring' | 'held' | 'nocheck';
  readonly waiting: Waiting[];
  bytes: number;
  /** the ordinary acquisition, once started */
  acquired: Promise<void> | null;
}

const NOTHING_TO_REPORT = (): void => undefined;
/** A fetch sent in a batch (RMA_BATCH), and the promise of its answers. */
interface BatchFetch {
  readonly fetch: WaitingFetch;
  readonly answer: Promise<void>;
}

/** An epoch's acquisition once a batch's FLUSH was granted: the lock is held, nothing to wait for. */
const HELD: Promise<void> = Promise.resolve();

export class PassiveEpochs {
  readonly #o: WinOrigin;
  /** open lock epochs by target rank */
  readonly #epochs = new RankTable<Epoch>();

  constructor(o: WinOrigin) {
    this.#o = o;
  }

  /**
   * Opens a lock epoch to `rank` (lock type RMA_LOCK_TYPE): null when it is open at once (a remote
   * target: nothing is sent, and the caller has nothing to await), else a promise that resolves
   * once the lock of a target in this process is held.
   */
  open(call: string, rank: number, type: number, nocheck: boolean): Promise<void> | null {
    const e: Epoch = { type, state: nocheck ? 'nocheck' : 'lazy', waiting: [], bytes: 0, acquired: null };
    this.#epochs.set(rank, e);
    if (nocheck || !this.#o.isLocal(rank)) return null;
    return this.#acquire(call, rank, e).catch((err: unknown) => {
      this.#epochs.delete(rank);
      throw err;
    });
  }

  /**
   * Sends a Put or Accumulate (`code`: RMA_CODE.PUT or ACC, accumulate `op`) of `data` to `t` of
   * `rank` now, or keeps a copy of `data` (the caller may reuse its buffer at once) until the lock
   * is held or the epoch ends; it may then be sent twice (a refused batch or one-frame epoch).
   */
  put(call: string, rank: number, code: number, t: TargetSpec, op: number, data: Uint8Array): void {
    const o = this.#o;
    const e = this.#epochs.get(rank);
    if (e === undefined || e.state === 'held' || e.state === 'nocheck') {
      o.send(call, rank, code, t, op, data, 0);
      return;
    }
    // The copy has room for the displacement in front, should the epoch go as one frame (epochOp).
    const framed = new Uint8Array(RMA_PREFIX_BYTES + data.length);
    framed.set(data, RMA_PREFIX_BYTES);
    e.waiting.push(new Waiting(call, code, t, op, framed, null));
    e.bytes += data.length;
    if (e.state === 'lazy' && e.bytes > BATCH_BYTES) void this.#acquire(call, rank, e).catch(NOTHING_TO_REPORT);
  }

  /**
   * Starts a fetch to `rank` now, or once the lock is held; the result settles with the fetch.
   * In a lazy epoch a `deferrable` fetch (one whose completion MPI ties to a flush or unlock: not a
   * request's) waits with the Puts for the batch, `bytes` its data; any other takes the lock now.
   */
  fetch(call: string, rank: number, start: (flags: number) => Promise<void>, bytes: number, deferrable: boolean): Promise<void> {
    const e = this.#epochs.get(rank);
    if (e === undefined || e.state === 'held' || e.state === 'nocheck') return start(0);
    const p = new Promise<void>((resolve, reject) => {
      e.waiting.push(new Waiting(call, 0, null, 0, null, { start, resolve, reject }));
    });
    e.bytes += bytes;
    if (e.state !== 'lazy' || !deferrable || e.bytes > BATCH_BYTES) void this.#acquire(call, rank, e).catch(NOTHING_TO_REPORT);
    return p;
  }

  /** Whether a lazy epoch to `rank` holds a fetch back for its batch (flushLocal must send it). */
  holdsFetch(rank: number): boolean {
    const e = this.#epochs.get(rank);
    return e !== undefined && e.state === 'lazy' && e.waiting.some((w) => w.fetch !== null);
  }

  /** `ready` for every lazy epoch that holds a fetch back (flushLocalAll). */
  async readyFetches(call: string): Promise<void> {
    await Promise.all(this.#epochs.keys().filter((r) => this.holdsFetch(r)).map((r) => this.ready(call, r)));
  }

  /**
   * Before a flush of `rank`: its lock is held and what waited for it is sent (nothing when the epoch
   * has done nothing yet). A lazy epoch sends LOCK, what waited and FLUSH as one batch: granted, the
   * lock is held from here and the FLUSH answer has confirmed the operations, so the flush that
   * follows has nothing left to ask (one round trip, not one for the lock and one for the flush).
   */
  async ready(call: string, rank: number): Promise<void> {
    const e = this.#epochs.get(rank);
    if (e === undefined || e.state === 'held' || e.state === 'nocheck') return;
    if (e.state === 'lazy') {
      if (e.waiting.length === 0) return;
      if ((await this.#sendBatch(call, rank, e, RMA_CODE.FLUSH)) !== RMA_STATUS.BUSY) {
        // Applied, and the lock held: later operations go at once, unlock releases it the ordinary way.
        e.state = 'held';
        e.acquired = HELD;
        e.waiting.length = 0;
        e.bytes = 0;
        this.#o.forget(rank);
        return;
      }
      // Refused: the ordinary way, with the operations sent again.
    }
    await this.#acquire(call, rank, e);
  }

  /** `ready` for every open epoch (flushAll). */
  async readyAll(call: string): Promise<void> {
    await Promise.all(this.#epochs.keys().map((r) => this.ready(call, r)));
  }

  /** Closes the epoch to `rank` (unlock): every operation complete at origin and target, the lock released. */
  async close(call: string, rank: number): Promise<void> {
    const e = this.#epochs.get(rank);
    if (e === undefined) return;
    try {
      if (e.state === 'nocheck') {
        await this.#o.complete(call, rank);
        return;
      }
      if (e.state === 'lazy') {
        if (e.waiting.length === 0) return;
        if ((await this.#sendBatch(call, rank, e, RMA_CODE.UNLOCK)) !== RMA_STATUS.BUSY) {
          // Applied, and the lock released; the batch's fetches have their answers (they came first).
          e.waiting.length = 0;
          this.#o.forget(rank);
          const fetched = this.#o.awaitFetches(rank);
          if (fetched !== null) await fetched;
          return;
        }
        // Refused (another origin holds a conflicting lock): the ordinary way, with the operations sent again.
      }
      await this.#acquire(call, rank, e);
      const fetches = this.#o.awaitFetches(rank);
      if (fetches !== null) await fetches;
      this.#o.forget(rank);
      await this.#o.control(call, rank, RMA_CODE.UNLOCK, e.type);
    } finally {
      this.#epochs.delete(rank);
    }
  }

  /**
   * Sends what waited with the lock and `end`: UNLOCK (the epoch's end: one Put or Accumulate that
   * fits a frame goes as that one frame, RMA_EPOCH) or FLUSH (the lock stays held), as one batch:
   * LOCK, the operations, `end`; the fetches among them settle with the batch (settleBatchFetches).
   * Resolves to the target's answer to `end` (BUSY: refused, nothing applied). Not an async
   * function: the answer's promise is passed on as it is, one promise and one await fewer per epoch.
   */
  #sendBatch(call: string, rank: number, e: Epoch, end: typeof RMA_CODE.UNLOCK | typeof RMA_CODE.FLUSH): Promise<number> {
    const w = end === RMA_CODE.UNLOCK && e.waiting.length === 1 ? e.waiting[0]! : null;
    const whole = w !== null && w.fetch === null ? this.#o.epochOp(w.call, rank, w.code, w.target!, w.op, e.type, w.framed!) : null;
    if (whole !== null) return whole;
    this.#o.post(call, rank, RMA_CODE.LOCK, e.type, RMA_BATCH);
    let fetches: BatchFetch[] | null = null;
    for (const op of e.waiting) {
      if (op.fetch === null) this.#run(rank, op, RMA_BATCH);
      else (fetches ??= []).push({ fetch: op.fetch, answer: op.fetch.start(RMA_BATCH) });
    }
    const status = this.#o.control(call, rank, end, e.type, RMA_BATCH);
    return fetches === null ? status : settleBatchFetches(status, fetches);
  }

  /** Takes the lock the ordinary way (once per epoch), then sends what waited, in order. */
  #acquire(call: string, rank: number, e: Epoch): Promise<void> {
    if (e.acquired === null) {
      e.state = 'acquiring';
      e.acquired = this.#o.acquire(call, rank, e.type).then(
        () => {
          e.state = 'held';
          const waiting = e.waiting.splice(0);
          e.bytes = 0;
          for (const w of waiting) this.#run(rank, w, 0);
        },
        (err: unknown) => {
          for (const w of e.waiting.splice(0)) w.fetch?.reject(err);
          throw err;
        },
      );
    }
    return e.acquired;
  }

  /** Sends waiting operation `w` to `rank` (`flags`: RMA_BATCH in a batch, which may be sent twice), or starts its fetch. */
  #run(rank: number, w: Waiting, flags: number): void {
    if (w.fetch !== null) {
      w.fetch.start(flags).then(w.fetch.resolve, w.fetch.reject);
      return;
    }
    this.#o.send(w.call, rank, w.code, w.target!, w.op, w.framed!.subarray(RMA_PREFIX_BYTES), flags);
  }
}

/**
 * A batch's fetches once its end (UNLOCK or FLUSH) is answered: granted, each settles with its
 * answers (which came before the end's: one channel, in order); refused, the target answered each
 * with no bytes and they are dropped (the fetch is started again once the lock is held, as a
 * refused batch's Puts are sent again); failed, each fails with the end's error.
 */
function settleBatchFetches(status: Promise<number>, fetches: readonly BatchFetch[]): Promise<number> {
  return status.then(
    (s) => {
      for (const { fetch, answer } of fetches) {
        if (s === RMA_STATUS.BUSY) answer.catch(NOTHING_TO_REPORT);
        else answer.then(fetch.resolve, fetch.reject);
      }
      return s;
    },
    (err: unknown) => {
      for (const { fetch, answer } of fetches) {
        answer.catch(NOTHING_TO_REPORT);
        fetch.reject(err);
      }
      throw err;
    },
  );
}
