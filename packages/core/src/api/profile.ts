/**
 * MPI.profile: profiling hooks, the PMPI idea in JavaScript (issue 41).
 *
 * A C MPI lets a tool intercept every call by relinking MPI_Send to its own
 * function, which calls PMPI_Send. Here `MPI.profile.use(hooks)` does the
 * same to the public classes: while at least one hook set is installed, each
 * public method on the prototypes (and each static) of hookedClasses() is
 * replaced by a wrapper that calls `before(call, args, target)`, the method,
 * then `after(call, result, durationNs, target, args)`; when the last set is
 * removed, the original methods are put back. What before() returns reaches
 * the same set's after() as `token` (a timer's start, a recorder's row). With no hooks, nothing is
 * wrapped, so a call costs exactly what it cost before (no test per call).
 *
 * Which calls: every own function-valued property of the prototypes of
 * hookedClasses() and of their ancestors (so methods installed later on them,
 * and new API, are hooked without a list), except `constructor`, `_`-prefixed
 * internals and `toString`; the classes' own static functions; and MPI.init
 * and MPI.finalize (lifecycle.ts asks `lifecycleHooks()`, as they are module
 * functions, not methods). A call's name is `Class.method` (`Comm.send`,
 * `Request.wait`, `Request.waitall`, `MPI.init`); a method shared by several
 * classes is named after the first class of hookedClasses() that has it
 * (CartComm's send is `Comm.send`). Getters (`rank`, `size`) are not calls.
 *
 * Nesting: only the outermost public call of a thread is reported. A public
 * method that calls another one synchronously (`send` through `isend`) is
 * one call; a call an async method makes after its first await is reported
 * on its own.
 *
 * Timing: before() runs just before the method; `durationNs` runs from then to
 * when it returned, or for a call that returns a Promise, to when the promise
 * settled (after() runs then). A call that returns a Request (isend, irecv,
 * ibcast...) ends when it returns the Request; its completion is seen in
 * Request.wait / test / waitall... which are hooked calls of their own.
 * `result` is the returned (or resolved) value, or the error thrown (or
 * rejected). `args` is the array the method is applied with: a hook may add
 * a missing optional argument (the trace passes its own Status to recv).
 *
 * Composition: hook sets run in the order installed for before() and in the
 * reverse order for after(), as nested PMPI layers would. A hook that throws
 * fails the call with its error.
 *
 * Threads: prototypes are per thread (a worker thread loads its own copy of
 * the library), so hooks are too: each thread installs its own.
 *
 * Instrumentation (internal, the trace recorder's): `instrument(wrap)` puts `wrap(call, method)`
 * in place of each hooked method, beneath any user hook set (the user's wrapper calls it, which
 * calls the original). Unlike a hook set it costs no argument array, token or closure per call:
 * the wrapper is made once per call name and knows that call's arguments (issue 41: the generic
 * wrapper cost the trace 0.5-0.7 µs per message). It counts its own nesting; users' hook sets keep
 * theirs, so each layer reports the outermost call of its thread.
 */
import { ERR_ARG, mpiError } from '../util/index.ts';
import { Comm } from './comm.ts';
import { Datatype } from './datatype.ts';
import { Errhandler } from './errhandler.ts';
import { Group } from './group.ts';
import { Info } from './info.ts';
import { Intercomm } from './intercomm-create.ts';
import { Message } from './message.ts';
import { Op } from './op.ts';
import { hooked, hookSets, isReported, setHookSets, type ProfileHooks } from './profile-hooks.ts';
import { Request } from './request.ts';
import { CartComm, DistGraphComm, GraphComm } from './topology-comm.ts';

/** The public classes whose calls are hooked, in naming order (see the file comment). */
function hookedClasses(): readonly (abstract new (...a: never[]) => unknown)[] {
  return [Comm, CartComm, GraphComm, DistGraphComm, Intercomm, Request, Message, Group, Datatype, Op, Info, Errhandler];
}
const SKIPPED = new Set(['constructor', 'toString', 'length', 'name', 'prototype']);
/** Each wrapped property's original descriptor, to put back when the last set goes. */
let originals: { owner: object; name: string; descriptor: PropertyDescriptor }[] = [];
/** A method and what instrumentation puts in its place. */
export type Method = (...a: unknown[]) => unknown;
/** @internal The installed instrumentation (one at a time: the trace recorder), or null. */
let instrumentation: ((call: string, method: Method) => Method) | null = null;

/**
 * Installs a hook set for every public call of this thread.
 * @param hooks an object with `before` and/or `after`
 * @returns a function that removes this set (removing it twice does nothing)
 * @throws MPIError(ERR_ARG) when hooks has neither before nor after, or they are not functions
 * @example
 *   const off = MPI.profile.use({ after: (call, _r, ns) => console.log(call, ns) });
 *   await MPI.COMM_WORLD.barrier();
 *   off();
 */
export function use(hooks: ProfileHooks): () => void {
  const h = hooks as { before?: unknown; after?: unknown } | null;
  if (typeof h !== 'object' || h === null || (h.before === undefined && h.after === undefined) ||
      (h.before !== undefined && typeof h.before !== 'function') || (h.after !== undefined && typeof h.after !== 'function')) {
    throw mpiError(ERR_ARG, 'profile.use', 'hooks must be an object with a before and/or an after function');
  }
  const first = hookSets.length === 0;
  setHookSets([...hookSets, hooks]);
  if (first) rewrap();
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    setHookSets(hookSets.filter((s) => s !== hooks));
    if (hookSets.length === 0) rewrap();
  };
}

/**
 * @internal Puts `wrap(call, method)` in place of every hooked method of this thread, beneath
 * users' hook sets (see the file comment); not public API (the trace recorder's).
 * @returns a function that puts the methods back (calling it twice does nothing)
 * @throws MPIError(ERR_ARG) when instrumentation is already installed on this thread
 */
export function instrument(wrap: (call: string, method: Method) => Method): () => void {
  if (instrumentation !== null) throw mpiError(ERR_ARG, 'profile.instrument', 'instrumentation is already installed on this thread');
  instrumentation = wrap;
  rewrap();
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    instrumentation = null;
    rewrap();
  };
}

/** The names of the calls hooked while a set is installed (for docs and tests). */
export function hookedCalls(): string[] {
  const names: string[] = ['MPI.init', 'MPI.finalize'];
  forEachCall((_owner, _name, call) => names.push(call));
  return names;
}

function forEachCall(visit: (owner: object, name: string, call: string) => void): void {
  const seen = new Set<object>();
  for (const cls of hookedClasses()) {
    const label = cls.name;
    if (!seen.has(cls)) {
      seen.add(cls);
      for (const name of Object.getOwnPropertyNames(cls)) {
        if (isCall(cls, name)) visit(cls, name, `${label}.${name}`);
      }
    }
    for (let p: object | null = cls.prototype as object; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
      if (seen.has(p)) continue;
      seen.add(p);
      for (const name of Object.getOwnPropertyNames(p)) {
        if (isCall(p, name)) visit(p, name, `${label}.${name}`);
      }
    }
  }
}

function isCall(owner: object, name: string): boolean {
  if (name.startsWith('_') || SKIPPED.has(name)) return false;
  const d = Object.getOwnPropertyDescriptor(owner, name)!;
  return typeof d.value === 'function' && d.get === undefined;
}

/** Puts the original methods back, then wraps them by the instrumentation and the hook sets installed now (if any). */
function rewrap(): void {
  unwrapAll();
  const wrap = instrumentation;
  const hooks = hookSets.length > 0;
  if (wrap === null && !hooks) return;
  forEachCall((owner, name, call) => {
    const descriptor = Object.getOwnPropertyDescriptor(owner, name)!;
    if (!descriptor.configurable) return;
    originals.push({ owner, name, descriptor });
    const original = descriptor.value as Method;
    const method = wrap === null ? original : wrap(call, original);
    Object.defineProperty(owner, name, {
      ...descriptor,
      value: !hooks ? method : function profiled(this: unknown, ...args: unknown[]): unknown {
        if (!isReported()) return method.apply(this, args);
        return hooked(call, this, args, method);
      },
    });
  });
}

function unwrapAll(): void {
  for (const { owner, name, descriptor } of originals) Object.defineProperty(owner, name, descriptor);
  originals = [];
}


/** MPI.profile: the hooks' public face. */
export const profile = Object.freeze({ use, calls: hookedCalls });
export type { ProfileHooks };
