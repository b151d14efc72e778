/** Tiny assertions for test programs: a failure throws, the rank exits non-zero, mpiexec reports it. */
import * as MPI from '@tsmpi/core';

export function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`check failed on rank ${MPI.isInitialized() && !MPI.isFinalized() ? MPI.COMM_WORLD.rank : '?'}: ${what}`);
}

export function equal<T>(actual: T, expected: T, what: string): void {
  const a = JSON.stringify(actual, big);
  const e = JSON.stringify(expected, big);
  if (a !== e) throw new Error(`check failed on rank ${MPI.isInitialized() && !MPI.isFinalized() ? MPI.COMM_WORLD.rank : '?'}: ${what}: got ${a}, expected ${e}`);
}

function big(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v;
}

/** Resolves once `cond` holds (polled every millisecond); fails after 20 s (a deadlock guard, not a timing). */
export async function until(cond: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 20_000;
  while (!cond()) {
    check(Date.now() < giveUp, `${what} after 20 s`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Expects `fn` to throw (or reject with) an MPIError of `errorClass` whose call is `call`. */
export async function throwsMPI(fn: () => unknown, errorClass: number, call: string, what: string): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof MPI.MPIError)) throw new Error(`${what}: expected MPIError, got ${String(e)}`);
    if (e.errorClass !== errorClass) throw new Error(`${what}: expected errorClass ${MPI.errorString(errorClass)}, got ${e.message}`);
    if (e.call !== call) throw new Error(`${what}: expected call ${call}, got ${e.call} (${e.message})`);
    return;
  }
  throw new Error(`${what}: expected MPIError ${MPI.errorString(errorClass)} from ${call}, but nothing was thrown`);
}
