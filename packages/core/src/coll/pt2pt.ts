/**
 * The contract between the collective algorithms (coll/) and the layer below.
 *
 * Role
 * - coll/ is the semantics layer for collectives (DESIGN.md "Packages and
 *   layering"): every algorithm is written only against CollPt2pt, a
 *   point-to-point view of one communicator's *collective* context. The
 *   communicator layer implements it over the device; the unit tests implement
 *   it over in-memory queues (sim.test-util.ts).
 *
 * Callers and threads
 * - The API layer calls one coll function per collective call, on the thread
 *   attached to the calling endpoint, with a fresh `tag` per collective call
 *   on that communicator (a counter), so concurrent nonblocking collectives
 *   never match each other's messages. On a communicator's collective context
 *   the tag also carries the call's signature (signature.ts, util/coll-tag.ts):
 *   a receive completed by another call's message rejects (ERR_OTHER). Blocking and nonblocking forms share
 *   the same async function: `await` drives it, a Request wraps its promise
 *   (STYLE.md rule 40).
 *
 * Ordering rules the implementation must honour (MPI non-overtaking)
 * - Two sends to the same `dest` with the same `tag` are matched in the order
 *   send() was *called* (not the order they complete).
 * - Two recv()s from the same `source` with the same `tag` are matched in the
 *   order recv() was *called*.
 * - Every algorithm here uses the caller's `tag` only, and keeps this
 *   invariant: for every ordered pair (a, b), the sequence of messages a sends
 *   to b within one call is the sequence of receives b posts from a, in the
 *   same order. Multi-phase algorithms (reduce then bcast, scatter then ring)
 *   finish posting one phase before they start the next on every rank, so the
 *   invariant composes.
 * - A send may complete only once it is matched (rendezvous); no algorithm
 *   awaits a send before posting the receive that its peer's send needs.
 *
 * Buffers
 * - send(): `data` must not be modified until the promise resolves; it may be
 *   a subarray (any byteOffset) of a caller's buffer.
 * - recv(): resolves a Uint8Array owned by the algorithm from then on (coll may
 *   write into it, keep it, or hand it to the caller); any byteOffset.
 * - Combiners receive subarrays at any byteOffset, so a typed-array view over
 *   them may be unaligned: the API layer's combiner copies when it must.
 *
 * Errors
 * - Lower layers reject (MPIError, e.g. ERR_PROC_FAILED); coll passes the
 *   rejection through. coll itself raises ERR_TRUNCATE when a message is
 *   longer than the block it must land in, and ERR_INTERN on broken
 *   invariants. Arguments are checked once, in api/ (STYLE.md rule 19).
 */
import type { MPIError } from '../util/index.ts';

/** Point-to-point on a communicator's collective context, as seen by the algorithms. Ranks are ranks of the communicator. */
export interface CollPt2pt {
  readonly rank: number;
  readonly size: number;
  /** The API call these messages serve (e.g. 'Allreduce'), named by the errors that blame the caller's arguments (mismatch.ts); absent: 'collective'. */
  readonly call?: string;
  /** Sends bytes; resolves when the buffer may be reused. */
  send(dest: number, tag: number, data: Uint8Array): Promise<void>;
  /** Receives exactly one message from `source` with `tag` into a fresh Uint8Array (any length). */
  recv(source: number, tag: number): Promise<Uint8Array>;
  /**
   * Optional: receives exactly one message from `source` with `tag` into `buf`
   * (a message longer than buf rejects with ERR_TRUNCATE); resolves its length.
   * Lets long-message algorithms land data where it belongs without a fresh
   * array and a copy; exchange.ts recvInto() supplies it over recv() when absent.
   */
  recvInto?(source: number, tag: number, buf: Uint8Array): Promise<number>;
  /**
   * Optional: recv() that tells `target` instead of resolving a promise (a planned collective's
   * step machine, plan.ts): target.received(data, tag, error) runs once, possibly before recvThen
   * returns, with the fresh bytes and the tag of the message that completed the receive (on a
   * collective context another call's message can, util/coll-tag.ts: check it with mismatch()).
   * Absent: the machine uses recv().
   */
  recvThen?(source: number, tag: number, target: ReceiveTarget): void;
  /**
   * Optional: recvInto() that tells `target` instead of resolving a promise: target.receivedInto(count,
   * tag, error) runs once, possibly before recvIntoThen returns (a message longer than buf: ERR_TRUNCATE;
   * the tag as recvThen's). Lets a step machine land data in place (coll/neighbor-peers.ts). Absent: recvThen or recv().
   */
  recvIntoThen?(source: number, tag: number, buf: Uint8Array, target: ReceiveIntoTarget): void;
  /** Optional: send() that tells `target` (target.sent(error), possibly before sendThen returns). Absent: send(). */
  sendThen?(dest: number, tag: number, data: Uint8Array, target: SendTarget): void;
  /** Optional: the error of a message with tag `theirs` from `source` that completed a receive posted with `mine`; null when both tags name one collective. */
  mismatch?(theirs: number, mine: number, source: number): MPIError | null;
}

/** Where recvThen reports its receive: a module-level path, no closure per message (STYLE.md rule 12). */
export interface ReceiveTarget {
  /** `data` the message (owned by the receiver), null on error; `tag` the message's own (-1: none came). */
  received(data: Uint8Array | null, tag: number, error: MPIError | null): void;
}

/** Where recvIntoThen reports its receive. */
export interface ReceiveIntoTarget {
  /** `count` the message's bytes now in the buffer; `tag` the message's own (-1: none came). */
  receivedInto(count: number, tag: number, error: MPIError | null): void;
}

/** Where sendThen reports its send. */
export interface SendTarget {
  sent(error: MPIError | null): void;
}

/** A reduction on packed bytes: `inout = in op inout`, over whole items (both arrays have the same length). */
export type Combine = (inBytes: Uint8Array, inoutBytes: Uint8Array) => void;

/** A reduction operator on packed bytes, as the buffer collectives see it. */
export interface ByteOp {
  /** `inout = in op inout`. Called on whole items only, possibly on a sub-range of the vector. */
  readonly combine: Combine;
  /** False: results are computed in rank order, x0 op x1 op ... op x(p-1). */
  readonly commute: boolean;
  /** Bytes of one item (the datatype's size); vectors are split only at multiples of it. */
  readonly itemBytes: number;
}

/** A reduction operator on values (object collectives): `combine(a, b) = a op b`, `a` from the lower ranks. */
export interface ObjectOp<T> {
  /** Returns a op b without modifying a or b (coll may pass the caller's own value, and may pass one value twice). */
  readonly combine: (a: T, b: T) => T;
  /** False: results are computed in rank order. */
  readonly commute: boolean;
}

/** How object collectives move values: the caller's serializer (coll stays free of msgpack). */
export interface Codec<T> {
  readonly encode: (value: T) => Uint8Array;
  readonly decode: (bytes: Uint8Array) => T;
}

/** A buffer with per-rank blocks of varying size (the v-variants). Counts and displacements are in BYTES. */
export interface VBuffer {
  readonly buf: Uint8Array;
  /** counts[i]: bytes of rank i's block. */
  readonly counts: readonly number[];
  /** displs[i]: byte offset of rank i's block in `buf`. */
  readonly displs: readonly number[];
}
