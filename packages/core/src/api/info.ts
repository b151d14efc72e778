/**
 * Info: MPI's (key, value) hints object (API.md Part 2 "Attributes, info and
 * error handlers"; MPI 4.0 section 10). Keys and values are strings; keys keep
 * the order they were first set in (MPI_Info_get_nthkey's order).
 *
 * An Info lives in the thread that made it (it holds JavaScript strings, not
 * shared memory). Limits are MPICH's: a key of 1..255 characters
 * (MPI_MAX_INFO_KEY), a value of at most 1024 (MPI_MAX_INFO_VAL).
 *
 * Info.NULL is MPI_INFO_NULL: accepted wherever an info argument may be
 * omitted, any operation on it is ERR_INFO. Info.ENV is MPI_INFO_ENV (MPI 4.0
 * 11.2.4): the keys `command`, `argv`, `maxprocs`, `wdir`, `host` and
 * `thread_level` of this process, read-only (ERR_INFO when changed).
 *
 * Errors (checked before anything changes): a freed info or Info.NULL:
 * ERR_INFO; a bad key: ERR_INFO_KEY; a bad value: ERR_INFO_VALUE; deleting a
 * key that is not there: ERR_INFO_NOKEY.
 */
import os from 'node:os';
import { ERR_INFO, ERR_INFO_KEY, ERR_INFO_NOKEY, ERR_INFO_VALUE, mpiError } from '../util/index.ts';
import { runtimeOrNull } from '../runtime/index.ts';
import { describe } from './buffer.ts';

/** MPI_MAX_INFO_KEY (MPICH). */
export const MAX_INFO_KEY = 255;
/** MPI_MAX_INFO_VAL (MPICH). */
export const MAX_INFO_VAL = 1024;

type Kind = 'user' | 'null' | 'env';

/** An MPI info object: string keys to string values. @example const info = new MPI.Info({ mpi_assert_no_any_tag: 'true' }); */
export class Info {
  readonly #entries = new Map<string, string>();
  #kind: Kind = 'user';
  #freed = false;

  /**
   * A new info object holding `entries`.
   * @throws MPIError(ERR_INFO_KEY / ERR_INFO_VALUE) for a bad entry
   */
  constructor(entries?: Record<string, string>) {
    if (entries === undefined) return;
    if (entries === null || typeof entries !== 'object') throw mpiError(ERR_INFO, 'Info', `entries is ${describe(entries)}: expected an object of string values`);
    for (const [k, v] of Object.entries(entries)) this.set(k, v);
  }

  static #special(kind: Kind, entries: [string, string][]): Info {
    const info = new Info();
    for (const [k, v] of entries) info.#entries.set(k, v);
    info.#kind = kind;
    return info;
  }

  /** @internal 'user', or 'null' / 'env' for the predefined objects. */
  get _kindOf(): Kind {
    return this.#kind;
  }

  static #null: Info | null = null;
  static #env: Info | null = null;

  /** MPI_INFO_NULL: "no info"; every operation on it is ERR_INFO. */
  static get NULL(): Info {
    return (Info.#null ??= Info.#special('null', []));
  }

  /** MPI_INFO_ENV: how this process was started (read-only). */
  static get ENV(): Info {
    return (Info.#env ??= Info.#special('env', [
      ['command', process.argv[1] ?? process.argv0],
      ['argv', process.argv.slice(2).join(' ')],
      ['maxprocs', String(runtimeOrNull()?.job?.size ?? 1)],
      ['wdir', process.cwd()],
      ['host', os.hostname()],
      ['thread_level', `MPI_THREAD_${(runtimeOrNull()?.threadLevel ?? 'single').toUpperCase()}`],
    ]));
  }

  /** @internal Throws ERR_INFO for a freed info or Info.NULL (and, when changing, Info.ENV). */
  _check(call: string, isChange = false): void {
    const kind = this._kindOf;
    if (kind === 'null') throw mpiError(ERR_INFO, call, 'info is Info.NULL: expected a live Info');
    if (this.#freed) throw mpiError(ERR_INFO, call, 'info has been freed');
    if (isChange && kind === 'env') throw mpiError(ERR_INFO, call, 'Info.ENV is read-only: dup() it to change a copy');
  }

  /**
   * Sets key to value (replacing any value it had).
   * @throws MPIError(ERR_INFO_KEY) unless key is a string of 1..255 characters; ERR_INFO_VALUE unless value is a string of at most 1024
   */
  set(key: string, value: string): void {
    const call = 'Info.set';
    this._check(call, true);
    checkKey(key, call);
    if (typeof value !== 'string' || value.length > MAX_INFO_VAL) {
      throw mpiError(ERR_INFO_VALUE, call, `value for ${key} is ${describe(value)}: expected a string of at most ${MAX_INFO_VAL} characters`);
    }
    this.#entries.set(key, value);
  }

  /** The value of key, or undefined. @throws MPIError(ERR_INFO_KEY) for a bad key */
  get(key: string): string | undefined {
    const call = 'Info.get';
    this._check(call);
    checkKey(key, call);
    return this.#entries.get(key);
  }

  /** Removes key. @throws MPIError(ERR_INFO_NOKEY) when the info does not hold it */
  delete(key: string): void {
    const call = 'Info.delete';
    this._check(call, true);
    checkKey(key, call);
    if (!this.#entries.delete(key)) throw mpiError(ERR_INFO_NOKEY, call, `key ${key} is not set in this info`);
  }

  /** The keys, in the order they were first set (MPI_Info_get_nthkey). */
  keys(): string[] {
    this._check('Info.keys');
    return [...this.#entries.keys()];
  }

  /** The number of keys (MPI_Info_get_nkeys). */
  get nkeys(): number {
    this._check('Info.nkeys');
    return this.#entries.size;
  }

  /** A new info object with the same entries (MPI_Info_dup). */
  dup(): Info {
    this._check('Info.dup');
    const copy = new Info();
    for (const [k, v] of this.#entries) copy.#entries.set(k, v);
    return copy;
  }

  /** Releases the info. @throws MPIError(ERR_INFO) for Info.NULL, Info.ENV or a freed info */
  free(): void {
    const call = 'Info.free';
    this._check(call);
    if (this._kindOf === 'env') throw mpiError(ERR_INFO, call, 'Info.ENV is predefined and cannot be freed');
    this.#freed = true;
  }

  /** @internal The entries (a copy), for a communicator's hints. */
  _entries(): [string, string][] {
    return [...this.#entries];
  }
}

function checkKey(key: unknown, call: string): asserts key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_INFO_KEY) {
    throw mpiError(ERR_INFO_KEY, call, `key is ${describe(key)}: expected a string of 1..${MAX_INFO_KEY} characters`);
  }
}

/**
 * An optional info argument: undefined or Info.NULL give null (no hints); a live Info its entries.
 * @throws MPIError(ERR_INFO) for anything else
 */
export function infoEntries(info: unknown, call: string): [string, string][] | null {
  if (info === undefined || info === Info.NULL) return null;
  if (!(info instanceof Info)) throw mpiError(ERR_INFO, call, `info is ${describe(info)}: expected an Info or Info.NULL`);
  info._check(call);
  return info._entries();
}
