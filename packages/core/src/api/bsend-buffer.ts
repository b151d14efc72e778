/**
 * The attached buffer of buffered sends (MPI 4.0 §3.6: MPI_Buffer_attach / MPI_Buffer_detach,
 * API.md "More point-to-point"): MPI.attachBuffer, MPI.detachBuffer, MPI.BSEND_OVERHEAD, and the
 * accounting that Bsend, Ibsend, BsendInit and bsend use (pt2pt-modes.ts).
 *
 * One buffer per process, as in MPI: its size and the bytes in use live in four Int32 cells of
 * shared memory (SharedState.bsend), so every thread of the process (main, MPI.Worker) draws on
 * the same budget and sees the same attach and detach. A buffered send reserves its message's
 * length plus BSEND_OVERHEAD with a compare-and-swap, copies the message, and gives the bytes back
 * when the standard send of the copy completes (at once for an eager message, once its data has
 * left for a rendezvous one). The copy is made into memory of the sending thread, not into the
 * attached Uint8Array: a worker thread cannot write another thread's ordinary memory, and what MPI
 * promises the user is kept all the same (the send buffer is free at once; the attached size bounds
 * the bytes in flight; ERR_BUFFER when they would exceed it; detach waits for them).
 *
 *   cells[ATTACHED]  attached size in bytes, or 0 when none is attached (a fresh SharedState is zeroes)
 *   cells[USED]      bytes reserved by buffered sends not yet complete (detach waits for 0)
 *   cells[EPOCH]     bumped at every attach, so a thread knows whether the Uint8Array it kept is current
 */
import { ERR_ARG, ERR_BUFFER, mpiError, waitAsync } from '../util/index.ts';
import { runtime } from '../runtime/index.ts';
import { describe } from './buffer.ts';

/**
 * Bytes a buffered send reserves beyond its message (MPI_BSEND_OVERHEAD): size the attached buffer
 * as the sum of (message bytes + BSEND_OVERHEAD) over the buffered sends that may be in flight at once.
 */
export const BSEND_OVERHEAD = 64;

/** The largest buffer that can be attached: sizes are Int32 in shared memory (MPI's are C ints too). */
const MAX_ATTACH_BYTES = 2 ** 31 - 1;

const CELL = { ATTACHED: 0, USED: 1, EPOCH: 2 } as const;

/** The Uint8Array this thread attached (detach gives it back), with the cells and epoch it was attached in. */
let mine: { cells: Int32Array; epoch: number; buffer: Uint8Array } | null = null;

/**
 * Attaches the process's buffer for buffered sends (MPI_Buffer_attach). Only one may be attached
 * per process at a time, whichever thread attached it.
 * @param bytes the buffer, or its size in bytes (1 .. 2^31 - 1)
 * @throws MPIError(ERR_BUFFER) when a buffer is already attached; ERR_ARG for a bad argument.
 * @example MPI.attachBuffer(4 * (1024 + MPI.BSEND_OVERHEAD)); await comm.Bsend(data, 1);
 */
export function attachBuffer(bytes: number | Uint8Array): void {
  const call = 'attachBuffer';
  const size = bytes instanceof Uint8Array ? bytes.length : bytes;
  if (!Number.isInteger(size) || size < 1 || size > MAX_ATTACH_BYTES) {
    const what = bytes instanceof Uint8Array ? `a Uint8Array of ${size} bytes` : describe(bytes);
    throw mpiError(ERR_ARG, call, `bytes (${what}) is invalid: expected a Uint8Array or a size of 1..${MAX_ATTACH_BYTES} bytes`);
  }
  const cells = runtime(call).device.shared.bsend;
  const current = Atomics.compareExchange(cells, CELL.ATTACHED, 0, size);
  if (current !== 0) throw mpiError(ERR_BUFFER, call, `a buffer of ${current} bytes is already attached to this process: call MPI.detachBuffer() first`);
  const epoch = Atomics.add(cells, CELL.EPOCH, 1) + 1;
  mine = bytes instanceof Uint8Array ? { cells, epoch, buffer: bytes } : null;
}

/**
 * Detaches the process's buffer (MPI_Buffer_detach): new buffered sends fail with ERR_BUFFER at
 * once, and the promise resolves once every buffered send of the process has completed. Resolves
 * to the attached Uint8Array when this thread attached one, else to a new Uint8Array of the
 * attached size.
 * @throws MPIError(ERR_BUFFER) when no buffer is attached.
 * @example const buf = await MPI.detachBuffer();
 */
export async function detachBuffer(): Promise<Uint8Array> {
  const call = 'detachBuffer';
  const cells = runtime(call).device.shared.bsend;
  const epoch = Atomics.load(cells, CELL.EPOCH);
  const size = Atomics.exchange(cells, CELL.ATTACHED, 0);
  if (size === 0) throw mpiError(ERR_BUFFER, call, 'no buffer is attached to this process');
  const kept = mine !== null && mine.cells === cells && mine.epoch === epoch ? mine.buffer : new Uint8Array(size);
  mine = null;
  // Wait for the bytes in use to drain. waitAsync keeps no event loop alive; the timer does (and
  // re-checks, in case a release's notify came between the load and the wait).
  for (;;) {
    const used = Atomics.load(cells, CELL.USED);
    if (used === 0) return kept;
    const woken = waitAsync(cells, CELL.USED, used);
    if (woken === null) continue;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([woken, new Promise((resolve) => (timer = setTimeout(resolve, 50)))]);
    clearTimeout(timer);
  }
}

/**
 * Reserves room for a buffered send of `bytes` bytes in the attached buffer; returns what to pass to
 * releaseBsend once the send completes.
 * @throws MPIError(ERR_BUFFER) naming `call` when none is attached or it has no room.
 */
export function reserveBsend(call: string, bytes: number): { cells: Int32Array; need: number } {
  const cells = runtime(call).device.shared.bsend;
  const need = bytes + BSEND_OVERHEAD;
  for (;;) {
    const size = Atomics.load(cells, CELL.ATTACHED);
    if (size === 0) throw mpiError(ERR_BUFFER, call, 'no buffer is attached for buffered sends: call MPI.attachBuffer(bytes) first');
    const used = Atomics.load(cells, CELL.USED);
    if (used + need > size) {
      throw mpiError(ERR_BUFFER, call, `the attached buffer has ${size - used} of ${size} bytes free; this message needs ${need} (${bytes} bytes + BSEND_OVERHEAD ${BSEND_OVERHEAD}): attach a larger buffer or wait for buffered sends to complete`);
    }
    if (Atomics.compareExchange(cells, CELL.USED, used, used + need) === used) return { cells, need };
  }
}

/** Gives a buffered send's bytes back (its standard send completed); wakes a detach waiting for them. */
export function releaseBsend(cells: Int32Array, need: number): void {
  if (Atomics.sub(cells, CELL.USED, need) === need) Atomics.notify(cells, CELL.USED);
}
