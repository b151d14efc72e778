/**
 * MPI constants that the communicator and group logic returns (API.md,
 * "Predefined objects"). The values follow MPICH where it has them, except
 * ANY_SOURCE, PROC_NULL and UNDEFINED, whose values API.md fixes. The API layer
 * re-exports these rather than defining its own, so both layers agree.
 */

/** UNDEFINED (a non-member's group rank) and PROC_NULL (translateRanks maps it to itself): util/sentinels.ts. */
export { UNDEFINED, PROC_NULL } from '../util/index.ts';

/** Group/communicator comparison: same members in the same order (and, for comms, same context). */
export const IDENT = 0;
/** Communicator comparison: same group, different context. */
export const CONGRUENT = 1;
/** Same members, different order. */
export const SIMILAR = 2;
/** Different members. */
export const UNEQUAL = 3;
