/**
 * mpiexec --dashboard's traffic matrix over every thread of a process (issue 41): the bytes each
 * thread's connections wrote to each process. The main thread's transport is not the only one:
 * worker threads send on connections of their own (direct routes) and channel engines host the
 * channels under progress 'engines'/'threads'. Each thread's sockets count their bytes themselves
 * (Transport.bytesToProcess); nothing is counted per frame for this.
 *
 * How the counts meet: every statistics row (thread or engine) has a row of per-process bytes in
 * shared memory (SharedState.peerBytesRow). When a viewer samples, the main thread's counters()
 * (processPeerBytes) writes its own row, asks the other threads to write theirs
 * (SharedState.askPeerBytes: an Atomics.notify that each thread's waitAsync takes in its event
 * loop) and sums the rows as they stand: another thread's bytes reach the sample after the one that
 * asked (a few hundred milliseconds). A thread writes its row a last time when its device closes,
 * so the bytes of a thread that ended stay in the matrix; the next thread given the same row adds to
 * what it found there.
 */
import type { Transport } from '../transport/index.ts';
import type { SharedState } from './shared-state.ts';

/** This thread's writer of its row, or null (no transport yet, or a single-process job). */
let own: PeerBytesWriter | null = null;

/** One thread's row: what it found there (an earlier thread's bytes), plus its transports' counts. */
export class PeerBytesWriter {
  readonly #row: Float64Array;
  readonly #base: Float64Array;
  readonly #transports: () => readonly Transport[];
  #closed = false;

  /**
   * Takes statistics row `row`'s peer bytes and writes them whenever a viewer's sample asks.
   * @param transports this thread's transports, as they are when asked
   */
  constructor(shared: SharedState, row: number, transports: () => readonly Transport[]) {
    this.#row = shared.peerBytesRow(row);
    this.#base = Float64Array.from(this.#row);
    this.#transports = transports;
    own = this;
    shared.watchPeerBytesAsks(() => this.write(), () => this.#closed);
  }

  /** Writes the row now: the base plus every transport's bytes per process. */
  write(): void {
    const row = this.#row;
    const sums = Float64Array.from(this.#base);
    for (const t of this.#transports()) {
      const b = t.bytesToProcess?.();
      if (b === undefined) continue;
      for (let p = 0; p < b.length && p < sums.length; p++) sums[p] += b[p]!;
    }
    for (let p = 0; p < row.length; p++) row[p] = sums[p]!;
  }

  /** The last write (the device closed): the row keeps this thread's bytes. */
  close(): void {
    if (this.#closed) return;
    this.write();
    this.#closed = true;
    if (own === this) own = null;
  }
}

/**
 * Main thread, a viewer's sample: bytes written to each process by every thread and engine of this
 * process (see the file comment), or null when this thread has no transports (a single process).
 */
export function processPeerBytes(shared: SharedState): number[] | null {
  if (own === null) return null;
  own.write();
  shared.askPeerBytes();
  const n = shared.layout.processCount;
  const out = new Array<number>(n).fill(0);
  const rows = shared.buffers.peerBytes.byteLength / (8 * n);
  for (let r = 0; r < rows; r++) {
    const row = shared.peerBytesRow(r);
    for (let p = 0; p < n; p++) out[p]! += row[p]!;
  }
  return out;
}
