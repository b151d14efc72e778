/**
 * Passive-target epochs at the origin (lock, lockAll, unlock, flush; win.ts is the API over it),
 * with lazy lock acquisition as MPICH does it: `lock` sends nothing. Operations issued while the
 * lock is not yet held wait here, in order. At `unlock`, an epoch whose operations are all Puts and
 * Accumulates (no answer) of at most BATCH_BYTES travels as one batch: LOCK, the operations and
 * UNLOCK go out together (one socket write) and one answer completes the epoch, instead of a
 * round trip for the lock and another for the unlock. The target applies the batch only if its
 * LOCK is granted (device/rma-target.ts, RMA_BATCH) and answers BUSY otherwise; the origin then
 * takes the lock the ordinary way (LOCK until GRANTED) and sends the operations again, which it
 * kept. A fetch (Get, GetAccumulate, FetchAndOp, CompareAndSwap), a flush or more than
 * BATCH_BYTES takes the lock at once (one round trip) and sends what waited once it is granted.
 * An epoch with no operation sends nothing at all; MODE_NOCHECK sends no lock message (the user
 * asserts that no conflicting lock exists), its unlock is a flush.
 *
 * A target in this process (the caller's own rank, another endpoint's thread) is locked at once:
 * its lock word is applied here without a message.
 */
import { RMA_BATCH, RMA_CODE, RMA_STATUS } from '../device/index.ts';
import { RankTable } from '../util/index.ts';
import type { WinOrigin } from './win-origin.ts';

/**
 * The most data a lazy epoch sends in its batch: a refused batch is sent again once the lock is
 * held, so the bytes at risk stay about one eager message.
 */
export const BATCH_BYTES = 64 * 1024;

/** An operation issued before the lock was held: `run` sends it (`flags`: RMA_BATCH in a batch; it may run twice), `fail` reports a lock that failed. */
interface Waiting {
  readonly run: (flags: number) => void;
  readonly fail: (err: unknown) => void;
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

export class PassiveEpochs {
  readonly #o: WinOrigin;
  /** open lock epochs by target rank */
  readonly #epochs = new RankTable<Epoch>();

  constructor(o: WinOrigin) {
    this.#o = o;
  }

  /** Opens a lock epoch to `rank` (lock type RMA_LOCK_TYPE); resolves once open (at once but for a target in this process). */
  open(call: string, rank: number, type: number, nocheck: boolean): Promise<void> {
    const e: Epoch = { type, state: nocheck ? 'nocheck' : 'lazy', waiting: [], bytes: 0, acquired: null };
    this.#epochs.set(rank, e);
    if (nocheck || !this.#o.isLocal(rank)) return Promise.resolve();
    return this.#acquire(call, rank, e).catch((err: unknown) => {
      this.#epochs.delete(rank);
      throw err;
    });
  }

  /**
   * Sends a Put or Accumulate of `data` to `rank` now, or keeps a copy of `data` (the caller may
   * reuse its buffer at once) until the lock is held; `send` may then run twice (a refused batch).
   */
  put(call: string, rank: number, data: Uint8Array, send: (data: Uint8Array, flags: number) => void): void {
    const e = this.#epochs.get(rank);
    if (e === undefined || e.state === 'held' || e.state === 'nocheck') {
      send(data, 0);
      return;
    }
    const kept = data.slice();
    e.waiting.push({ run: (flags) => send(kept, flags), fail: NOTHING_TO_REPORT });
    e.bytes += kept.length;
    if (e.state === 'lazy' && e.bytes > BATCH_BYTES) void this.#acquire(call, rank, e).catch(NOTHING_TO_REPORT);
  }

  /** Starts a fetch to `rank` now, or once the lock is held (taking it now); the result settles with the fetch. */
  fetch(call: string, rank: number, start: () => Promise<void>): Promise<void> {
    const e = this.#epochs.get(rank);
    if (e === undefined || e.state === 'held' || e.state === 'nocheck') return start();
    const p = new Promise<void>((resolve, reject) => {
      e.waiting.push({ run: () => start().then(resolve, reject), fail: reject });
    });
    void this.#acquire(call, rank, e).catch(NOTHING_TO_REPORT);
    return p;
  }

  /** Before a flush of `rank`: its lock is held and what waited for it is sent (nothing when the epoch has done nothing yet). */
  async ready(call: string, rank: number): Promise<void> {
    const e = this.#epochs.get(rank);
    if (e === undefined || e.state === 'held' || e.state === 'nocheck') return;
    if (e.state === 'lazy' && e.waiting.length === 0) return;
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
        if (await this.#batch(call, rank, e)) return;
        // Refused (another origin holds a conflicting lock): the ordinary way, with the operations sent again.
      }
      await this.#acquire(call, rank, e);
      await this.#o.awaitFetches(rank);
      this.#o.forget(rank);
      await this.#o.control(call, rank, RMA_CODE.UNLOCK, e.type);
    } finally {
      this.#epochs.delete(rank);
    }
  }

  /** Sends LOCK, the waiting Puts and Accumulates and UNLOCK as one batch; true when the target applied it. */
  async #batch(call: string, rank: number, e: Epoch): Promise<boolean> {
    this.#o.post(call, rank, RMA_CODE.LOCK, e.type, RMA_BATCH);
    for (const w of e.waiting) w.run(RMA_BATCH);
    if ((await this.#o.control(call, rank, RMA_CODE.UNLOCK, e.type, RMA_BATCH)) === RMA_STATUS.BUSY) return false;
    e.waiting.length = 0;
    this.#o.forget(rank);
    return true;
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
          for (const w of waiting) w.run(0);
        },
        (err: unknown) => {
          for (const w of e.waiting.splice(0)) w.fail(err);
          throw err;
        },
      );
    }
    return e.acquired;
  }
}
