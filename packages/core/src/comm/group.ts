/**
 * Group logic: an ordered set of endpoints, as MPI 3.1 section 6.3 defines it.
 *
 * Source: MPI 3.1, sections 6.3.1 (accessors), 6.3.2 (constructors); errors
 * follow MPICH (src/mpi/group/group_util.c: MPIR_Group_check_valid_ranks and
 * ..._ranges) where the standard only says "erroneous".
 *
 * State: `members`, an Int32Array of endpoint ids (ranks in COMM_ENDPOINTS,
 * which are COMM_WORLD ranks when there is one endpoint per process); the
 * group rank of `members[i]` is i. A lazily built Map gives endpoint -> rank.
 *
 * Invariants: members are distinct non-negative integers; a Group never changes
 * after construction (every operation returns a new Group, or Group.EMPTY when
 * the result has no member). "Which endpoint is the caller" is not part of the
 * group: several threads attached to different endpoints share one Group, and
 * each asks `rankOf(itsEndpoint)`; the API layer's `group.rank` does that.
 *
 * ```
 *   group   members  [ 7  3  9  4 ]      rank 0..3
 *   incl([2,0])   -> [ 9  7 ]            new order = order of `ranks`
 *   excl([2,0])   -> [ 3  4 ]            old order kept
 *   rangeIncl([[3,0,-2]]) -> ranks 3,1 -> [ 4  3 ]
 * ```
 */
import { ERR_ARG, ERR_RANK, mpiError } from '../util/index.ts';
import { IDENT, PROC_NULL, SIMILAR, UNDEFINED, UNEQUAL } from './constants.ts';

/** A rank range of rangeIncl/rangeExcl: ranks first, first+stride, ... not past last. */
export type RankRange = readonly [first: number, last: number, stride: number];

/** An immutable ordered set of endpoint ids; see the file header. */
export class Group {
  /** The group with no members (MPI_GROUP_EMPTY). */
  static readonly EMPTY: Group = new Group(new Int32Array(0));

  readonly #members: Int32Array;
  #rankByEndpoint: Map<number, number> | null = null;

  /**
   * Wraps a list of endpoint ids (copied). Callers pass distinct ids; that is
   * checked only in the API layer (rule 19), this layer trusts it.
   * @param members endpoint ids in rank order
   */
  constructor(members: Int32Array | readonly number[]) {
    this.#members = Int32Array.from(members);
  }

  /** Number of members. */
  get size(): number {
    return this.#members.length;
  }

  /** The endpoint ids in rank order (a copy: the group stays immutable). */
  get members(): Int32Array {
    return this.#members.slice();
  }

  /** The endpoint id of group rank `rank` (trusted: 0 <= rank < size). */
  endpointOf(rank: number): number {
    return this.#members[rank]!;
  }

  /** The group rank of an endpoint, or UNDEFINED (-32766) when it is not a member. */
  rankOf(endpoint: number): number {
    return this.#index().get(endpoint) ?? UNDEFINED;
  }

  /** True when the endpoint is a member. */
  has(endpoint: number): boolean {
    return this.#index().has(endpoint);
  }

  #index(): Map<number, number> {
    let index = this.#rankByEndpoint;
    if (index === null) {
      index = new Map();
      const m = this.#members;
      for (let r = 0; r < m.length; r++) index.set(m[r]!, r);
      this.#rankByEndpoint = index;
    }
    return index;
  }

  /**
   * MPI_Group_incl: the members at `ranks`, in the order of `ranks`.
   * @throws MPIError(ERR_RANK) when a rank is out of range or repeated
   */
  incl(ranks: readonly number[]): Group {
    this.#checkRanks('Group.incl', ranks);
    return fromEndpoints(ranks.map((r) => this.#members[r]!));
  }

  /**
   * MPI_Group_excl: every member except those at `ranks`, in group order.
   * @throws MPIError(ERR_RANK) when a rank is out of range or repeated
   */
  excl(ranks: readonly number[]): Group {
    const drop = this.#checkRanks('Group.excl', ranks);
    return fromEndpoints(this.#members.filter((_, r) => !drop[r]));
  }

  /**
   * MPI_Group_range_incl: the ranks of each [first, last, stride] range in turn.
   * A range holds first, first + stride, ... while not past last (stride may be
   * negative: [3, 0, -2] is ranks 3, 1).
   * @throws MPIError(ERR_ARG) when a stride is 0, points away from last, or the
   *   range leaves the group, or two ranges share a rank
   * @throws MPIError(ERR_RANK) when a range's first rank is out of range
   */
  rangeIncl(ranges: readonly RankRange[]): Group {
    const ranks = this.#expandRanges('Group.rangeIncl', ranges);
    return fromEndpoints(ranks.map((r) => this.#members[r]!));
  }

  /**
   * MPI_Group_range_excl: every member not in the ranges, in group order.
   * @throws MPIError(ERR_ARG) / MPIError(ERR_RANK) as for rangeIncl
   */
  rangeExcl(ranges: readonly RankRange[]): Group {
    const ranks = this.#expandRanges('Group.rangeExcl', ranges);
    const drop = new Uint8Array(this.size);
    for (const r of ranks) drop[r] = 1;
    return fromEndpoints(this.#members.filter((_, r) => !drop[r]));
  }

  /**
   * MPI_Group_translate_ranks: for each rank of this group, the rank of the same
   * endpoint in `other`, or UNDEFINED; PROC_NULL maps to PROC_NULL.
   * @throws MPIError(ERR_RANK) when a rank is out of range for this group
   */
  translateRanks(ranks: readonly number[], other: Group): number[] {
    const out = new Array<number>(ranks.length);
    for (let i = 0; i < ranks.length; i++) {
      const r = ranks[i]!;
      if (r === PROC_NULL) {
        out[i] = PROC_NULL;
        continue;
      }
      if (!this.#isRank(r)) throw outOfRange('Group.translateRanks', i, r, this.size);
      out[i] = other.rankOf(this.#members[r]!);
    }
    return out;
  }

  /** MPI_Group_compare: IDENT (same members, same order), SIMILAR (same members) or UNEQUAL. */
  compare(other: Group): number {
    if (other === this) return IDENT;
    const a = this.#members;
    const b = other.#members;
    if (a.length !== b.length) return UNEQUAL;
    let sameOrder = true;
    for (let r = 0; r < a.length; r++) {
      if (a[r] !== b[r]) {
        sameOrder = false;
        break;
      }
    }
    if (sameOrder) return IDENT;
    for (let r = 0; r < a.length; r++) if (!other.has(a[r]!)) return UNEQUAL;
    return SIMILAR;
  }

  /** MPI_Group_union: all of `a` in a's order, then the members of `b` not in `a`, in b's order. */
  static union(a: Group, b: Group): Group {
    const out = Array.from(a.#members);
    for (const e of b.#members) if (!a.has(e)) out.push(e);
    return fromEndpoints(out);
  }

  /** MPI_Group_intersection: the members of `a` that are also in `b`, in a's order. */
  static intersection(a: Group, b: Group): Group {
    return fromEndpoints(a.#members.filter((e) => b.has(e)));
  }

  /** MPI_Group_difference: the members of `a` that are not in `b`, in a's order. */
  static difference(a: Group, b: Group): Group {
    return fromEndpoints(a.#members.filter((e) => !b.has(e)));
  }

  #isRank(r: number): boolean {
    return Number.isInteger(r) && r >= 0 && r < this.#members.length;
  }

  /** Checks incl/excl ranks; returns a per-rank "named" flag array. */
  #checkRanks(call: string, ranks: readonly number[]): Uint8Array {
    const seenAt = new Int32Array(this.size).fill(-1);
    const named = new Uint8Array(this.size);
    for (let i = 0; i < ranks.length; i++) {
      const r = ranks[i]!;
      if (!this.#isRank(r)) throw outOfRange(call, i, r, this.size);
      if (named[r]) throw mpiError(ERR_RANK, call, `ranks[${i}] = ${r} repeats ranks[${seenAt[r]}]; ranks must be distinct`);
      named[r] = 1;
      seenAt[r] = i;
    }
    return named;
  }

  /** Validates the ranges and lists their ranks in order (MPI 3.1 6.3.2, MPICH's checks). */
  #expandRanges(call: string, ranges: readonly RankRange[]): number[] {
    const size = this.size;
    const out: number[] = [];
    const rangeOf = new Int32Array(size).fill(-1);
    for (let i = 0; i < ranges.length; i++) {
      const [first, last, stride] = ranges[i]!;
      const what = `ranges[${i}] = [${first}, ${last}, ${stride}]`;
      if (!Number.isInteger(first) || !Number.isInteger(last) || !Number.isInteger(stride)) {
        throw mpiError(ERR_ARG, call, `${what}: first, last and stride must be integers`);
      }
      if (stride === 0) throw mpiError(ERR_ARG, call, `${what}: stride must not be 0`);
      if (first < 0 || first >= size) throw mpiError(ERR_RANK, call, `${what}: first rank ${first} is out of range for a group of size ${size}`);
      if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
        throw mpiError(ERR_ARG, call, `${what}: a stride of ${stride} walks away from last and would leave the group`);
      }
      // Math.trunc: (last - first) and stride have the same sign here, so this is the floor of MPI's formula.
      const steps = Math.trunc((last - first) / stride);
      const actualLast = first + steps * stride;
      if (actualLast < 0 || actualLast >= size) {
        throw mpiError(ERR_ARG, call, `${what}: the range leaves the group (its last rank would be ${actualLast}; size ${size})`);
      }
      for (let k = 0, r = first; k <= steps; k++, r += stride) {
        if (rangeOf[r] !== -1) throw mpiError(ERR_ARG, call, `${what}: rank ${r} is also in ranges[${rangeOf[r]}]; ranks must be distinct`);
        rangeOf[r] = i;
        out.push(r);
      }
    }
    return out;
  }
}

function outOfRange(call: string, i: number, r: number, size: number): Error {
  return mpiError(ERR_RANK, call, `ranks[${i}] = ${r} is out of range for a group of size ${size}`);
}

function fromEndpoints(endpoints: ArrayLike<number> & Iterable<number>): Group {
  return endpoints.length === 0 ? Group.EMPTY : new Group(Int32Array.from(endpoints));
}
