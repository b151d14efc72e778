/**
 * MPI.abort: ends every process of the job. Apart from lifecycle.ts so that
 * Comm (comm.ts, whose ERRORS_ARE_FATAL ends the job) and File reach it
 * without importing lifecycle.ts, which imports the predefined communicators,
 * which import comm.ts: that cycle kept the API's modules in one knot.
 */
import { isMainThread } from 'node:worker_threads';
import { isInitialized, runtime, type ThreadRuntime } from '../runtime/index.ts';
import type { PmiClient } from '../pmi/index.ts';
import type { Comm } from './comm.ts';

/**
 * Ends every process of the job; mpiexec exits with `errorcode`.
 * @param comm the communicator named in the message (default COMM_WORLD): every process ends whichever it is
 * @example MPI.abort(3);
 */
export function abort(errorcode = 1, comm?: Comm): never {
  const code = Number.isInteger(errorcode) ? errorcode & 0xff : 1;
  const where = comm?.name ?? 'COMM_WORLD';
  if (!isMainThread) abortFromWorker(errorcode, where);
  const pmi = isInitialized() ? safePmi() : null;
  if (pmi !== null) void pmi.abort(code, `MPI.abort(${errorcode}) on ${where}`);
  process.stderr.write(`MPI.abort(${errorcode}) called on ${where}\n`);
  process.exit(code === 0 ? 1 : code);
}

/** How long a worker that called MPI.abort waits for the main thread before killing the process itself. */
const WORKER_ABORT_GRACE_MS = 5000;

/**
 * MPI.abort in an MPI.Worker: only the main thread can end the process with the error code (and
 * tell the launcher), so the worker hands the abort over through shared memory and stops. A main
 * thread that never returns to its event loop is overruled after WORKER_ABORT_GRACE_MS (SIGKILL).
 */
function abortFromWorker(errorcode: number, where: string): never {
  const rt = safeRuntime();
  if (rt === null || !rt.device.shared.layout.multithreaded) process.exit(Number.isInteger(errorcode) && (errorcode & 0xff) !== 0 ? errorcode & 0xff : 1);
  rt.device.shared.requestAbort(Number.isInteger(errorcode) ? errorcode : 1, rt.device.opts.threadId);
  process.stderr.write(`MPI.abort(${errorcode}) called on ${where} in worker thread ${rt.device.opts.threadId}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, WORKER_ABORT_GRACE_MS);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: the process has been killed');
}

function safeRuntime(): ThreadRuntime | null {
  try {
    return runtime('abort');
  } catch {
    return null;
  }
}

function safePmi(): PmiClient | null {
  try {
    return runtime('abort').pmi;
  } catch {
    return null;
  }
}
