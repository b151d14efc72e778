/**
 * The state of MPI.profile's hooks on this thread and the one place a hooked call runs
 * (profile.ts wraps the methods; lifecycle.ts runs init and finalize through lifecycleCall).
 * Kept apart from profile.ts, which imports the public classes, so that lifecycle.ts can import
 * it without a cycle.
 */
import { performance } from 'node:perf_hooks';

/** What a hook set may define; both are optional. */
export interface ProfileHooks {
  /**
   * Runs before the call; `target` is the object called on (the class for a static, undefined for
   * MPI.init/finalize). What it returns is handed to this set's after() for the same call (`token`).
   */
  before?(call: string, args: unknown[], target: unknown): unknown;
  /** Runs when the call ended: returned, threw, or its promise settled. `result` is the value or the error. */
  after?(call: string, result: unknown, durationNs: number, target: unknown, args: unknown[], token?: unknown): void;
}

/** The installed hook sets, in installation order (replaced, never mutated: a call keeps the sets it started with). */
export let hookSets: readonly ProfileHooks[] = [];
/** Depth of public calls in progress on this thread's stack (only depth 0 is reported). */
let depth = 0;

/** Sets the installed hook sets (profile.ts). */
export function setHookSets(sets: readonly ProfileHooks[]): void {
  hookSets = sets;
}

/** Whether a call starting now is reported: hooks are installed and no public call is on the stack. */
export function isReported(): boolean {
  return depth === 0 && hookSets.length > 0;
}

/** @internal MPI.init / MPI.finalize: runs `fn` as the call `call` when hooks are installed. */
export function lifecycleCall<T>(call: string, args: unknown[], fn: () => Promise<T>): Promise<T> {
  if (!isReported()) return fn();
  return hooked(call, undefined, args, fn as (...a: unknown[]) => unknown) as Promise<T>;
}

/**
 * One reported call: before hooks, `method` applied to `target` with `args` (its synchronous part at
 * depth 1), after hooks when it ends. No closure per call; with one hook set (the common case, and
 * the trace) its token is kept in a local, with several in an array.
 */
export function hooked(call: string, target: unknown, args: unknown[], method: (...a: unknown[]) => unknown): unknown {
  const active = hookSets;
  let token: unknown;
  if (active.length === 1) {
    token = active[0]!.before?.(call, args, target);
  } else {
    const tokens: unknown[] = [];
    for (let i = 0; i < active.length; i++) tokens.push(active[i]!.before?.(call, args, target));
    token = tokens;
  }
  const start = performance.now();
  let out: unknown;
  depth++;
  try {
    out = method.apply(target, args);
  } catch (e) {
    depth--;
    finish(active, call, e, start, target, args, token);
    throw e;
  }
  depth--;
  if (out instanceof Promise) {
    return out.then(
      (v: unknown) => { finish(active, call, v, start, target, args, token); return v; },
      (e: unknown) => { finish(active, call, e, start, target, args, token); throw e; },
    );
  }
  finish(active, call, out, start, target, args, token);
  return out;
}

function finish(active: readonly ProfileHooks[], call: string, result: unknown, start: number, target: unknown, args: unknown[], token: unknown): void {
  const end = performance.now();
  const durationNs = Math.max(0, Math.round((end - start) * 1e6));
  if (active.length === 1) {
    active[0]!.after?.(call, result, durationNs, target, args, token);
    return;
  }
  const tokens = token as unknown[];
  for (let i = active.length - 1; i >= 0; i--) {
    active[i]!.after?.(call, result, durationNs, target, args, tokens[i]);
  }
}
