/**
 * How the MPI.Worker threads of a process learn the addresses of processes that joined the job
 * after they started (docs/adr/0040-dynamic-processes.md): a spawn (or connect) grows the universe
 * on the main thread, whose transports and engines learn the new processes there (api/dynamic.ts
 * `reach`, Engines.addPeers), but a worker thread sends on connections of its own (direct routes,
 * docs/adr/0015) whose address lists were copied into its boot record. So the main thread keeps a
 * book of every address it learnt later and tells each worker thread, answered, before the call
 * that grew the job returns; a thread started later gets the book in its boot record.
 *
 * One BroadcastChannel per process (`tsmpi-peers:<job key>:<process>`) and one small
 * SharedArrayBuffer (`state`: the book's generation, and a bit per thread id that has its channel
 * open). Messages:
 *
 *   { type: 'book', book }        main thread: the whole book (generation, addresses); a worker
 *                                 applies it when newer than its own (Device.addPeers is idempotent)
 *   { type: 'have', by, gen }     a worker: the generation it has applied (at open and after each book)
 *
 * The race with a thread that is starting is closed by the shared words: a worker sets its bit,
 * then reads the generation; the main thread stores the generation, then reads the bits. Either
 * the worker sees the new generation (it asks with 'have' and waits for the book before its
 * MPI.init returns) or the main thread sees its bit (its channel was open before the book was
 * posted, and the main thread waits for its 'have'). A thread whose bit clears (it ended) is not
 * waited for. The channel is unref'd except while its thread waits on it.
 *
 * Another job's processes coupled at a port (docs/adr/0043-connect-two-jobs.md) are in the book too:
 * their pair keys (`coupled`, so a worker thread's own connections prove the pair key and name them as
 * that job's), those the groups disconnected from (`released`: their end is no failure in any thread),
 * and those their mpiexec said failed (`failed`: every thread's pending and later calls end with
 * ERR_PROC_FAILED, a worker thread blocked in a receive from one included).
 */
import { BroadcastChannel } from 'node:worker_threads';
import { MAX_THREADS, type Device } from '../device/index.ts';
import type { ForeignPeer } from '../transport/index.ts';

/** Addresses learnt after init: `addresses[p]` process p's main thread ('' unknown), `perChannel[c][p]` its engine c's (threads progress), generation `gen` (0: empty). */
export interface PeerBook {
  readonly gen: number;
  readonly addresses: readonly string[];
  readonly perChannel: readonly (readonly string[])[] | null;
  /** [process, its pair key and numbers]: another job's processes (absent: none yet) */
  readonly coupled?: readonly (readonly [number, ForeignPeer])[];
  /** another job's processes the groups disconnected from */
  readonly released?: readonly number[];
  /** [process, why]: another job's processes its mpiexec said failed */
  readonly failed?: readonly (readonly [number, string])[];
}

/** What a coupling adds to the book, or news of one (api/dynamic.ts, runtime/bootstrap.ts's peerFailed). */
export interface CoupledNews {
  readonly coupled?: ReadonlyMap<number, ForeignPeer>;
  readonly released?: readonly number[];
  readonly failed?: readonly (readonly [number, string])[];
}

/** A worker thread applies a book to its device: addresses and pair keys, then releases, then failures (each idempotent). */
export function applyPeerBook(device: Device, book: PeerBook): void {
  device.addPeers(book.addresses, book.perChannel, book.coupled === undefined ? undefined : new Map(book.coupled));
  if (book.released !== undefined) device.coupled.release(book.released);
  for (const [p, why] of book.failed ?? []) device.coupled.fail(p, why);
}

/** What a worker thread's boot record carries (worker-boot.ts). */
export interface WorkerPeersBoot {
  readonly state: SharedArrayBuffer;
  readonly book: PeerBook;
}

type PeersMessage = { type: 'book'; book: PeerBook } | { type: 'have'; by: number; gen: number };

const GEN = 0;
const BITS = 1;
/** How often a waiting main thread looks whether a thread it waits for has ended (its bit cleared). */
const ENDED_CHECK_MS = 20;

/** Marks thread `threadId`'s channel closed (it ended): called by the thread at exit and by MPI.Worker's 'exit' listener. */
export function peersThreadEnded(state: SharedArrayBuffer, threadId: number): void {
  Atomics.and(new Int32Array(state), BITS + (threadId >>> 5), ~(1 << (threadId & 31)));
}

export class WorkerPeers {
  readonly state: SharedArrayBuffer;
  readonly #words: Int32Array;
  readonly #threadId: number;
  readonly #channel: BroadcastChannel;
  readonly #apply: (book: PeerBook) => void;
  #book: PeerBook;
  /** what this thread waits for on the channel (each keeps it ref'd) */
  readonly #waiters = new Set<(m: PeersMessage) => void>();

  /**
   * The main thread's (`boot` null: a new state) or a worker thread's (its boot record). `apply`
   * makes this thread's transports learn a book (Device.addPeers); a worker applies its boot book here.
   */
  constructor(jobKey: string, process: number, threadId: number, boot: WorkerPeersBoot | null, apply: (book: PeerBook) => void) {
    this.state = boot?.state ?? new SharedArrayBuffer(4 * (BITS + MAX_THREADS / 32));
    this.#words = new Int32Array(this.state);
    this.#threadId = threadId;
    this.#apply = apply;
    this.#book = boot?.book ?? { gen: 0, addresses: [], perChannel: null };
    if (this.#book.gen > 0) apply(this.#book);
    this.#channel = new BroadcastChannel(`tsmpi-peers:${jobKey}:${process}`);
    this.#channel.unref();
    this.#channel.onmessage = (ev) => this.#onMessage((ev as { data: PeersMessage }).data);
  }

  /** The record a worker thread started now gets (MPI.Worker's boot). */
  boot(): WorkerPeersBoot {
    return { state: this.state, book: this.#book };
  }

  /**
   * A worker thread at MPI.init, after its device started: marks its channel open, says which
   * generation it has, and waits for the book when the main thread announced a newer one since its
   * boot record was made (so that it reaches every process its parent could name to it).
   */
  async join(): Promise<void> {
    Atomics.or(this.#words, BITS + (this.#threadId >>> 5), 1 << (this.#threadId & 31));
    process.on('exit', () => peersThreadEnded(this.state, this.#threadId));
    const latest = Atomics.load(this.#words, GEN);
    const got = latest > this.#book.gen ? this.#wait((m) => m.type === 'book' && m.book.gen >= latest) : null;
    this.#post({ type: 'have', by: this.#threadId, gen: this.#book.gen });
    await got;
  }

  /**
   * The main thread: `addresses` / `perChannel` (as Device.addPeers takes them) join the book, and
   * every worker thread whose channel is open applies it; resolves once each has answered or ended.
   */
  async announce(addresses: readonly string[], perChannel: readonly (readonly string[])[] | null, news: CoupledNews = {}): Promise<void> {
    const old = this.#book;
    const merge = (a: readonly string[], b: readonly string[]): string[] => Array.from({ length: Math.max(a.length, b.length) }, (_, p) => b[p] || a[p] || '');
    const coupled = news.coupled === undefined ? old.coupled : [...(old.coupled ?? []), ...news.coupled];
    const released = news.released === undefined ? old.released : [...(old.released ?? []), ...news.released];
    const failed = news.failed === undefined ? old.failed : [...(old.failed ?? []), ...news.failed];
    const book: PeerBook = {
      gen: old.gen + 1,
      addresses: merge(old.addresses, addresses),
      perChannel: perChannel === null ? old.perChannel : perChannel.map((list, c) => merge(old.perChannel?.[c] ?? [], list)),
      ...(coupled === undefined ? {} : { coupled }),
      ...(released === undefined ? {} : { released }),
      ...(failed === undefined ? {} : { failed }),
    };
    this.#book = book;
    Atomics.store(this.#words, GEN, book.gen);
    const waiting = new Set<number>();
    for (let t = 0; t < MAX_THREADS; t++) if (t !== this.#threadId && this.#listening(t)) waiting.add(t);
    if (waiting.size === 0) {
      this.#post({ type: 'book', book });
      return;
    }
    const timer = setInterval(() => {
      for (const t of waiting) if (!this.#listening(t)) waiting.delete(t);
      if (waiting.size === 0) this.#onMessage({ type: 'have', by: -1, gen: book.gen });
    }, ENDED_CHECK_MS);
    try {
      const done = this.#wait((m) => {
        if (m.type === 'have' && m.gen >= book.gen) waiting.delete(m.by);
        return waiting.size === 0;
      });
      this.#post({ type: 'book', book });
      await done;
    } finally {
      clearInterval(timer);
    }
  }

  /** Closes the channel (the main thread's finalize). */
  close(): void {
    this.#channel.close();
  }

  #listening(t: number): boolean {
    return (Atomics.load(this.#words, BITS + (t >>> 5)) & (1 << (t & 31))) !== 0;
  }

  #onMessage(m: PeersMessage): void {
    if (m.type === 'book' && this.#threadId !== 0) {
      if (m.book.gen > this.#book.gen) {
        this.#apply(m.book);
        this.#book = m.book;
      }
      this.#post({ type: 'have', by: this.#threadId, gen: this.#book.gen });
    } else if (m.type === 'have' && this.#threadId === 0 && m.by >= 0 && m.gen < this.#book.gen) {
      // A thread that started from an older boot record: the book again (the others ignore it).
      this.#post({ type: 'book', book: this.#book });
    }
    for (const w of [...this.#waiters]) w(m);
  }

  /** Resolves when `done(m)` holds for a message; the channel stays ref'd meanwhile. */
  #wait(done: (m: PeersMessage) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const w = (m: PeersMessage): void => {
        if (!done(m)) return;
        this.#waiters.delete(w);
        if (this.#waiters.size === 0) this.#channel.unref();
        resolve();
      };
      if (this.#waiters.size === 0) this.#channel.ref();
      this.#waiters.add(w);
    });
  }

  #post(m: PeersMessage): void {
    this.#channel.postMessage(m);
  }
}

/** This thread's WorkerPeers (null before init, in a process with one MPI thread, and after finalize). */
let current: WorkerPeers | null = null;

export function workerPeers(): WorkerPeers | null {
  return current;
}

export function setWorkerPeers(p: WorkerPeers | null): void {
  current = p;
}
