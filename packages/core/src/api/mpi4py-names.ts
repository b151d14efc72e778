/**
 * mpi4py spellings: the names an mpi4py (or C MPI) user types first, such as
 * `comm.Get_rank()`, `comm.Barrier()`, `MPI.Wtime()`, given as aliases of the
 * canonical API from one table (docs/API.md "mpi4py spellings").
 *
 * The rule: an alias is the canonical method itself (the same function, so
 * errors, stacks and speed are the same and error messages name the canonical
 * call), or, where tsmpi has a property (`comm.rank`), a method that reads or
 * writes that property. An mpi4py call that takes other arguments or returns
 * another shape (`Request.Waitany`, `Comm.Iprobe`, `Op.Create` with its
 * non-commutative default, `Datatype.Create_vector`) gets no alias: a look-alike
 * that behaves differently is worse than a TypeError; docs/MPI4PY.md shows the
 * tsmpi call. Aliases are installed non-enumerable on the prototypes (and
 * statics), so they do not show up in `Object.keys` or in object messages.
 */
import { assert, errorString } from '../util/index.ts';
import { attachBuffer, detachBuffer } from './bsend-buffer.ts';
import { Comm } from './comm.ts';
import { Datatype } from './datatype.ts';
import { File } from './file.ts';
import { Group } from './group.ts';
import { TopoComm } from './neighbor-comm.ts';
import { finalize, getProcessorName, init, isFinalized, isInitialized, queryThread, wtick, wtime } from './lifecycle.ts';
import { Op } from './op.ts';
import { PartitionedRequest } from './partitioned.ts';
import { Request } from './request.ts';
import { Status } from './status.ts';

/** Module-level spellings: `MPI.Wtime()` is `MPI.wtime()`. index.ts exports these. */
export {
  init as Init, finalize as Finalize, isInitialized as Is_initialized, isFinalized as Is_finalized,
  queryThread as Query_thread, wtime as Wtime, wtick as Wtick, getProcessorName as Get_processor_name,
  errorString as Get_error_string, attachBuffer as Attach_buffer, detachBuffer as Detach_buffer,
};

declare module './comm.ts' {
  interface Comm {
    /** mpi4py spelling of `comm.rank`. */
    Get_rank(): number;
    /** mpi4py spelling of `comm.size`. */
    Get_size(): number;
    /** mpi4py spelling of `comm.group` (a new reference: free it when done). */
    Get_group(): Group;
    /** mpi4py spelling of `comm.name`. */
    Get_name(): string;
    /** mpi4py spelling of `comm.name = name`. */
    Set_name(name: string): void;
    /** mpi4py spelling of `comm.barrier()`. */
    Barrier(): Promise<void>;
    /** mpi4py spelling of `comm.dup()`. */
    Dup(): Promise<Comm>;
    /** mpi4py spelling of `comm.split(color, key)`. */
    Split(color: number, key?: number): Promise<Comm | null>;
    /** mpi4py spelling of `comm.splitType(type, key)`. */
    Split_type(type: number, key?: number): Promise<Comm | null>;
    /** mpi4py spelling of `comm.create(group)`. */
    Create(group: Group): Promise<Comm | null>;
    /** mpi4py spelling of `comm.createGroup(group, tag)`. */
    Create_group(group: Group, tag?: number): Promise<Comm | null>;
    /** mpi4py spelling of `comm.compare(other)`. */
    Compare(other: Comm): number;
    /** mpi4py spelling of `comm.free()`. */
    Free(): void;
    // The send modes, persistent and partitioned point-to-point, the reduce-scatters and the persistent collectives (issue 36).
    Send_init: Comm['SendInit'];
    Recv_init: Comm['RecvInit'];
    Bsend_init: Comm['BsendInit'];
    Rsend_init: Comm['RsendInit'];
    Ssend_init: Comm['SsendInit'];
    Sendrecv_replace: Comm['SendrecvReplace'];
    Isendrecv_replace: Comm['IsendrecvReplace'];
    Psend_init: Comm['PsendInit'];
    Precv_init: Comm['PrecvInit'];
    Reduce_scatter: Comm['ReduceScatter'];
    Ireduce_scatter: Comm['IreduceScatter'];
    Reduce_scatter_block: Comm['ReduceScatterBlock'];
    Ireduce_scatter_block: Comm['IreduceScatterBlock'];
    Barrier_init: Comm['BarrierInit'];
    Bcast_init: Comm['BcastInit'];
    Reduce_init: Comm['ReduceInit'];
    Allreduce_init: Comm['AllreduceInit'];
    Reduce_scatter_init: Comm['ReduceScatterInit'];
    Reduce_scatter_block_init: Comm['ReduceScatterBlockInit'];
    Scan_init: Comm['ScanInit'];
    Exscan_init: Comm['ExscanInit'];
    Gather_init: Comm['GatherInit'];
    Gatherv_init: Comm['GathervInit'];
    Scatter_init: Comm['ScatterInit'];
    Scatterv_init: Comm['ScattervInit'];
    Allgather_init: Comm['AllgatherInit'];
    Allgatherv_init: Comm['AllgathervInit'];
    Alltoall_init: Comm['AlltoallInit'];
    Alltoallv_init: Comm['AlltoallvInit'];
    Alltoallw_init: Comm['AlltoallwInit'];
  }
}

// The neighborhood collectives of the topology communicators (CartComm, GraphComm, DistGraphComm: mpi4py's Topocomm).
declare module './neighbor-comm.ts' {
  interface TopoComm {
    neighbor_allgather: TopoComm['neighborAllgather'];
    neighbor_alltoall: TopoComm['neighborAlltoall'];
    Neighbor_allgather: TopoComm['NeighborAllgather'];
    Ineighbor_allgather: TopoComm['IneighborAllgather'];
    Neighbor_allgather_init: TopoComm['NeighborAllgatherInit'];
    Neighbor_allgatherv: TopoComm['NeighborAllgatherv'];
    Ineighbor_allgatherv: TopoComm['IneighborAllgatherv'];
    Neighbor_allgatherv_init: TopoComm['NeighborAllgathervInit'];
    Neighbor_alltoall: TopoComm['NeighborAlltoall'];
    Ineighbor_alltoall: TopoComm['IneighborAlltoall'];
    Neighbor_alltoall_init: TopoComm['NeighborAlltoallInit'];
    Neighbor_alltoallv: TopoComm['NeighborAlltoallv'];
    Ineighbor_alltoallv: TopoComm['IneighborAlltoallv'];
    Neighbor_alltoallv_init: TopoComm['NeighborAlltoallvInit'];
    Neighbor_alltoallw: TopoComm['NeighborAlltoallw'];
    Ineighbor_alltoallw: TopoComm['IneighborAlltoallw'];
    Neighbor_alltoallw_init: TopoComm['NeighborAlltoallwInit'];
  }
}

declare module './group.ts' {
  interface Group {
    /** mpi4py spelling of `group.rank`. */
    Get_rank(): number;
    /** mpi4py spelling of `group.size`. */
    Get_size(): number;
    /** mpi4py spelling of `group.incl(ranks)`. */
    Incl(ranks: number[]): Group;
    /** mpi4py spelling of `group.excl(ranks)`. */
    Excl(ranks: number[]): Group;
    /** mpi4py spelling of `group.rangeIncl(ranges)`. */
    Range_incl(ranges: [first: number, last: number, stride: number][]): Group;
    /** mpi4py spelling of `group.rangeExcl(ranges)`. */
    Range_excl(ranges: [first: number, last: number, stride: number][]): Group;
    /** mpi4py spelling of `group.translateRanks(ranks, other)`. */
    Translate_ranks(ranks: number[], other: Group): number[];
    /** mpi4py spelling of `group.compare(other)`. */
    Compare(other: Group): number;
    /** mpi4py spelling of `group.free()`. */
    Free(): void;
  }
  namespace Group {
    /** mpi4py spelling of `Group.union(a, b)`. */
    let Union: (a: Group, b: Group) => Group;
    /** mpi4py spelling of `Group.intersection(a, b)`. */
    let Intersection: (a: Group, b: Group) => Group;
    /** mpi4py spelling of `Group.difference(a, b)`. */
    let Difference: (a: Group, b: Group) => Group;
  }
}

declare module './request.ts' {
  interface Request<T> {
    /** mpi4py spelling of `request.wait()` (resolves the value, as `wait()` does). */
    Wait(): Promise<T>;
    /** mpi4py spelling of `request.test()`. */
    Test(): boolean;
    /** mpi4py spelling of `request.cancel()`. */
    Cancel(): void;
    /** mpi4py spelling of `request.free()`. */
    Free(): void;
    /** mpi4py spelling of `request.start()` (persistent requests). */
    Start(): void;
  }
  namespace Request {
    /** mpi4py spelling of `Request.waitall(reqs)` (resolves the values, as `waitall` does). */
    let Waitall: (reqs: Request<any>[]) => Promise<any[]>;
    /** mpi4py spelling of `Request.testall(reqs)`. */
    let Testall: (reqs: Request<any>[]) => boolean;
  }
}

declare module './status.ts' {
  interface Status {
    /** mpi4py spelling of `status.source`. */
    Get_source(): number;
    /** mpi4py spelling of `status.tag`. */
    Get_tag(): number;
    /** mpi4py spelling of `status.error`. */
    Get_error(): number;
    /** mpi4py spelling of `status.cancelled`. */
    Is_cancelled(): boolean;
    /** mpi4py spelling of `status.getCount(datatype)`: bytes without a datatype, as in mpi4py. */
    Get_count(datatype?: Datatype): number;
    /** mpi4py spelling of `status.source = source`. */
    Set_source(source: number): void;
    /** mpi4py spelling of `status.tag = tag`. */
    Set_tag(tag: number): void;
    /** mpi4py spelling of `status.error = error`. */
    Set_error(error: number): void;
  }
}

declare module './partitioned.ts' {
  interface PartitionedRequest {
    Pready: PartitionedRequest['pready'];
    Pready_range: PartitionedRequest['preadyRange'];
    Pready_list: PartitionedRequest['preadyList'];
    Parrived: PartitionedRequest['parrived'];
  }
}

declare module './datatype.ts' {
  interface Datatype {
    /** mpi4py spelling of `datatype.size`. */
    Get_size(): number;
    /** mpi4py spelling of `datatype.commit()`. */
    Commit(): Datatype;
    /** mpi4py spelling of `datatype.free()`. */
    Free(): void;
  }
}

declare module './op.ts' {
  interface Op {
    /** mpi4py spelling of `op.free()`. */
    Free(): void;
  }
}

declare module './file.ts' {
  interface File {
    /** mpi4py spelling of `file.amode`. */
    Get_amode(): number;
    /** mpi4py spelling of `file.group`. */
    Get_group(): Group;
    Close: File['close'];
    Set_view: File['setView'];
    Read_at: File['ReadAt'];
    Write_at: File['WriteAt'];
    Read_at_all: File['ReadAtAll'];
    Write_at_all: File['WriteAtAll'];
    Iread_at: File['IreadAt'];
    Iwrite_at: File['IwriteAt'];
    Iread_at_all: File['IreadAtAll'];
    Iwrite_at_all: File['IwriteAtAll'];
    Read_all: File['ReadAll'];
    Write_all: File['WriteAll'];
    Iread_all: File['IreadAll'];
    Iwrite_all: File['IwriteAll'];
    Read_shared: File['ReadShared'];
    Write_shared: File['WriteShared'];
    Read_ordered: File['ReadOrdered'];
    Write_ordered: File['WriteOrdered'];
    Read_at_all_begin: File['ReadAtAllBegin'];
    Read_at_all_end: File['ReadAtAllEnd'];
    Write_at_all_begin: File['WriteAtAllBegin'];
    Write_at_all_end: File['WriteAtAllEnd'];
    Read_all_begin: File['ReadAllBegin'];
    Read_all_end: File['ReadAllEnd'];
    Write_all_begin: File['WriteAllBegin'];
    Write_all_end: File['WriteAllEnd'];
    Read_ordered_begin: File['ReadOrderedBegin'];
    Read_ordered_end: File['ReadOrderedEnd'];
    Write_ordered_begin: File['WriteOrderedBegin'];
    Write_ordered_end: File['WriteOrderedEnd'];
    Seek: File['seek'];
    Get_position: File['getPosition'];
    Get_byte_offset: File['getByteOffset'];
    Seek_shared: File['seekShared'];
    Get_position_shared: File['getPositionShared'];
    Get_size: File['getSize'];
    Set_size: File['setSize'];
    Preallocate: File['preallocate'];
    Sync: File['sync'];
    Set_atomicity: File['setAtomicity'];
    Get_atomicity: File['getAtomicity'];
    Get_info: File['getInfo'];
    Set_info: File['setInfo'];
    Set_errhandler: File['setErrhandler'];
    Get_errhandler: File['getErrhandler'];
  }
  namespace File {
    let Open: typeof File.open;
    let Delete: typeof File.delete;
  }
}

/** One kind of alias: `alias` names the same function as `canonical`. */
export interface MethodAlias { readonly alias: string; readonly canonical: string }
/** `Get_x()` reads property `x`; `Set_x(v)` writes it. */
export interface PropertyAlias { readonly alias: string; readonly property: string; readonly write?: true }

/** Where the aliases go: a prototype (instance methods) or a class (statics), and what they alias. */
export interface AliasTarget {
  readonly owner: string;
  readonly on: object;
  readonly methods: readonly MethodAlias[];
  readonly properties: readonly PropertyAlias[];
}

/**
 * One row of the table. The names are keys of the class as declared above, so a misspelt alias or canonical
 * name, or an alias missing from the declarations, fails the type check.
 */
function aliases<C extends object>(
  owner: string,
  on: C,
  methods: [alias: keyof C & string, canonical: keyof C & string][],
  getters: [alias: keyof C & string, property: keyof C & string][] = [],
  setters: [alias: keyof C & string, property: keyof C & string][] = [],
): AliasTarget {
  return {
    owner,
    on,
    methods: methods.map(([alias, canonical]) => ({ alias, canonical })),
    properties: [
      ...getters.map(([alias, property]) => ({ alias, property })),
      ...setters.map(([alias, property]) => ({ alias, property, write: true as const })),
    ],
  };
}

/** The table: every alias on a class, in one place. docs/API.md "mpi4py spellings" lists the same. */
export const MPI4PY_ALIASES: readonly AliasTarget[] = [
  aliases('Comm', Comm.prototype,
    [['Barrier', 'barrier'], ['Dup', 'dup'], ['Split', 'split'], ['Split_type', 'splitType'], ['Create', 'create'],
      ['Create_group', 'createGroup'], ['Compare', 'compare'], ['Free', 'free'],
      ['Send_init', 'SendInit'], ['Recv_init', 'RecvInit'], ['Bsend_init', 'BsendInit'], ['Rsend_init', 'RsendInit'],
      ['Ssend_init', 'SsendInit'], ['Sendrecv_replace', 'SendrecvReplace'], ['Isendrecv_replace', 'IsendrecvReplace'], ['Psend_init', 'PsendInit'],
      ['Precv_init', 'PrecvInit'], ['Reduce_scatter', 'ReduceScatter'], ['Ireduce_scatter', 'IreduceScatter'], ['Reduce_scatter_block', 'ReduceScatterBlock'],
      ['Ireduce_scatter_block', 'IreduceScatterBlock'], ['Barrier_init', 'BarrierInit'], ['Bcast_init', 'BcastInit'], ['Reduce_init', 'ReduceInit'],
      ['Allreduce_init', 'AllreduceInit'], ['Reduce_scatter_init', 'ReduceScatterInit'], ['Reduce_scatter_block_init', 'ReduceScatterBlockInit'], ['Scan_init', 'ScanInit'],
      ['Exscan_init', 'ExscanInit'], ['Gather_init', 'GatherInit'], ['Gatherv_init', 'GathervInit'], ['Scatter_init', 'ScatterInit'],
      ['Scatterv_init', 'ScattervInit'], ['Allgather_init', 'AllgatherInit'], ['Allgatherv_init', 'AllgathervInit'], ['Alltoall_init', 'AlltoallInit'],
      ['Alltoallv_init', 'AlltoallvInit'], ['Alltoallw_init', 'AlltoallwInit']],
    [['Get_rank', 'rank'], ['Get_size', 'size'], ['Get_group', 'group'], ['Get_name', 'name']],
    [['Set_name', 'name']]),
  aliases('TopoComm', TopoComm.prototype,
    [['neighbor_allgather', 'neighborAllgather'], ['neighbor_alltoall', 'neighborAlltoall'],
      ['Neighbor_allgather', 'NeighborAllgather'], ['Ineighbor_allgather', 'IneighborAllgather'], ['Neighbor_allgather_init', 'NeighborAllgatherInit'],
      ['Neighbor_allgatherv', 'NeighborAllgatherv'], ['Ineighbor_allgatherv', 'IneighborAllgatherv'], ['Neighbor_allgatherv_init', 'NeighborAllgathervInit'],
      ['Neighbor_alltoall', 'NeighborAlltoall'], ['Ineighbor_alltoall', 'IneighborAlltoall'], ['Neighbor_alltoall_init', 'NeighborAlltoallInit'],
      ['Neighbor_alltoallv', 'NeighborAlltoallv'], ['Ineighbor_alltoallv', 'IneighborAlltoallv'], ['Neighbor_alltoallv_init', 'NeighborAlltoallvInit'],
      ['Neighbor_alltoallw', 'NeighborAlltoallw'], ['Ineighbor_alltoallw', 'IneighborAlltoallw'], ['Neighbor_alltoallw_init', 'NeighborAlltoallwInit']]),
  aliases('Group', Group.prototype,
    [['Incl', 'incl'], ['Excl', 'excl'], ['Range_incl', 'rangeIncl'], ['Range_excl', 'rangeExcl'],
      ['Translate_ranks', 'translateRanks'], ['Compare', 'compare'], ['Free', 'free']],
    [['Get_rank', 'rank'], ['Get_size', 'size']]),
  aliases('Group (static)', Group, [['Union', 'union'], ['Intersection', 'intersection'], ['Difference', 'difference']]),
  aliases('Request', Request.prototype, [['Wait', 'wait'], ['Test', 'test'], ['Cancel', 'cancel'], ['Free', 'free'], ['Start', 'start']]),
  aliases('Request (static)', Request, [['Waitall', 'waitall'], ['Testall', 'testall']]),
  aliases('PartitionedRequest', PartitionedRequest.prototype,
    [['Pready', 'pready'], ['Pready_range', 'preadyRange'], ['Pready_list', 'preadyList'], ['Parrived', 'parrived']]),
  aliases('Status', Status.prototype,
    [['Get_count', 'getCount']],
    [['Get_source', 'source'], ['Get_tag', 'tag'], ['Get_error', 'error'], ['Is_cancelled', 'cancelled']],
    [['Set_source', 'source'], ['Set_tag', 'tag'], ['Set_error', 'error']]),
  aliases('Datatype', Datatype.prototype, [['Commit', 'commit'], ['Free', 'free']], [['Get_size', 'size']]),
  aliases('Op', Op.prototype, [['Free', 'free']]),
  aliases('File', File.prototype,
    [['Close', 'close'], ['Set_view', 'setView'], ['Read_at', 'ReadAt'], ['Write_at', 'WriteAt'], ['Read_at_all', 'ReadAtAll'],
      ['Write_at_all', 'WriteAtAll'], ['Iread_at', 'IreadAt'], ['Iwrite_at', 'IwriteAt'], ['Iread_at_all', 'IreadAtAll'],
      ['Iwrite_at_all', 'IwriteAtAll'], ['Read_all', 'ReadAll'], ['Write_all', 'WriteAll'], ['Iread_all', 'IreadAll'],
      ['Iwrite_all', 'IwriteAll'], ['Read_shared', 'ReadShared'], ['Write_shared', 'WriteShared'], ['Read_ordered', 'ReadOrdered'],
      ['Write_ordered', 'WriteOrdered'],
      ['Read_at_all_begin', 'ReadAtAllBegin'], ['Read_at_all_end', 'ReadAtAllEnd'], ['Write_at_all_begin', 'WriteAtAllBegin'],
      ['Write_at_all_end', 'WriteAtAllEnd'], ['Read_all_begin', 'ReadAllBegin'], ['Read_all_end', 'ReadAllEnd'],
      ['Write_all_begin', 'WriteAllBegin'], ['Write_all_end', 'WriteAllEnd'], ['Read_ordered_begin', 'ReadOrderedBegin'],
      ['Read_ordered_end', 'ReadOrderedEnd'], ['Write_ordered_begin', 'WriteOrderedBegin'],
      ['Write_ordered_end', 'WriteOrderedEnd'],
      ['Seek', 'seek'], ['Get_position', 'getPosition'], ['Get_byte_offset', 'getByteOffset'],
      ['Seek_shared', 'seekShared'], ['Get_position_shared', 'getPositionShared'], ['Get_size', 'getSize'], ['Set_size', 'setSize'],
      ['Preallocate', 'preallocate'], ['Sync', 'sync'], ['Set_atomicity', 'setAtomicity'], ['Get_atomicity', 'getAtomicity'],
      ['Get_info', 'getInfo'], ['Set_info', 'setInfo'], ['Set_errhandler', 'setErrhandler'], ['Get_errhandler', 'getErrhandler']],
    [['Get_amode', 'amode'], ['Get_group', 'group']]),
  aliases('File (static)', File, [['Open', 'open'], ['Delete', 'delete']]),
];

function install(target: AliasTarget): void {
  const on = target.on as Record<string, unknown>;
  const define = (name: string, value: unknown): void => {
    Object.defineProperty(on, name, { value, writable: true, configurable: true, enumerable: false });
  };
  for (const { alias, canonical } of target.methods) {
    assert(typeof on[canonical] === 'function', `mpi4py-names: ${target.owner}.${canonical} is a method`);
    define(alias, on[canonical]);
  }
  for (const { alias, property, write } of target.properties) {
    // Named functions: a stack trace through one reads "Comm.Get_rank".
    const fn = write === true
      ? { [alias](this: Record<string, unknown>, v: unknown): void { this[property] = v; } }[alias]
      : { [alias](this: Record<string, unknown>): unknown { return this[property]; } }[alias];
    define(alias, fn);
  }
}

for (const target of MPI4PY_ALIASES) install(target);
