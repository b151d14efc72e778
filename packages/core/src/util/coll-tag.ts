/**
 * The layout of a tag on a communicator's collective context (CONTEXT_SUFFIX.COLL), shared by the
 * layer that makes the tags (coll/signature.ts, through the API's collective starts) and the device,
 * which matches them (match-queues.ts, receive-lanes.ts, lane-matcher.ts).
 *
 *   bit  29 ........ 20 19 ................ 0
 *        | signature  |  sequence number    |     (a tag stays within 0..TAG_UB = 2^30 - 1)
 *
 * The sequence number (the communicator's collective counter, mod 2^20) keeps concurrent
 * collectives apart; the signature says which collective sent the message (kind, form, root:
 * coll/signature.ts). The device matches a collective context's tags on the sequence bits only, so
 * a message of another collective made at the same point still meets the receive, whose completion
 * then sees the sender's whole tag and reports the mismatch (coll/mismatch.ts) instead of both
 * ranks waiting for a message that never comes (issue 39). On every other context a tag matches
 * exactly, as before: the mask is all ones there.
 */
import { CONTEXT_SUFFIX, CONTEXT_SUFFIX_BITS } from './sentinels.ts';

/** Bits of a collective tag that hold the sequence number. */
export const COLL_SEQ_BITS = 20;
/** The sequence bits of a collective tag: the bits the device matches on a collective context. */
export const COLL_SEQ_MASK = (1 << COLL_SEQ_BITS) - 1;
/** Bits of a collective tag above the sequence that hold the signature (30 - 20: the tag stays a non-negative TAG_UB). */
export const COLL_SIGNATURE_BITS = 10;

const SUFFIX_MASK = (1 << CONTEXT_SUFFIX_BITS) - 1;

/** The tag of collective number `seq` (any integer; taken mod 2^20) sent by a collective of `signature` (0..1023). */
export function collTag(seq: number, signature: number): number {
  return (seq & COLL_SEQ_MASK) | (signature << COLL_SEQ_BITS);
}

/** The signature bits of collective tag `tag`. */
export function collSignature(tag: number): number {
  return tag >>> COLL_SEQ_BITS;
}

/**
 * The bits of a tag that matching compares on context `ctx`: the sequence bits on a collective
 * context, every bit elsewhere. Two tags match when `((a ^ b) & tagMatchMask(ctx)) === 0` (or one is ANY).
 */
export function tagMatchMask(ctx: number): number {
  return (ctx & SUFFIX_MASK) === CONTEXT_SUFFIX.COLL ? COLL_SEQ_MASK : -1;
}
