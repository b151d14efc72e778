/**
 * The independent data access of a File (MPI 4.0 14.4): reading and writing
 * the file byte runs of a view with node:fs positional calls on the
 * process's one FileHandle, and the buffer side of every access (the
 * BufSpec packed into, or unpacked from, the view's data stream; external32
 * byte order). api/file-collective.ts does the two-phase form of the
 * collective calls, api/file.ts the File object around both.
 *
 * Reads stop at the end of the file: the status counts the bytes of the
 * data stream read before it (MPI 4.0 14.4.1), and only those are unpacked.
 * A write of a run that the OS takes in part continues where it stopped.
 * In atomic mode (setAtomicity(true)) every access holds the file's lock
 * (the owner process of the shared file pointer grants it, file-shared-pointer.ts)
 * from its first run to its last, so a non-contiguous access is atomic
 * against every other access of the file's processes (MPI 4.0 14.6.1).
 *
 * Data sieving (io/sieve.ts; hints romio_ds_read / romio_ds_write): with a
 * sieve buffer, runs that go forward and fit it are read in one pread of the
 * extent that covers them; a write reads that extent, patches its pieces in
 * and writes it back, which api/file.ts runs under the file's lock.
 */
import type { FileHandle } from 'node:fs/promises';
import { fileError, gatherPieces, piecesBytes, planSieve, scatterPieces, swapPacked, type Runs, type ViewMap } from '../io/index.ts';
import { ERR_ARG, ERR_TYPE, mpiError } from '../util/index.ts';
import { describe, packedOf, recvAreaOf, resolveBuf, unpackArea, type ResolvedBuf } from './buffer.ts';
import { Request } from './request.ts';
import { Status } from './status.ts';

/** What an access needs of its File. */
export interface FileAccess {
  readonly _fh: FileHandle;
  readonly path: string;
  readonly _view: ViewMap;
  readonly _datarep: 'native' | 'external32';
}

/** A buffer argument of a data access, resolved: whole etypes of the view. */
export function resolveAccessBuf(spec: unknown, etypeSize: number, call: string): ResolvedBuf {
  const rb = resolveBuf(spec, call, 'buf');
  if (rb.packedBytes % etypeSize !== 0) {
    throw mpiError(ERR_TYPE, call, `buf holds ${rb.packedBytes} bytes (${rb.count} items of ${rb.datatype.name}), not a whole number of the view's etype (${etypeSize} bytes)`);
  }
  return rb;
}

/** The bytes a write puts in the file: the packed items, in the view's data representation (never the user's memory when converted). */
export function bytesToWrite(rb: ResolvedBuf, datarep: string): Uint8Array {
  if (datarep !== 'external32') return packedOf(rb);
  const bytes = rb.contiguous === null ? packedOf(rb) : rb.contiguous.slice();
  swapPacked(bytes, rb.count, rb.map);
  return bytes;
}

/** Where a read lands before finishRead: the user's memory when contiguous, else a packed area. */
export function readArea(rb: ResolvedBuf): Uint8Array {
  return recvAreaOf(rb);
}

/** After a read of `bytes` bytes into `area`: converts from external32, copies into the user's layout. */
export function finishRead(rb: ResolvedBuf, area: Uint8Array, bytes: number, datarep: string): void {
  if (datarep === 'external32') swapPacked(area.subarray(0, bytes), Math.ceil(bytes / Math.max(1, rb.map.size)), rb.map);
  unpackArea(rb, area, bytes);
}

/** Status of a data access: count is the bytes moved (status.getCount(datatype) divides). */
export function accessStatus(bytes: number): Status {
  return new Status()._set(-1, -1, bytes, 0, false);
}

/** Writes data[0 ..] to the runs, in order; `sieve` > 0: extents of up to that many bytes read, patched and written back. */
export async function writeRuns(f: FileAccess, runs: Runs, data: Uint8Array, call: string, sieve = 0): Promise<void> {
  let at = 0;
  for (const x of sieve > 0 ? planSieve(runs, sieve) : oneByOne(runs)) {
    if (x.end - x.first === 1) {
      await writeFully(f._fh, data.subarray(at, at + x.length), x.offset, call, f.path);
      at += x.length;
      continue;
    }
    const extent = new Uint8Array(x.length);
    await readFully(f._fh, extent, x.offset, call, f.path);
    at += scatterPieces(x, runs, data, at, extent);
    await writeFully(f._fh, extent, x.offset, call, f.path);
  }
}

/** Reads the runs into area[0 ..], in order; returns the bytes read before the end of the file. `sieve` as writeRuns. */
export async function readRuns(f: FileAccess, runs: Runs, area: Uint8Array, call: string, sieve = 0): Promise<number> {
  let at = 0;
  for (const x of sieve > 0 ? planSieve(runs, sieve) : oneByOne(runs)) {
    if (x.end - x.first === 1) {
      const got = await readFully(f._fh, area.subarray(at, at + x.length), x.offset, call, f.path);
      at += got;
      if (got < x.length) break;
      continue;
    }
    const extent = new Uint8Array(x.length);
    const got = await readFully(f._fh, extent, x.offset, call, f.path);
    const copied = gatherPieces(x, runs, extent, got, area, at);
    at += copied;
    if (copied < piecesBytes(x, runs)) break;
  }
  return at;
}

/** The runs as extents of one run each: the access without sieving. */
function* oneByOne(runs: Runs): Generator<{ offset: number; length: number; first: number; end: number }> {
  for (let i = 0; i < runs.offsets.length; i++) yield { offset: runs.offsets[i]!, length: runs.lengths[i]!, first: i, end: i + 1 };
}

/** The most bytes one node:fs read or write is given (Node refuses lengths above 2 GiB - 1). */
const MAX_CALL_BYTES = 1 << 30;

/** pwrite until every byte is written. */
export async function writeFully(fh: FileHandle, bytes: Uint8Array, position: number, call: string, path: string): Promise<void> {
  let done = 0;
  try {
    while (done < bytes.length) {
      const { bytesWritten } = await fh.write(bytes, done, Math.min(bytes.length - done, MAX_CALL_BYTES), position + done);
      done += bytesWritten;
    }
  } catch (e) {
    throw fileError(e, call, path);
  }
}

/** pread until `bytes` is full or the file ends; returns the bytes read. */
export async function readFully(fh: FileHandle, bytes: Uint8Array, position: number, call: string, path: string): Promise<number> {
  let done = 0;
  try {
    while (done < bytes.length) {
      const { bytesRead } = await fh.read(bytes, done, Math.min(bytes.length - done, MAX_CALL_BYTES), position + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
  } catch (e) {
    throw fileError(e, call, path);
  }
  return done;
}

/** An offset argument, checked. @throws MPIError(ERR_ARG) unless an integer >= 0 */
export function checkOffset(offset: unknown, call: string): asserts offset is number {
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    throw mpiError(ERR_ARG, call, `offset is ${describe(offset)}: expected an integer >= 0 (etypes of the view)`);
  }
}

/** A nonblocking access: the request completes with the access; its status counts the bytes. */
export function requestOf(start: () => Promise<Status>, call: string): Request<void> {
  const p = start();
  const req: Request<void> = Request._fromPromise(p.then((st) => {
    req._r!.count = st._count;
  }), null, call);
  return req;
}
