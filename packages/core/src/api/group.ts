/**
 * Group: the public MPI group (API.md "Group"), a checked wrapper over the
 * group logic of comm/group.ts.
 *
 * Role: argument checks (STYLE.md rule 19: once, here, before any state
 * changes), the caller's rank (the calling thread's endpoint), and the
 * object-table record that names the group across threads.
 *
 * Records: every non-empty Group owns one reference to a GROUP record of the
 * object table (data [size], members in the blob), like the predefined groups
 * (predefined-comms.ts). A Group made by incl/excl/union/... holds a fresh
 * record; `comm.group` holds a new reference to the communicator's own group
 * record (MPI_Comm_group: the same group object, one more reference).
 * `free()` drops this Group's reference. Group.EMPTY has no record and cannot
 * be freed away (freeing it is a no-op, as in MPICH).
 *
 * Errors: a non-Group or freed group argument is ERR_GROUP; a bad rank is
 * ERR_RANK; a malformed ranks or ranges argument is ERR_ARG; any call before
 * init or after finalize is ERR_OTHER.
 */
import { Group as GroupLogic, type RankRange } from '../comm/index.ts';
import { NULL_HANDLE, OBJECT_KIND } from '../device/index.ts';
import { ERR_ARG, ERR_GROUP, mpiError } from '../util/index.ts';
import { UNDEFINED } from './constants.ts';
import { describe } from './buffer.ts';
import { runtime } from '../runtime/index.ts';

/**
 * An ordered set of MPI processes (endpoints). Immutable: every operation
 * returns a new Group, which the caller frees when done.
 * @example
 *   const g = MPI.COMM_WORLD.group.incl([0, 2]);
 *   const sub = await MPI.COMM_WORLD.create(g); // null at ranks 1 and 3
 *   g.free();
 */
export class Group {
  /** The group with no members (MPI_GROUP_EMPTY). */
  static readonly EMPTY: Group = new Group(GroupLogic.EMPTY, NULL_HANDLE, false);

  /** @internal The member list (endpoint ids in rank order). */
  readonly _logic: GroupLogic;
  /** @internal This Group's reference to its GROUP record (NULL_HANDLE for EMPTY). */
  readonly _handle: number;
  /** @internal Freed by the user: every later use is ERR_GROUP. */
  _freed = false;
  /** A view of a communicator's group record (comm.group): free releases a reference, not the user's one. */
  readonly #isView: boolean;

  /** @internal Use the methods or `comm.group`; a Group is never built by hand. */
  constructor(logic: GroupLogic, handle: number, isView: boolean) {
    this._logic = logic;
    this._handle = handle;
    this.#isView = isView;
  }

  /**
   * @internal A new Group over `members` with its own record; Group.EMPTY when there are none.
   * @throws MPIError(ERR_NO_MEM) when the object table is full
   */
  static _ofMembers(members: GroupLogic, call: string): Group {
    if (members.size === 0) return Group.EMPTY;
    const m = members.members;
    const handle = runtime(call).device.objects.create(OBJECT_KIND.GROUP, false, [m.length], new Uint8Array(m.buffer, m.byteOffset, m.byteLength), call);
    return new Group(members, handle, false);
  }

  /** @internal A view of an existing group record (a communicator's): takes a new reference. */
  static _view(endpoints: Int32Array, handle: number, call: string): Group {
    if (endpoints.length === 0 || handle === NULL_HANDLE) return Group.EMPTY;
    runtime(call).device.objects.retain(handle);
    return new Group(new GroupLogic(endpoints), handle, true);
  }

  /** @internal Checks that `value` is a live Group; returns it. */
  static _check(value: unknown, call: string, arg: string): Group {
    if (!(value instanceof Group)) throw mpiError(ERR_GROUP, call, `${arg} is ${describe(value)}: expected an MPI.Group`);
    if (value._freed) throw mpiError(ERR_GROUP, call, `${arg} has been freed`);
    return value;
  }

  /** Number of members. */
  get size(): number {
    return this._logic.size;
  }

  /** The calling thread's rank in the group (its endpoint's), or UNDEFINED when it is not a member. */
  get rank(): number {
    this.#live('Group.rank');
    if (this._logic.size === 0) return UNDEFINED;
    return this._logic.rankOf(runtime('Group.rank').endpoint);
  }

  /**
   * MPI_Group_incl: the members at `ranks`, in the order of `ranks`.
   * @throws MPIError(ERR_RANK) when a rank is out of range or repeated; MPIError(ERR_ARG) when ranks is not an array
   * @example world.group.incl([3, 1]) // rank 0 of the result is world rank 3
   */
  incl(ranks: number[]): Group {
    const call = 'Group.incl';
    this.#live(call);
    checkRanks(ranks, call);
    return Group._ofMembers(this._logic.incl(ranks), call);
  }

  /**
   * MPI_Group_excl: every member except those at `ranks`, in group order.
   * @throws MPIError(ERR_RANK) when a rank is out of range or repeated; MPIError(ERR_ARG) when ranks is not an array
   */
  excl(ranks: number[]): Group {
    const call = 'Group.excl';
    this.#live(call);
    checkRanks(ranks, call);
    return Group._ofMembers(this._logic.excl(ranks), call);
  }

  /**
   * MPI_Group_range_incl: the ranks first, first + stride, ... (not past last) of each range, in turn.
   * @throws MPIError(ERR_ARG) for a zero stride, a stride away from last, a range that leaves the group,
   *   or ranges that overlap; MPIError(ERR_RANK) when a range's first rank is out of range
   * @example world.group.rangeIncl([[0, 6, 2]]) // ranks 0, 2, 4, 6
   */
  rangeIncl(ranges: [first: number, last: number, stride: number][]): Group {
    const call = 'Group.rangeIncl';
    this.#live(call);
    checkRanges(ranges, call);
    return Group._ofMembers(this._logic.rangeIncl(ranges), call);
  }

  /**
   * MPI_Group_range_excl: every member not in the ranges, in group order.
   * @throws MPIError(ERR_ARG) / MPIError(ERR_RANK) as rangeIncl
   */
  rangeExcl(ranges: [first: number, last: number, stride: number][]): Group {
    const call = 'Group.rangeExcl';
    this.#live(call);
    checkRanges(ranges, call);
    return Group._ofMembers(this._logic.rangeExcl(ranges), call);
  }

  /**
   * MPI_Group_translate_ranks: the rank in `other` of each of `ranks` of this group; UNDEFINED where
   * absent, PROC_NULL stays PROC_NULL.
   * @throws MPIError(ERR_RANK) for a rank out of range; MPIError(ERR_GROUP) when other is not a live Group
   */
  translateRanks(ranks: number[], other: Group): number[] {
    const call = 'Group.translateRanks';
    this.#live(call);
    checkRanks(ranks, call);
    const o = Group._check(other, call, 'other');
    return this._logic.translateRanks(ranks, o._logic);
  }

  /**
   * MPI_Group_compare: IDENT (same members, same order), SIMILAR (same members) or UNEQUAL.
   * @throws MPIError(ERR_GROUP) when other is not a live Group
   */
  compare(other: Group): number {
    const call = 'Group.compare';
    this.#live(call);
    return this._logic.compare(Group._check(other, call, 'other')._logic);
  }

  /**
   * Releases this Group. Communicators made from it keep their own reference. Freeing Group.EMPTY does nothing.
   * @throws MPIError(ERR_GROUP) when it has already been freed
   */
  free(): void {
    const call = 'Group.free';
    const rt = runtime(call);
    if (this === Group.EMPTY) return;
    this.#live(call);
    this._freed = true;
    if (this.#isView) rt.device.objects.release(this._handle);
    else rt.device.objects.userFree(this._handle);
  }

  /**
   * MPI_Group_union: every member of `a` in a's order, then the members of `b` not in `a`, in b's order.
   * @throws MPIError(ERR_GROUP) when a or b is not a live Group
   */
  static union(a: Group, b: Group): Group {
    const call = 'Group.union';
    runtime(call);
    return Group._ofMembers(GroupLogic.union(Group._check(a, call, 'a')._logic, Group._check(b, call, 'b')._logic), call);
  }

  /**
   * MPI_Group_intersection: the members of `a` that are also in `b`, in a's order.
   * @throws MPIError(ERR_GROUP) when a or b is not a live Group
   */
  static intersection(a: Group, b: Group): Group {
    const call = 'Group.intersection';
    runtime(call);
    return Group._ofMembers(GroupLogic.intersection(Group._check(a, call, 'a')._logic, Group._check(b, call, 'b')._logic), call);
  }

  /**
   * MPI_Group_difference: the members of `a` that are not in `b`, in a's order.
   * @throws MPIError(ERR_GROUP) when a or b is not a live Group
   */
  static difference(a: Group, b: Group): Group {
    const call = 'Group.difference';
    runtime(call);
    return Group._ofMembers(GroupLogic.difference(Group._check(a, call, 'a')._logic, Group._check(b, call, 'b')._logic), call);
  }

  toString(): string {
    return `Group(size ${this.size})`;
  }

  /** ERR_OTHER outside init..finalize; ERR_GROUP once freed. */
  #live(call: string): void {
    runtime(call);
    if (this._freed) throw mpiError(ERR_GROUP, call, 'the group has been freed');
  }
}

function checkRanks(ranks: unknown, call: string): asserts ranks is number[] {
  if (!Array.isArray(ranks)) throw mpiError(ERR_ARG, call, `ranks is ${describe(ranks)}: expected an array of ranks`);
}

function checkRanges(ranges: unknown, call: string): asserts ranges is RankRange[] {
  if (!Array.isArray(ranges)) throw mpiError(ERR_ARG, call, `ranges is ${describe(ranges)}: expected an array of [first, last, stride]`);
  for (let i = 0; i < ranges.length; i++) {
    const r: unknown = ranges[i];
    if (!Array.isArray(r) || r.length !== 3) {
      throw mpiError(ERR_ARG, call, `ranges[${i}] is ${describe(r)}: expected [first, last, stride]`);
    }
  }
}
