/**
 * Comm: the public communicator. Layers: Pt2ptComm (point-to-point) <-
 * CollComm (collectives) <- Comm (communicator management: dup, idup, split,
 * splitType, create, createGroup, group, free). API.md "Communicator management".
 *
 * Every creation allocates a context id with the multithreaded algorithm of
 * papers/context-id-allocation.txt (comm/context-id*.ts), on the calling
 * thread's endpoint state, over the creation's participants:
 * ```
 *   call           participants        collectives on                        priority tag
 *   dup, idup      all of the parent   parent ctx+1, tag = parent sequence   2^30 + sequence
 *   split(Type)    all of the parent   (same), after an allgather of         (same)
 *                                      (color, key) with the same tag
 *   create         all of the parent   (same)                                (same)
 *   createGroup    the group only      parent ctx+2, tag 2^30 + user tag     user tag
 * ```
 * split allocates ONE id for every color (as MPICH): groups of different
 * colors are disjoint, so they may share it. Parent members that get no new
 * communicator (UNDEFINED color, not in create's group) still take part in
 * the allocation, then return the id at once. The group collectives of
 * createGroup use a context and tags no user receive on the parent can match
 * (even ANY_TAG), so a subset may create while the others keep receiving.
 *
 * Records: a new communicator gets a COMM record [context id, group handle,
 * allocating endpoint] in the object table, as the predefined ones
 * (predefined-comms.ts). dup shares its parent's group record, create and
 * createGroup share the group argument's record (each with a new reference),
 * split makes a new one. free is the user's release (device/lifetime.ts):
 * requests, persistent requests and Messages on the communicator keep the
 * record alive, and only when the record is destroyed (destroyCommRecord,
 * in whichever thread drops the last reference or collects it) does the
 * context id go back, into the mask of the endpoint that allocated it
 * (freeContextId: a free never waits for an allocation in progress), and the
 * group reference go. So a communicator created right after a free never
 * gets the id of one whose operations are still pending.
 *
 * Errors (checked here, before anything changes, STYLE.md rule 19): a freed
 * communicator or one the calling thread's endpoint is not a member of:
 * ERR_COMM; a group that is not a live Group, or not a subset of this
 * communicator: ERR_GROUP; a bad color, key or split type: ERR_ARG; a bad
 * createGroup tag: ERR_TAG; no free context id at every participant:
 * ERR_OTHER (the masks stay intact).
 */
import os from 'node:os';
import {
  allocateContextId, collectivePriorityTag, contextIdCollectives, contextIdOptions, decodeSplitEntry, encodeSplitEntry,
  freeContextId, groupCollTag, GroupPt2pt, splitRanks,
  type ContextIdCollectives, type ContextIdOptions, type ContextIdState, type SplitEntry, type Topology, type TopologyKind,
  encodeTopology,
} from '../comm/index.ts';
import { allgatherBytes } from '../coll/index.ts';
import { hostLabel } from '../config/index.ts';
import { OBJECT_KIND, handleKind } from '../device/index.ts';
import { ERR_ARG, ERR_GROUP, ERR_TAG, MPIError, collTag, mpiError } from '../util/index.ts';
import { inheritAttrs, createKeyval, deleteAllAttrs, deleteAttr, getAttr, setAttr, type KeyvalFns } from './attributes.ts';
import { checkErrhandler, ERRORS_RETURN, invokeErrhandler, routeErrors, type Errhandler } from './errhandler.ts';
import { Info, infoEntries } from './info.ts';
import { abort } from './abort.ts';
import { freeKeyval } from './attributes.ts';
import { CollComm } from './coll-comm.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import { COMM_TYPE_SHARED, TAG_UB, UNDEFINED } from './constants.ts';
import { Group } from './group.ts';
import { CTX_GROUP_COLL } from './pt2pt-comm.ts';
import { Request } from './request.ts';
import { checkActive, runtime, runtimeOrNull } from '../runtime/index.ts';
import { describe } from './buffer.ts';

/** The group-handle data word of a COMM record (COMM_DATA.GROUP in predefined-comms.ts, which imports this file). */
const GROUP_WORD = 1;
/** The data word of a COMM record holding the allocating endpoint (index among this process's endpoints; -1: predefined). */
const ID_ENDPOINT_WORD = 2;
/** Keys and colors are C ints in MPI. */
const INT_MAX = 0x7fffffff;
const INT_MIN = -0x80000000;

/** @internal What every creation takes synchronously, at the call, before any await. */
export interface Creation {
  readonly call: string;
  /** the communicator the creation is called on: the new one inherits its error handler */
  readonly parent: Comm;
  /** the calling thread's endpoint */
  readonly me: number;
  /** that endpoint's context-id state */
  readonly state: ContextIdState;
  readonly options: ContextIdOptions;
}

/**
 * @internal What a topology communicator (api/topology-comm.ts) adds to a creation: the topology
 * its record keeps (so dup and other threads see it) and the wrapper class to make. Those classes
 * extend Comm, so this file cannot import them: they come in through this.
 */
export interface TopologySpec {
  readonly topology: Topology;
  make(name: string, ctx: number, endpoints: Int32Array): Comm;
}

/** @internal Where a member lands in a split-like creation (color null: no new communicator) and the new communicator's topology. */
export interface Placement extends SplitEntry {
  readonly topology: TopologySpec | null;
}

/** A communicator: a group of processes and a private context for their messages. See API.md "Comm". */
export class Comm extends CollComm {
  /** The virtual topology: 'cart', 'graph', 'dist_graph', or null for none (API.md "Topologies"). */
  get topology(): TopologyKind | null {
    return null;
  }

  /** @internal The topology a dup keeps (topology communicators override it). */
  _topologySpec(): TopologySpec | null {
    return null;
  }

  /**
   * @internal A split-like creation whose placement (color, key, topology) may still be computed
   * by collectives already started (reorder's host exchange): the creation's own collective
   * sequence number is taken now, so call order sets collective order, as for split.
   */
  _createPlaced(call: string, placement: Placement | Promise<Placement>, name: string): Promise<Comm | null> {
    return blockingCreation(call, this.name, this._ctx, this.#split(call, placement, name));
  }

  /**
   * The communicator's group (a new reference: free it when done).
   * @throws MPIError(ERR_COMM) when the communicator has been freed
   * @example const g = MPI.COMM_WORLD.group; console.log(g.size, g.rank); g.free();
   */
  get group(): Group {
    const call = 'Comm.group';
    const rt = runtime(call);
    this._checkNotFreed(call);
    return Group._view(this._endpoints, rt.device.objects.data(this._handle, GROUP_WORD), call);
  }

  /**
   * Duplicates the communicator: same group, new context. Collective.
   * @throws MPIError(ERR_COMM) on a freed communicator; MPIError(ERR_OTHER) when context ids are exhausted
   * @example const lib = await MPI.COMM_WORLD.dup();
   */
  dup(): Promise<Comm> {
    const call = 'Comm.dup';
    return blockingCreation(call, this.name, this._ctx, this.#dup(call));
  }

  /**
   * Nonblocking dup: the request's wait() resolves the new Comm. Collectives started on this
   * communicator after idup are ordered after it, as MPI requires.
   * @throws MPIError(ERR_COMM) on a freed communicator (at once); the request fails with ERR_OTHER when ids are exhausted
   * @example const req = MPI.COMM_WORLD.idup(); ...; const c = await req.wait();
   */
  idup(): Request<Comm> {
    return Request._fromPromise(this.#dup('Comm.idup'), this, 'idup');
  }

  /**
   * dup whose new communicator has the hints of `info` instead of this one's (MPI 4.0
   * MPI_Comm_dup_with_info). Attributes are copied as by dup. Collective.
   * @throws MPIError(ERR_INFO) when info is not an Info (or is freed); as dup otherwise
   * @example const c = await comm.dupWithInfo(new MPI.Info({ mpi_assert_no_any_source: 'true' }));
   */
  dupWithInfo(info: Info): Promise<Comm> {
    const call = 'Comm.dupWithInfo';
    const hints = infoEntries(info, call) ?? [];
    return blockingCreation(call, this.name, this._ctx, this.#dup(call, hints));
  }

  /** Nonblocking dupWithInfo: the request's wait() resolves the new Comm. */
  idupWithInfo(info: Info): Request<Comm> {
    const call = 'Comm.idupWithInfo';
    const hints = infoEntries(info, call) ?? [];
    return Request._fromPromise(this.#dup(call, hints), this, 'idupWithInfo');
  }

  /** @param hints the new communicator's info entries (default: this one's, as MPI_Comm_dup) */
  #dup(call: string, hints: [string, string][] = this._hints): Promise<Comm> {
    const c = this.#begin(call);
    const [coll, priority] = this.#commCollectives(call);
    const group = holdGroup(runtime(call).device.objects.data(this._handle, GROUP_WORD), call);
    const name = `${this.name}.dup`;
    return consumingGroup(group, call, async () => {
      const ctx = await allocateContextId(c.state, this._ctx, priority, coll, c.options);
      const comm = Comm.#make(c, name, ctx, this._endpoints, group, this._topologySpec());
      comm._hints = hints.slice();
      inheritAttrs(this, comm);
      return comm;
    });
  }

  /**
   * Splits the communicator by color; ranks in each new communicator follow `key`, ties by rank here.
   * Collective.
   * @param color a non-negative integer, or UNDEFINED for no new communicator
   * @param key any 32-bit integer (default 0)
   * @returns the caller's new communicator, or null for color UNDEFINED
   * @throws MPIError(ERR_ARG) for a bad color or key; MPIError(ERR_COMM); MPIError(ERR_OTHER) when ids are exhausted
   * @example const row = await MPI.COMM_WORLD.split(rank / 4 | 0, rank);
   */
  split(color: number, key = 0): Promise<Comm | null> {
    const call = 'Comm.split';
    if (color !== UNDEFINED && !(Number.isInteger(color) && color >= 0 && color <= INT_MAX)) {
      throw mpiError(ERR_ARG, call, `color ${String(color)} is invalid: expected an integer 0..${INT_MAX} or UNDEFINED`);
    }
    checkKey(key, call);
    const label = color === UNDEFINED ? null : String(color);
    return blockingCreation(call, this.name, this._ctx, this.#split(call, { color: label, key, topology: null }, `${this.name}.split(${color})`));
  }

  /**
   * Splits by type: COMM_TYPE_SHARED groups the processes of one host (the endpoints of one process
   * always together). Collective.
   * @param type COMM_TYPE_SHARED, or UNDEFINED for no new communicator
   * @param key orders the ranks as in split (default 0)
   * @throws MPIError(ERR_ARG) for another type or a bad key
   * @example const node = await MPI.COMM_WORLD.splitType(MPI.COMM_TYPE_SHARED);
   */
  splitType(type: number, key = 0): Promise<Comm | null> {
    const call = 'Comm.splitType';
    if (type !== COMM_TYPE_SHARED && type !== UNDEFINED) {
      throw mpiError(ERR_ARG, call, `type ${String(type)} is invalid: expected COMM_TYPE_SHARED (${COMM_TYPE_SHARED}) or UNDEFINED`);
    }
    checkKey(key, call);
    const label = type === UNDEFINED ? null : `host:${hostLabel(os.hostname())}`;
    return blockingCreation(call, this.name, this._ctx, this.#split(call, { color: label, key, topology: null }, `${this.name}.splitType(shared)`));
  }

  #split(call: string, placement: Placement | Promise<Placement>, name: string): Promise<Comm | null> {
    const c = this.#begin(call);
    const pt = new CommCollPt2pt(this, call);
    const [coll, priority, tag] = this.#commCollectives(call, pt);
    return (async () => {
      const { color, key, topology } = await placement;
      const all = await allgatherBytes(pt, tag, encodeSplitEntry({ color, key }));
      const ctx = await allocateContextId(c.state, this._ctx, priority, coll, c.options);
      if (color === null) {
        freeContextId(c.state, ctx);
        return null;
      }
      const ranks = splitRanks(all.map(decodeSplitEntry), color);
      return Comm.#make(c, name, ctx, Int32Array.from(ranks, (r) => this._endpoints[r]!), null, topology);
    })();
  }

  /**
   * Creates a communicator of `group`'s members (MPI-2.2 semantics: processes may pass different,
   * disjoint groups). Collective over this communicator.
   * @param group a subgroup of this communicator's group
   * @returns the new communicator, or null where the caller is not in `group`
   * @throws MPIError(ERR_GROUP) when group is not a live Group or not a subset; MPIError(ERR_COMM)
   * @example const evens = await world.create(world.group.rangeIncl([[0, world.size - 1, 2]]));
   */
  create(group: Group): Promise<Comm | null> {
    const call = 'Comm.create';
    const c = this.#begin(call);
    const g = this.#subgroup(group, call);
    const [coll, priority] = this.#commCollectives(call);
    const isMember = g._logic.has(c.me);
    const name = `${this.name}.create`;
    const held = holdGroup(g._handle, call);
    return blockingCreation(call, this.name, this._ctx, consumingGroup(held, call, async () => {
      const ctx = await allocateContextId(c.state, this._ctx, priority, coll, c.options);
      if (!isMember) {
        freeContextId(c.state, ctx);
        runtime(call).device.objects.release(held);
        return null;
      }
      return Comm.#make(c, name, ctx, g._logic.members, held);
    }));
  }

  /**
   * Creates a communicator of `group`'s members, collective over the group only (MPI-3
   * MPI_Comm_create_group). Concurrent calls on one parent must differ by tag; the creation's
   * traffic never matches point-to-point receives on this communicator, even with ANY_TAG.
   * @param group a subgroup of this communicator's group
   * @param tag 0..TAG_UB (default 0)
   * @returns the new communicator, or null (at once) where the caller is not in `group`
   * @throws MPIError(ERR_GROUP) when group is not a live Group or not a subset; MPIError(ERR_TAG) for a bad tag
   * @example const pair = await world.createGroup(world.group.incl([0, 1]), 7);
   */
  createGroup(group: Group, tag = 0): Promise<Comm | null> {
    const call = 'Comm.createGroup';
    const c = this.#begin(call);
    const g = this.#subgroup(group, call);
    if (!Number.isInteger(tag) || tag < 0 || tag > TAG_UB) {
      throw mpiError(ERR_TAG, call, `tag ${String(tag)} is invalid: expected 0..${TAG_UB} (TAG_UB)`);
    }
    if (!g._logic.has(c.me)) return Promise.resolve(null);
    const members = g._logic.members;
    const pt = new GroupPt2pt(runtime(call).device, members, c.me, this._ctx + CTX_GROUP_COLL, call);
    const coll = contextIdCollectives(pt, groupCollTag(tag));
    const name = `${this.name}.createGroup(${tag})`;
    const held = holdGroup(g._handle, call);
    return blockingCreation(call, this.name, this._ctx, consumingGroup(held, call, async () => {
      const ctx = await allocateContextId(c.state, this._ctx, tag, coll, c.options);
      return Comm.#make(c, name, ctx, members, held);
    }));
  }

  /**
   * User release: pending operations still complete, and the context id returns once none is left.
   * @throws MPIError(ERR_COMM) for a predefined or already freed communicator
   */
  override free(): void {
    const call = 'Comm.free';
    checkActive(call);
    if (!this._predefined) {
      this._checkNotFreed(call, 'has already been freed');
      // MPI 4.0 7.7: the delete callbacks run when the communicator is freed; one that throws fails the free.
      deleteAllAttrs(this, this._handle);
    }
    super.free();
    runtime(call).device.lifetime.userFree(this._handle);
  }

  // --- attributes, info and error handlers (API.md Part 2) ---------------------

  /** @internal This thread's info hints of the communicator (keys in the order set). */
  _hints: [string, string][] = [];
  /** @internal This thread's error handler of the communicator. */
  _errhandler: Errhandler = ERRORS_RETURN;

  /** Whether this is an intercommunicator (API.md "Intercommunicators"). */
  get isInter(): boolean {
    return false;
  }

  /**
   * A new attribute key (MPI_Comm_create_keyval). `copy` runs when a communicator holding the
   * attribute is duplicated (its result is the copy's value; undefined: not copied); `delete` when
   * the attribute is deleted, replaced, or its communicator freed. Keyvals and attributes are per thread.
   * @throws MPIError(ERR_ARG) when a callback is not a function
   * @example const key = MPI.Comm.createKeyval({ copy: (c, k, v) => v, delete: (c, k, v) => release(v) });
   */
  static createKeyval(fns?: KeyvalFns): number {
    checkActive('Comm.createKeyval');
    return createKeyval(fns, 'Comm.createKeyval');
  }

  /**
   * Frees a keyval: no new set/get with it; attributes already set keep it until deleted.
   * @throws MPIError(ERR_KEYVAL) for a predefined, unknown or already freed keyval
   */
  static freeKeyval(keyval: number): void {
    checkActive('Comm.freeKeyval');
    freeKeyval(keyval, 'Comm.freeKeyval');
  }

  /**
   * Caches `value` on the communicator under `keyval` (MPI_Comm_set_attr); a value already there is
   * deleted first (its delete callback runs).
   * @throws MPIError(ERR_KEYVAL) for a predefined, unknown or freed keyval; ERR_COMM on a freed communicator
   * @example comm.setAttr(key, { calls: 0 });
   */
  setAttr(keyval: number, value: unknown): void {
    const call = 'Comm.setAttr';
    this._checkNotFreed(call);
    setAttr(this, this._handle, keyval, value, call);
  }

  /**
   * The value cached under `keyval`, or undefined (MPI_Comm_get_attr with flag false). On COMM_WORLD
   * the predefined keyvals TAG_UB, UNIVERSE_SIZE, APPNUM, WTIME_IS_GLOBAL, HOST and IO give the job's values.
   * @throws MPIError(ERR_KEYVAL) for an unknown or freed keyval; ERR_COMM on a freed communicator
   * @example const tagUb = MPI.COMM_WORLD.getAttr(MPI.TAG_UB) as number;
   */
  getAttr(keyval: number): unknown | undefined {
    const call = 'Comm.getAttr';
    this._checkNotFreed(call);
    const isWorld = this._predefined && this._ctx === 0;
    return getAttr(this._handle, keyval, isWorld, this.size, call);
  }

  /**
   * Deletes the attribute under `keyval`, running its delete callback (nothing when none is set).
   * @throws MPIError(ERR_KEYVAL) for a predefined, unknown or freed keyval; the callback's error
   */
  deleteAttr(keyval: number): void {
    const call = 'Comm.deleteAttr';
    this._checkNotFreed(call);
    deleteAttr(this, this._handle, keyval, call);
  }

  /**
   * Sets the communicator's hints (MPI_Comm_set_info): the keys of `info` replace those of the same
   * name. Among them the MPI 4.0 assertions mpi_assert_no_any_source, mpi_assert_no_any_tag,
   * mpi_assert_exact_length and mpi_assert_allow_overtaking ("true" / "false"). Not collective here
   * (MPI makes it collective; every rank should pass the same hints).
   * @throws MPIError(ERR_INFO) when info is not a live Info
   * @example comm.setInfo(new MPI.Info({ mpi_assert_no_any_tag: 'true' }));
   */
  setInfo(info: Info): void {
    const call = 'Comm.setInfo';
    this._checkNotFreed(call);
    const entries = infoEntries(info, call) ?? [];
    const merged = new Map(this._hints);
    for (const [k, v] of entries) merged.set(k, v);
    this._hints = [...merged];
  }

  /** A new Info with the communicator's hints (MPI_Comm_get_info): free it when done. */
  getInfo(): Info {
    this._checkNotFreed('Comm.getInfo');
    return new Info(Object.fromEntries(this._hints));
  }

  /** @internal Whether the hint `key` is "true" (the MPI 4.0 assertions). */
  _asserts(key: string): boolean {
    for (const [k, v] of this._hints) if (k === key) return v.trim().toLowerCase() === 'true';
    return false;
  }

  /**
   * Sets the communicator's error handler in this thread (MPI_Comm_set_errhandler): ERRORS_RETURN
   * (the default), ERRORS_ARE_FATAL, ERRORS_ABORT, or one of Errhandler.create.
   * @throws MPIError(ERR_ARG) when h is not a live Errhandler
   * @example MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_ARE_FATAL);
   */
  setErrhandler(h: Errhandler): void {
    const call = 'Comm.setErrhandler';
    checkActive(call);
    this.#useErrhandler(checkErrhandler(h, call));
  }

  #useErrhandler(handler: Errhandler): void {
    this._errhandler = handler;
    routeErrors(this, handler === ERRORS_RETURN ? null : (e) => this.#onError(e));
  }

  /** The communicator's error handler in this thread. */
  getErrhandler(): Errhandler {
    checkActive('Comm.getErrhandler');
    return this._errhandler;
  }

  /**
   * Invokes the communicator's error handler with an MPIError of `errorClass` (MPI_Comm_call_errhandler):
   * a user handler runs, ERRORS_ARE_FATAL / ERRORS_ABORT end the job, ERRORS_RETURN does nothing. Returns normally otherwise.
   * @throws MPIError(ERR_ARG) when errorClass is not an integer
   */
  callErrhandler(errorClass: number): void {
    const call = 'Comm.callErrhandler';
    checkActive(call);
    if (!Number.isInteger(errorClass)) throw mpiError(ERR_ARG, call, `errorClass ${describe(errorClass)} is invalid: expected an error class (an integer)`);
    this.#onError(mpiError(errorClass, call, `error handler called by the program on ${this.name}`));
  }

  /** The routed calls' hook (errhandler.ts): runs the handler, returns what the call throws. */
  #onError(e: MPIError): MPIError {
    invokeErrhandler(this._errhandler, this, e, runtimeOrNull()?.job?.rank ?? 0, (code, target) => abort(code, target as Comm));
    return e;
  }

  /** @internal #begin for the creations of api/intercomm.ts. */
  _beginCreation(call: string): Creation {
    return this.#begin(call);
  }

  /** @internal #commCollectives for the creations of api/intercomm.ts: [collectives, priority tag, wire tag]. */
  _creationCollectives(call: string): [ContextIdCollectives, number, number] {
    return this.#commCollectives(call);
  }

  /**
   * @internal #make for the creations of api/intercomm.ts: the records of a communicator whose
   * wrapper `make` builds (the context id goes back if the records cannot be made).
   */
  static _makeWith(c: Creation, name: string, ctx: number, endpoints: Int32Array, group: number | null, make: (name: string, ctx: number, endpoints: Int32Array) => Comm): Comm {
    return Comm.#make(c, name, ctx, endpoints, group, null, make);
  }

  /** Checks this communicator for a creation and snapshots what it needs. */
  #begin(call: string): Creation {
    const me = this._me(call);
    const rt = runtime(call);
    // gc: freed communicators whose operations are done give their context ids back before this allocation.
    rt.device.lifetime.maybeCollect();
    return { call, parent: this, me, state: rt.contextIds[me - rt.device.firstEndpoint]!, options: { ...contextIdOptions(rt.settings, call), leader: this._endpoints[0]! } };
  }

  /**
   * The allocator's collectives on this communicator's collective context, with a fresh tag from
   * its collective sequence (taken now, so creations and collectives keep call order).
   */
  #commCollectives(call: string, pt = new CommCollPt2pt(this, call)): [ContextIdCollectives, number, number] {
    const seq = this._collSeq++;
    // Signature 0: not one of the named collectives (coll/signature.ts); a rank in another collective names it so.
    const tag = collTag(seq, 0);
    return [contextIdCollectives(pt, tag), collectivePriorityTag(seq), tag];
  }

  /** Checks that `group` is a live Group whose members all belong to this communicator. */
  #subgroup(group: Group, call: string): Group {
    const g = Group._check(group, call, 'group');
    const members = g._logic.members;
    for (let r = 0; r < members.length; r++) {
      if (this._rankOfEndpoint(members[r]!) === UNDEFINED) {
        throw mpiError(ERR_GROUP, call, `group rank ${r} (endpoint ${members[r]}) is not a member of ${this.name}: the group must be a subgroup of the communicator's group`);
      }
    }
    return g;
  }

  /**
   * A new communicator and its records. On failure (object table full) the context id goes back.
   * @param group the group record to share (a reference the caller took with holdGroup, which the
   *   new communicator keeps), or null to make one
   * @param topo the topology its record keeps and the class to make; null: a plain Comm
   * @param make the wrapper to make instead (an intercommunicator), or null
   */
  static #make(
    c: Creation, name: string, ctx: number, endpoints: Int32Array, group: number | null, topo: TopologySpec | null = null,
    make: ((name: string, ctx: number, endpoints: Int32Array) => Comm) | null = null,
  ): Comm {
    const dev = runtime(c.call).device;
    const objects = dev.objects;
    let groupHandle: number;
    let handle: number;
    try {
      if (group === null) {
        groupHandle = objects.create(OBJECT_KIND.GROUP, false, [endpoints.length], new Uint8Array(endpoints.buffer, endpoints.byteOffset, endpoints.byteLength), c.call);
      } else {
        groupHandle = group;
      }
    } catch (e) {
      freeContextId(c.state, ctx);
      throw e;
    }
    try {
      handle = dev.lifetime.create(OBJECT_KIND.COMM, [ctx, groupHandle, c.me - dev.firstEndpoint], topo === null ? null : encodeTopology(topo.topology), c.call);
    } catch (e) {
      objects.release(groupHandle);
      freeContextId(c.state, ctx);
      throw e;
    }
    const comm = make !== null ? make(name, ctx, endpoints) : topo === null ? new Comm(name, ctx, endpoints, false) : topo.make(name, ctx, endpoints);
    comm._handle = handle;
    // The collective sequence may live in a per-record cell that a freed communicator used: start it over.
    comm._collSeq = 0;
    // MPI 4.0 7.4: a new communicator inherits its parent's error handler (in this thread).
    // (Also a handler the user has freed since: it stays in force where it is set, MPI 4.0 9.3.4.)
    if (c.parent._errhandler !== ERRORS_RETURN) comm.#useErrhandler(c.parent._errhandler);
    return comm;
  }
}

/**
 * The object table's onDestroy hook (installed by init in every thread): a communicator record
 * going away returns its context id to the endpoint that allocated it and drops its group.
 */
export function destroyCommRecord(handle: number): void {
  if (handleKind(handle) !== OBJECT_KIND.COMM) return;
  const rt = runtime('Comm.free');
  const objects = rt.device.objects;
  const endpoint = objects.data(handle, ID_ENDPOINT_WORD);
  if (endpoint >= 0) {
    // comm.stats() of the next communicator with this context id starts from zero.
    rt.device.shared.clearCommCounts(objects.data(handle, 0));
    freeContextId(rt.contextIds[endpoint]!, objects.data(handle, 0));
  }
  objects.release(objects.data(handle, GROUP_WORD));
}

function checkKey(key: number, call: string): void {
  if (!Number.isInteger(key) || key < INT_MIN || key > INT_MAX) {
    throw mpiError(ERR_ARG, call, `key ${typeof key === 'number' ? key : describe(key)} is invalid: expected an integer ${INT_MIN}..${INT_MAX}`);
  }
}

/**
 * Takes a reference to group record `h` at the call: the user may free the group (or the parent)
 * before the creation completes. The new communicator keeps it (#make); consumingGroup drops it
 * if the creation fails.
 */
function holdGroup(h: number, call: string): number {
  runtime(call).device.objects.retain(h);
  return h;
}

function consumingGroup<T>(held: number, call: string, body: () => Promise<T>): Promise<T> {
  return body().catch((e: unknown) => {
    runtime(call).device.objects.release(held);
    throw e;
  });
}

/** Records a blocking creation for mpiexec's roll-call until it settles. */
function blockingCreation<T>(call: string, comm: string, ctx: number, p: Promise<T>): Promise<T> {
  // Null only in a program that finalized while this call was in flight: nothing to record then.
  const blocked = runtimeOrNull()?.blocked ?? null;
  if (blocked === null) return p;
  blocked.enter(call, comm, null, null, ctx);
  return p.finally(() => blocked.leave());
}
