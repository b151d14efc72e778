/**
 * MPI constants that the communicator and group logic returns (API.md,
 * "Predefined objects"). The values follow MPICH where it has them, except
 * ANY_SOURCE, PROC_NULL and UNDEFINED, whose values API.md fixes. The API layer
 * re-exports these rather than defining its own, so both layers agree.
 */

/** A rank or value that is not defined: e.g. a group rank of a non-member. */
export const UNDEFINED = -32766;
/** The null process: translateRanks maps it to itself. */
export const PROC_NULL = -2;

/** Group/communicator comparison: same members in the same order (and, for comms, same context). */
export const IDENT = 0;
/** Communicator comparison: same group, different context. */
export const CONGRUENT = 1;
/** Same members, different order. */
export const SIMILAR = 2;
/** Different members. */
export const UNEQUAL = 3;
