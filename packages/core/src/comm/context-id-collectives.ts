/**
 * The collectives a context-id allocation runs (ContextIdCollectives,
 * context-id-stages.ts), built from coll/ over any CollPt2pt, and the tags
 * and priorities that keep concurrent creations apart.
 *
 * Source: papers/context-id-allocation.txt, section 3 (the BAND allreduce over
 * the mask; group collectives distinguished by the user's tag in a reserved
 * part of the tag space; priority by <parent context id, tag>); MPICH
 * src/mpi/comm/contextid.c (comm-collective creations use a tag no
 * createGroup can use).
 *
 * Tags on the wire:
 * ```
 *   0 .. TAG_UB (2^30 - 1)          user point-to-point; comm collectives (on ctx + 1: sequence mod 2^20
 *                                   and the call's signature above it, util/coll-tag.ts)
 *   2^30 + t, t in 0 .. TAG_UB      createGroup(group, t) on the parent's ctx + 2
 * ```
 * One creation runs all its collectives (allgather, barrier, allreduce rounds)
 * with one tag. That is safe: they run one after another over the same
 * participants, every algorithm sends to each peer exactly the messages that
 * peer receives, in order, and MPI order holds per (source, tag), so a later
 * round's message can only match a later round's receive.
 *
 * Priorities (Listing 1.1, lines 16-19; smaller wins): createGroup uses its
 * user tag t; a comm-collective creation (dup, split, create) uses
 * 2^30 + its collective sequence number, so it is distinct from every
 * createGroup on the same parent and from other nonblocking creations (idup)
 * in flight on that parent, and every member computes the same value.
 */
import { allreduce, barrier, DEFAULT_COLL_TUNING, type ByteOp, type CollOptions, type CollPt2pt } from '../coll/index.ts';
import { MAX_MASK_WORDS } from './context-id-layout.ts';
import type { ContextIdCollectives } from './context-id-stages.ts';

/** The first tag above TAG_UB (api/constants.ts): group-collective traffic lives at and above it. */
export const GROUP_COLL_TAG_BASE = 2 ** 30;

/**
 * The wire tag of createGroup(group, tag)'s collectives (on the parent's group-collective context).
 * @param userTag 0..TAG_UB (checked by the API layer)
 */
export function groupCollTag(userTag: number): number {
  return GROUP_COLL_TAG_BASE + userTag;
}

/**
 * The allocation priority tag of a comm-collective creation (dup, idup, split, create): above every
 * createGroup tag and below NO_PRIORITY (2^31 - 1).
 * @param sequence the parent's collective sequence number of this creation
 */
export function collectivePriorityTag(sequence: number): number {
  return GROUP_COLL_TAG_BASE + (sequence % (GROUP_COLL_TAG_BASE - 1));
}

/** Bitwise AND: a byte-wise AND is the word-wise AND of the Uint32 mask words, at any alignment. */
const BAND_U32: ByteOp = {
  combine(inBytes, inoutBytes) {
    for (let i = 0; i < inoutBytes.length; i++) inoutBytes[i]! &= inBytes[i]!;
  },
  commute: true,
  itemBytes: 4,
};

/**
 * The mask allreduce is latency-bound: at most 513 words (2052 bytes), just over
 * coll's short-message threshold (2048, MPICH's), where Rabenseifner would take
 * 2 log p rounds instead of recursive doubling's log p. MPICH's own mask (64
 * words) is always short; keep ours short too, in every mode (eager or not), so
 * base rounds cost one recursive-doubling allreduce like the eager one.
 */
const MASK_ALLREDUCE: CollOptions = {
  tuning: { ...DEFAULT_COLL_TUNING, allreduceShortBytes: Math.max(DEFAULT_COLL_TUNING.allreduceShortBytes, 4 * (MAX_MASK_WORDS + 1)) },
};

/**
 * The allocator's barrier and BAND allreduce over the participants behind `pt`, all with `tag`.
 * @param pt point-to-point among the participants (the parent's collective context, or a GroupPt2pt)
 * @param tag the creation's wire tag
 */
export function contextIdCollectives(pt: CollPt2pt, tag: number): ContextIdCollectives {
  return {
    async allreduceBand(words: Uint32Array): Promise<Uint32Array> {
      await allreduce(pt, tag, null, new Uint8Array(words.buffer, words.byteOffset, words.byteLength), BAND_U32, MASK_ALLREDUCE);
      return words;
    },
    barrier: () => barrier(pt, tag),
  };
}
