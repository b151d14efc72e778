/**
 * The engine's datatype record: one descriptor plus its life-cycle flags
 * (committed, freed), which the API layer's Datatype wraps.
 *
 * Contract: predefined records are created committed and cannot be freed.
 * commit() flattens the type map (so a layout too large to flatten fails at
 * commit, not at the first send). free() is the user's release: the record
 * still answers typeMap for operations already started with it, but
 * checkUsable / checkConstructible refuse it for new ones. The flags are
 * plain booleans so the API layer can mirror them into a shared object table.
 */
import { ERR_TYPE, mpiError } from '../util/index.ts';
import { descriptorToString, predefinedDescriptor, type TypeDescriptor } from './descriptor.ts';
import type { TypeCode } from './predefined.ts';
import { typeInfoOf, typeMapOf, type TypeInfo, type TypeMap } from './type-map.ts';

/** One datatype as the engine sees it. */
export class DatatypeRecord {
  readonly descriptor: TypeDescriptor;
  readonly isPredefined: boolean;
  #isCommitted: boolean;
  #isFreed = false;

  /**
   * Wraps a descriptor; validates that its layout is addressable.
   * @throws MPIError(ERR_ARG) when the layout is too large (see typeInfoOf).
   */
  constructor(descriptor: TypeDescriptor) {
    this.descriptor = descriptor;
    this.isPredefined = descriptor.kind === 'predefined';
    this.#isCommitted = this.isPredefined;
    typeInfoOf(descriptor);
  }

  get isCommitted(): boolean {
    return this.#isCommitted;
  }

  get isFreed(): boolean {
    return this.#isFreed;
  }

  /** Size, extent and bounds (no flattening). */
  get info(): TypeInfo {
    return typeInfoOf(this.descriptor);
  }

  /** The flattened type map (built on first use; commit builds it). */
  get typeMap(): TypeMap {
    return typeMapOf(this.descriptor);
  }

  /**
   * Marks the type committed and flattens it. Committing twice is allowed.
   * @throws MPIError(ERR_TYPE) when the type has been freed.
   * @throws MPIError(ERR_NO_MEM) when the type has too many blocks to flatten.
   */
  commit(): void {
    if (this.#isFreed) throw mpiError(ERR_TYPE, 'Datatype.commit', `${this.toString()} has been freed`);
    typeMapOf(this.descriptor);
    this.#isCommitted = true;
  }

  /**
   * The user's release.
   * @throws MPIError(ERR_TYPE) for a predefined type or one already freed.
   */
  free(): void {
    if (this.isPredefined) throw mpiError(ERR_TYPE, 'Datatype.free', `${this.toString()} is predefined and cannot be freed`);
    if (this.#isFreed) throw mpiError(ERR_TYPE, 'Datatype.free', `${this.toString()} has already been freed`);
    this.#isFreed = true;
  }

  /** "Datatype(vector(2, 3, 4, INT32))". */
  toString(): string {
    return `Datatype(${descriptorToString(this.descriptor)})`;
  }
}

const PREDEFINED_RECORDS: DatatypeRecord[] = [];

/** The shared record of a predefined type (aliases share their target's record). */
export function predefinedRecord(code: TypeCode): DatatypeRecord {
  let r = PREDEFINED_RECORDS[code];
  if (r === undefined) {
    r = new DatatypeRecord(predefinedDescriptor(code));
    PREDEFINED_RECORDS[code] = r;
  }
  return r;
}

/**
 * Checks a datatype before a communication or pack call uses it.
 * @throws MPIError(ERR_TYPE) when it is freed or not committed.
 */
export function checkUsable(call: string, record: DatatypeRecord): void {
  if (record.isFreed) throw mpiError(ERR_TYPE, call, `${record.toString()} has been freed`);
  if (!record.isCommitted) throw mpiError(ERR_TYPE, call, `${record.toString()} is not committed; call commit() before using it`);
}

/**
 * Checks a datatype used as the base of a type constructor (it need not be committed).
 * @param what the argument's name in messages, for example 'base' or 'types[2]'.
 * @throws MPIError(ERR_TYPE) when it is freed.
 */
export function checkConstructible(call: string, record: DatatypeRecord, what: string): void {
  if (record.isFreed) throw mpiError(ERR_TYPE, call, `${what} (${record.toString()}) has been freed`);
}

