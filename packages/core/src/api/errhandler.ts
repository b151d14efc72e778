/**
 * Error handlers (API.md Part 2 "Attributes, info and error handlers"; MPI
 * 4.0 section 9.3): Errhandler, the predefined ERRORS_RETURN,
 * ERRORS_ARE_FATAL and ERRORS_ABORT, and the one place where an MPIError
 * leaving a communicator's call meets its handler.
 *
 * ERRORS_RETURN is the default of every communicator: the call throws (or its
 * promise rejects) with the MPIError, as API.md Part 1 says. The other
 * handlers act first:
 * - a user handler (Errhandler.create(fn)) runs fn(comm, error), then the call
 *   throws as with ERRORS_RETURN (API.md); an exception from fn replaces it;
 * - ERRORS_ARE_FATAL writes the error, the rank in COMM_WORLD and the
 *   communicator to stderr and ends the job (MPI.abort with the error class,
 *   so mpiexec names the rank and exits with that code);
 * - ERRORS_ABORT (MPI 4.0) does the same on the communicator: tsmpi ends the
 *   whole job, which MPI allows (MPI.abort may end more than `comm`).
 *
 * Where (the single place): a communicator whose handler is not
 * ERRORS_RETURN gets, on that wrapper object, its public methods replaced by
 * routing ones (routeErrors): each calls the class's method and hands a
 * synchronous MPIError, a rejection of the returned promise, or the failure
 * of a returned Request's wait()/test() to the handler. ERRORS_RETURN removes
 * them again. So the default costs nothing on any call, and no call checks
 * for a handler itself. A handler is per thread (a function cannot cross
 * threads): set it in each thread that uses the communicator. New
 * communicators inherit their parent's handler (MPI 4.0 7.4, comm.ts).
 * Errors of Request.waitall/waitany/testall (static, several communicators)
 * are not routed.
 */
import { MPIError, ERR_ARG, mpiError } from '../util/index.ts';
import { describe } from './buffer.ts';
import { Request } from './request.ts';

/** What a handler is: the three predefined ones, or a user function. */
type Kind = 'return' | 'fatal' | 'abort' | 'user';

/** The object an error handler is attached to (a Comm; Win and File later). */
export interface ErrhandlerTarget {
  readonly name: string;
}

/** A user handler: called with the communicator and the error, before the call throws it. */
export type ErrhandlerFn = (obj: any, error: MPIError) => void;

/** An MPI error handler. @example comm.setErrhandler(MPI.Errhandler.create((c, e) => log(c.name, e.message))); */
export class Errhandler {
  /** @internal */
  readonly _kind: Kind;
  /** @internal the user's function (null for the predefined handlers) */
  readonly _fn: ErrhandlerFn | null;
  /** @internal */
  _freed = false;

  /** @internal Use Errhandler.create. */
  constructor(kind: Kind, fn: ErrhandlerFn | null) {
    this._kind = kind;
    this._fn = fn;
  }

  /**
   * A handler that runs `fn(comm, error)` before the failing call throws (MPI_Comm_create_errhandler).
   * @throws MPIError(ERR_ARG) when fn is not a function
   * @example const h = MPI.Errhandler.create((comm, err) => console.error(comm.name, err.errorClass));
   */
  static create(fn: ErrhandlerFn): Errhandler {
    if (typeof fn !== 'function') throw mpiError(ERR_ARG, 'Errhandler.create', `fn is ${describe(fn)}: expected a function (comm, error) => void`);
    return new Errhandler('user', fn);
  }

  /**
   * User release: communicators it is set on keep it (MPI_Errhandler_free).
   * @throws MPIError(ERR_ARG) for a predefined or already freed handler
   */
  free(): void {
    const call = 'Errhandler.free';
    if (this._kind !== 'user') throw mpiError(ERR_ARG, call, `${this.toString()} is predefined and cannot be freed`);
    if (this._freed) throw mpiError(ERR_ARG, call, 'the error handler has already been freed');
    this._freed = true;
  }

  toString(): string {
    return this._kind === 'return' ? 'ERRORS_RETURN' : this._kind === 'fatal' ? 'ERRORS_ARE_FATAL' : this._kind === 'abort' ? 'ERRORS_ABORT' : 'Errhandler(user)';
  }
}

/** The default: the call throws / rejects with the MPIError. */
export const ERRORS_RETURN = new Errhandler('return', null);
/** The job ends at once; mpiexec prints the error and names the rank. */
export const ERRORS_ARE_FATAL = new Errhandler('fatal', null);
/** MPI 4.0: the processes of the communicator end (tsmpi: the job). */
export const ERRORS_ABORT = new Errhandler('abort', null);

/** A handler argument, checked: a live Errhandler. */
export function checkErrhandler(h: unknown, call: string): Errhandler {
  if (!(h instanceof Errhandler)) throw mpiError(ERR_ARG, call, `errhandler is ${describe(h)}: expected an Errhandler (MPI.ERRORS_RETURN, MPI.ERRORS_ARE_FATAL, MPI.ERRORS_ABORT or Errhandler.create(fn))`);
  if (h._freed) throw mpiError(ERR_ARG, call, 'the error handler has been freed');
  return h;
}

/** How the job ends for ERRORS_ARE_FATAL and ERRORS_ABORT (abort.ts's abort, passed in). */
export type AbortFn = (errorcode: number, target: ErrhandlerTarget) => never;

/**
 * Runs `h` for `error` on `target`: the user's function, or the job's end. Returns when the call
 * should then throw `error` (ERRORS_RETURN and user handlers).
 */
export function invokeErrhandler(h: Errhandler, target: ErrhandlerTarget, error: MPIError, worldRank: number, abort: AbortFn): void {
  if (h._kind === 'return') return;
  if (h._kind === 'user') {
    h._fn!(target, error);
    return;
  }
  const which = h._kind === 'fatal' ? 'ERRORS_ARE_FATAL' : 'ERRORS_ABORT';
  process.stderr.write(`tsmpi: rank ${worldRank}: ${error.message} (${which} on ${target.name})\n`);
  abort(error.errorClass === 0 ? 1 : error.errorClass, target);
}

/** Errors a handler has seen: a routed method that calls another routed one hands its error over once. */
const handled = new WeakSet<MPIError>();

function once(onError: (e: MPIError) => unknown, e: unknown): unknown {
  if (!(e instanceof MPIError) || handled.has(e)) return e;
  handled.add(e);
  return onError(e);
}

/** Public methods that never route: they manage the handler itself. */
const NOT_ROUTED = new Set(['constructor', 'setErrhandler', 'getErrhandler', 'callErrhandler', 'toString']);
/** The routed method names of each class (its prototype chain), computed once per class. */
const methodsByClass = new Map<object, string[]>();

function routedMethods(obj: object): string[] {
  const proto = Object.getPrototypeOf(obj) as object;
  let names = methodsByClass.get(proto);
  if (names !== undefined) return names;
  const found = new Set<string>();
  for (let p: object | null = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const n of Object.getOwnPropertyNames(p)) {
      if (n.startsWith('_') || NOT_ROUTED.has(n)) continue;
      const d = Object.getOwnPropertyDescriptor(p, n)!;
      if (typeof d.value === 'function') found.add(n);
    }
  }
  names = [...found];
  methodsByClass.set(proto, names);
  return names;
}

/**
 * Routes the MPIErrors of `obj`'s public calls through `onError` (see the file comment), or, with
 * onError null, removes the routing. `onError` returns the error the call then throws.
 */
export function routeErrors(obj: object, onError: ((e: MPIError) => unknown) | null): void {
  for (const name of routedMethods(obj)) {
    if (onError === null) {
      delete (obj as Record<string, unknown>)[name];
      continue;
    }
    // The method is looked up per call, not kept: MPI.profile (profile.ts) may wrap it on the prototype later.
    const proto = Object.getPrototypeOf(obj) as Record<string, (...a: unknown[]) => unknown>;
    Object.defineProperty(obj, name, {
      configurable: true,
      writable: true,
      enumerable: false,
      value: function routed(this: object, ...args: unknown[]): unknown {
        let out: unknown;
        try {
          out = proto[name]!.apply(this, args);
        } catch (e) {
          throw once(onError, e);
        }
        if (out instanceof Promise) return out.catch((e: unknown) => { throw once(onError, e); });
        if (out instanceof Request) routeRequest(out, onError);
        return out;
      },
    });
  }
}

/** A request of a routed call: its wait() and test() failures go through the handler too. */
function routeRequest(req: Request<unknown>, onError: (e: MPIError) => unknown): void {
  const wait = req.wait;
  const test = req.test;
  Object.defineProperty(req, 'wait', {
    configurable: true,
    value: function routedWait(this: Request<unknown>): Promise<unknown> {
      return wait.call(this).catch((e: unknown) => { throw once(onError, e); });
    },
  });
  Object.defineProperty(req, 'test', {
    configurable: true,
    value: function routedTest(this: Request<unknown>): boolean {
      try {
        return test.call(this);
      } catch (e) {
        throw once(onError, e);
      }
    },
  });
}
