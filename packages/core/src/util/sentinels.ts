/**
 * The MPI sentinels, in one place: every layer (the API's constants, the group
 * logic, the datatype engine's counts, the device's wildcard matching, the
 * context-id layout) imports them from here, so their values cannot drift apart.
 * API.md fixes ANY_SOURCE, ANY_TAG, PROC_NULL and UNDEFINED.
 */

/** Receive from any source (API.md). */
export const ANY_SOURCE = -1;
/** Receive with any tag (API.md). */
export const ANY_TAG = -1;
/** The device's wildcard in a matching source or tag: ANY_SOURCE and ANY_TAG, which are equal. */
export const ANY = -1;
/** The null process: communication with it completes at once (API.md). */
export const PROC_NULL = -2;
/** A value that is not defined: a non-member's rank, a count that is not whole, a split color (API.md). */
export const UNDEFINED = -32766;

/** The traffic classes of one communicator: the two low bits of its context ids (comm/context-id-layout.ts). */
export const CONTEXT_SUFFIX = {
  /** User point-to-point messages. */
  PT2PT: 0,
  /** Communicator-collective traffic (barrier, bcast, allreduce over the whole comm). */
  COLL: 1,
  /** Group-collective traffic (createGroup's allreduce/barrier over a group, by tag; an intercommunicator's local-group phases). */
  GROUP_COLL: 2,
  /** Intercommunicator bootstrap: createIntercomm's leaders, on the peer communicator, by the user's tag (api/intercomm.ts). */
  INTERCOMM_BOOT: 3,
} as const;
/** Bits of suffix below a context id's prefix. */
export const CONTEXT_SUFFIX_BITS = 2;
