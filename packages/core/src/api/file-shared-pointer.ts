/**
 * The shared file pointer of a File and its lock for atomic mode (MPI 4.0
 * 14.4.4 and 14.6.1), kept by one process: rank 0 of the file's private
 * communicator (a dup made at File.open, so these messages never meet the
 * user's). The other processes ask it by point-to-point messages; it
 * answers from a receive loop it keeps posted while the file is open:
 *
 *   requester                         owner (rank 0)
 *   send [ADD, n]   --REQUEST_TAG-->  old = pointer; pointer += n
 *   recv old        <--REPLY_TAG---   send old
 *   send [LOCK]     --REQUEST_TAG-->  free? grant : queue the rank
 *   recv            <--GRANT_TAG---   (when granted, in request order)
 *   send [UNLOCK]   --REQUEST_TAG-->  grant the next in the queue
 *
 * The owner's own requests take the same path without messages, in the
 * order its event loop runs them. A fetch-and-add is one round trip, and the
 * owner answers while it computes only when its event loop turns (an owner in
 * a long synchronous loop delays the others' WriteShared: docs/API.md says
 * so). Why messages and not a side file with a lock: node:fs has no fcntl
 * locks, and a lock file (O_EXCL) polls and breaks on NFS; MPICH's ROMIO
 * keeps the pointer in a hidden file under such a lock. The Win helper's
 * fetch-and-add (issue 37) could replace the messages later.
 *
 * Closing: stop() is collective; after a barrier no process has a request
 * in flight (each waits for its reply), and the owner sends itself STOP.
 */
import { ANY_SOURCE } from '../util/index.ts';
import type { Comm } from './comm.ts';
import { Status } from './status.ts';

const REQUEST_TAG = 1;
const REPLY_TAG = 2;
const GRANT_TAG = 3;

const ADD = 0;
const GET = 1;
const LOCK = 2;
const UNLOCK = 3;
const STOP = 4;

type Message = [op: number, value?: number];

export class SharedPointer {
  readonly #comm: Comm;
  readonly #isOwner: boolean;
  /** the pointer, in etypes of the current view (owner only) */
  #value = 0;
  #isLocked = false;
  /** waiting lock requests: a rank to send a grant to, or the owner's own resolve */
  readonly #queue: (number | (() => void))[] = [];
  #serving: Promise<void> | null = null;

  constructor(comm: Comm, initial: number) {
    this.#comm = comm;
    this.#isOwner = comm.rank === 0;
    this.#value = initial;
    if (this.#isOwner) {
      this.#serving = this.#serve();
      // A failure of the loop (a peer lost) reaches stop(); until then it must not be an unhandled rejection.
      this.#serving.catch(() => undefined);
    }
  }

  /** Adds n etypes; resolves to the pointer before the addition. */
  async fetchAdd(n: number): Promise<number> {
    if (this.#isOwner) {
      const old = this.#value;
      this.#value += n;
      return old;
    }
    return this.#ask([ADD, n]);
  }

  /** The pointer now. */
  async get(): Promise<number> {
    return this.#isOwner ? this.#value : this.#ask([GET]);
  }

  /** Sets the pointer (seekShared and setView call it on rank 0 only, between barriers). */
  setLocal(value: number): void {
    this.#value = value;
  }

  /** Waits for the file's lock (atomic mode). */
  async lock(): Promise<void> {
    if (this.#isOwner) {
      if (!this.#isLocked) {
        this.#isLocked = true;
        return;
      }
      await new Promise<void>((resolve) => this.#queue.push(resolve));
      return;
    }
    const granted = this.#comm.recv(0, GRANT_TAG);
    await this.#comm.send([LOCK] satisfies Message, 0, REQUEST_TAG);
    await granted;
  }

  /** Releases the file's lock. */
  async unlock(): Promise<void> {
    if (this.#isOwner) await this.#release();
    else await this.#comm.send([UNLOCK] satisfies Message, 0, REQUEST_TAG);
  }

  /** Collective: ends the owner's receive loop once nobody can ask any more. */
  async stop(): Promise<void> {
    await this.#comm.barrier();
    if (!this.#isOwner) return;
    await this.#comm.send([STOP] satisfies Message, 0, REQUEST_TAG);
    await this.#serving;
  }

  async #ask(msg: Message): Promise<number> {
    const reply = this.#comm.recv<number>(0, REPLY_TAG);
    await this.#comm.send(msg, 0, REQUEST_TAG);
    return reply;
  }

  async #release(): Promise<void> {
    const next = this.#queue.shift();
    if (next === undefined) this.#isLocked = false;
    else if (typeof next === 'function') next();
    else await this.#comm.send(null, next, GRANT_TAG);
  }

  async #serve(): Promise<void> {
    const comm = this.#comm;
    for (;;) {
      const st = new Status();
      const [op, n] = await comm.recv<Message>(ANY_SOURCE, REQUEST_TAG, st);
      const from = st.source;
      switch (op) {
        case ADD: {
          const old = this.#value;
          this.#value += n!;
          await comm.send(old, from, REPLY_TAG);
          break;
        }
        case GET:
          await comm.send(this.#value, from, REPLY_TAG);
          break;
        case LOCK:
          if (this.#isLocked) this.#queue.push(from);
          else {
            this.#isLocked = true;
            await comm.send(null, from, GRANT_TAG);
          }
          break;
        case UNLOCK:
          await this.#release();
          break;
        case STOP:
          return;
      }
    }
  }
}
