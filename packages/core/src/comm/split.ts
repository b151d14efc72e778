/**
 * The pure part of Comm.split and Comm.splitType: what every member sends in
 * the allgather, and the members of the caller's new group.
 *
 * Source: MPI 3.1 section 6.4.2 (MPI_COMM_SPLIT: "processes with the same
 * color form a group, ranked in the order of key, ties broken by their rank in
 * the old group"; MPI_UNDEFINED gives MPI_COMM_NULL); MPICH
 * src/mpi/comm/comm_split.c (one allgather of (color, key) over the parent,
 * then one context id for every color together).
 *
 * Entry on the wire (the allgather sends one per parent rank):
 * ```
 *   byte 0       4       8 ...
 *        | flags | key   | color label (UTF-8) |     little-endian int32s
 *   flags bit 0: the member is in some new group (color not UNDEFINED)
 * ```
 * The color is a label, not a number, so that splitType can split by host
 * name with the same code (every endpoint of a process has the same host, so
 * the endpoints of one process always land together).
 *
 * Invariant: every member decodes the same entries, so all agree on every
 * group; groups of different colors are disjoint.
 */

/** What one parent rank contributes to a split. */
export interface SplitEntry {
  /** The color label, or null for UNDEFINED (no new communicator). */
  readonly color: string | null;
  readonly key: number;
}

const HEADER_BYTES = 8;
const FLAG_DEFINED = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The allgather payload of one member. */
export function encodeSplitEntry(entry: SplitEntry): Uint8Array {
  const label = entry.color === null ? new Uint8Array(0) : encoder.encode(entry.color);
  const out = new Uint8Array(HEADER_BYTES + label.length);
  const view = new DataView(out.buffer);
  view.setInt32(0, entry.color === null ? 0 : FLAG_DEFINED, true);
  view.setInt32(4, entry.key, true);
  out.set(label, HEADER_BYTES);
  return out;
}

/** Decodes one member's payload (any byteOffset). */
export function decodeSplitEntry(bytes: Uint8Array): SplitEntry {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const isDefined = (view.getInt32(0, true) & FLAG_DEFINED) !== 0;
  const key = view.getInt32(4, true);
  return { color: isDefined ? decoder.decode(bytes.subarray(HEADER_BYTES)) : null, key };
}

/**
 * The parent ranks of the new group of `color`, in new-rank order: by key,
 * ties by parent rank.
 * @param entries every parent rank's entry, index = parent rank
 * @param color the caller's color (not null)
 */
export function splitRanks(entries: readonly SplitEntry[], color: string): number[] {
  const ranks: number[] = [];
  for (let r = 0; r < entries.length; r++) if (entries[r]!.color === color) ranks.push(r);
  // Array.prototype.sort is stable, and `ranks` is in parent-rank order: ties keep it.
  return ranks.sort((a, b) => entries[a]!.key - entries[b]!.key);
}
