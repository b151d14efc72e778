/**
 * The bit layout of a context id, and the ids the predefined communicators reserve.
 *
 * Source: papers/context-ids-wiki.txt ("What Is A Context ID?"), with two fixes
 * the wiki itself asks for: ids are unsigned 16-bit values (so the word index
 * never picks up sign bits; only `>>>` is used), and the lowest free bit is
 * allocated first (not the highest bit of the lowest word).
 *
 * ```
 *   bit 15                 7 6         2 1   0
 *      +--------------------+-----------+-----+
 *      | mask word index (9)| bit (5)   | sfx |     context id (uint16)
 *      +--------------------+-----------+-----+
 *      |<------- prefix (14 bits) ----->|
 *
 *   prefix = id >>> 2      word = id >>> 7      bit = (id >>> 2) & 31
 *   suffix 0: point-to-point   1: collective   2: group-collective   3: intercommunicator bootstrap
 * ```
 *
 * A communicator owns one prefix (its four ids); the mask holds one bit per
 * prefix (1 = free), so 16384 prefixes in 512 Uint32 words at most.
 *
 * Reserved prefixes (never allocated, never freed; bits 0..7 of word 0):
 *   0 COMM_WORLD, 1 COMM_SELF (every endpoint's self communicator uses the same
 *   id: it only ever talks to its own endpoint, and matching is per endpoint),
 *   2 COMM_ENDPOINTS, 3 COMM_CLIQUE, 4..7 reserved for internal communicators
 *   (e.g. a library-private dup of COMM_ENDPOINTS, connect/accept bootstrap).
 */

import { CONTEXT_SUFFIX, CONTEXT_SUFFIX_BITS } from '../util/index.ts';

/** The traffic classes of one communicator (the two low bits of its context ids) and their width: util/sentinels.ts. */
export { CONTEXT_SUFFIX, CONTEXT_SUFFIX_BITS };
export type ContextSuffix = (typeof CONTEXT_SUFFIX)[keyof typeof CONTEXT_SUFFIX];
/** The largest mask: 512 words x 32 bits = 16384 prefixes, all of the 16-bit id space. */
export const MAX_MASK_WORDS = 512;
/** Prefixes 0..7 are reserved for predefined and internal communicators. */
export const RESERVED_PREFIXES = 8;

/** Context ids (suffix 0) of the predefined communicators. */
export const PREDEFINED_CONTEXT_ID = {
  COMM_WORLD: 0 << CONTEXT_SUFFIX_BITS,
  COMM_SELF: 1 << CONTEXT_SUFFIX_BITS,
  COMM_ENDPOINTS: 2 << CONTEXT_SUFFIX_BITS,
  COMM_CLIQUE: 3 << CONTEXT_SUFFIX_BITS,
} as const;

/** The prefix (mask bit number) of a context id. */
export function contextPrefix(contextId: number): number {
  return (contextId & 0xffff) >>> CONTEXT_SUFFIX_BITS;
}

/** The point-to-point context id (suffix 0) of a prefix. */
export function contextIdOfPrefix(prefix: number): number {
  return (prefix << CONTEXT_SUFFIX_BITS) & 0xffff;
}

/** The context id for one traffic class of a communicator: `withSuffix(comm.contextId, CONTEXT_SUFFIX.COLL)`. */
export function withSuffix(contextId: number, suffix: ContextSuffix): number {
  return ((contextId & 0xfffc) | suffix) >>> 0;
}

/** The mask word index of a context id. */
export function contextWord(contextId: number): number {
  return (contextId & 0xffff) >>> 7;
}

/** The bit index, within its mask word, of a context id. */
export function contextBit(contextId: number): number {
  return ((contextId & 0xffff) >>> CONTEXT_SUFFIX_BITS) & 31;
}

/** True for the ids of the reserved prefixes (predefined and internal communicators). */
export function isReservedContextId(contextId: number): boolean {
  return contextPrefix(contextId) < RESERVED_PREFIXES;
}
