/** MPI constants of API.md (the sentinels live in util/sentinels.ts, shared by every layer). */
export { ANY_SOURCE, ANY_TAG, PROC_NULL, UNDEFINED } from '../util/index.ts';
/** Largest tag a user may use; tags above it are reserved for the library (group collectives). */
export const TAG_UB = 2 ** 30 - 1;
export const IDENT = 0;
export const CONGRUENT = 1;
export const SIMILAR = 2;
export const UNEQUAL = 3;
export const COMM_TYPE_SHARED = 1;
/** The root of a collective on an intercommunicator passes ROOT (MPI 4.0 6.2.2; MPICH's value). */
export const ROOT = -3;

/** The in-place marker: a unique constant accepted wherever MPI allows in-place operation. */
export const IN_PLACE: unique symbol = Symbol.for('tsmpi.IN_PLACE') as never;
export type InPlace = typeof IN_PLACE;

export { THREAD_LEVELS, type ThreadLevel } from '../runtime/index.ts';
