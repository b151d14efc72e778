/**
 * Another job's processes coupled at a port (docs/adr/0043-connect-two-jobs.md), as one thread's
 * device knows them: how they are named in errors, which failed as their mpiexec told this one's,
 * and which the groups disconnected from.
 *
 * Owned by device-wiring.ts (it learns them in addPeers, asks `describe` and `isReleased` when a
 * connection to one ends); api/dynamic.ts releases them at Comm.disconnect, runtime/bootstrap.ts
 * hands mpiexec's wire-up `peerFailed` to `fail`. Every MPI thread and channel engine of the process
 * has one: the main thread tells the MPI.Worker threads (runtime/worker-peers.ts, its book) and the
 * engines (engines.ts) what it learns, releases and hears failed.
 *
 * Why a release: MPI 4.0 section 11.10.4 says that after MPI_Comm_disconnect the two groups are
 * independent, so a failure of one must not reach the other; a released process that ends (its
 * connection closes, or its mpiexec says it failed) is noted at debug and fails nothing.
 */
import type { ForeignPeer } from '../transport/index.ts';

export class CoupledPeers {
  readonly #peers = new Map<number, ForeignPeer>();
  readonly #released = new Set<number>();
  /** The wiring's way to fail a peer: false when it did not (already lost, closing, released). */
  readonly #onFailed: (proc: number, why: string) => boolean;

  constructor(onFailed: (proc: number, why: string) => boolean) {
    this.#onFailed = onFailed;
  }

  /** The processes `foreign` names are another job's from now on (addPeers; again for one known: no change, a release stays). */
  add(foreign: ReadonlyMap<number, ForeignPeer>): void {
    foreign.forEach((f, p) => {
      if (!this.#peers.has(p)) this.#peers.set(p, f);
    });
  }

  /** Process `proc` is another job's (it came through a coupling). */
  has(proc: number): boolean {
    return this.#peers.has(proc);
  }

  /** "process 3 (process 1 of the job coupled at a port)" for another job's process, else "process 3". */
  describe(proc: number): string {
    const f = this.#peers.get(proc);
    return f === undefined ? `process ${proc}` : `process ${proc} (${f.theirProcess === undefined ? 'a process' : `process ${f.theirProcess}`} of the job coupled at a port)`;
  }

  /** The groups disconnected: the end of these processes is no failure here any more. */
  release(procs: Iterable<number>): void {
    for (const p of procs) if (this.#peers.has(p)) this.#released.add(p);
  }

  isReleased(proc: number): boolean {
    return this.#released.has(proc);
  }

  /**
   * The other job's mpiexec says `proc` failed (wire-up peerFailed): pending and later calls of this
   * thread fail with ERR_PROC_FAILED and `why`, as for a lost connection. Ignored for a process that
   * is not another job's, or that the groups disconnected from. @returns whether it failed anything
   */
  fail(proc: number, why: string): boolean {
    if (!this.#peers.has(proc) || this.#released.has(proc)) return false;
    return this.#onFailed(proc, why);
  }
}
