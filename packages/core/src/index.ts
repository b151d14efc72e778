/**
 * @tsmpi/core: MPI for Node.js. The public surface is exactly API.md.
 * @example
 *   import * as MPI from '@tsmpi/core';
 *   await MPI.init();
 *   console.log(MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size);
 *   await MPI.finalize();
 */
export { init, finalize, abort, queryThread, wtime, wtick, getProcessorName } from './api/lifecycle.ts';
export { isInitialized, isFinalized } from './api/lifecycle.ts';
export { COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE } from './api/predefined-comms.ts';
export {
  ANY_SOURCE, ANY_TAG, PROC_NULL, UNDEFINED, TAG_UB, IN_PLACE, IDENT, CONGRUENT, SIMILAR, UNEQUAL, COMM_TYPE_SHARED, ROOT,
} from './api/constants.ts';
export type { ThreadLevel } from './api/constants.ts';
export { Comm } from './api/comm.ts';
// Topologies and neighborhood collectives (issue 36): the classes, and Comm's create* calls installed by topology-create.ts.
export { CartComm, GraphComm, DistGraphComm } from './api/topology-comm.ts';
export { computeDims } from './api/topology-create.ts';
export type { DistGraphOptions } from './api/topology-create.ts';
export type { WBufSpec } from './api/neighbor-comm.ts';
// Intercommunicators (issue 36): the class, and Comm's createIntercomm installed by intercomm.ts.
export { Intercomm } from './api/intercomm-create.ts';
// Dynamic processes (issue 37): spawn, ports, names; Comm's spawn/accept/connect/disconnect installed by dynamic.ts.
export { getParent, openPort, closePort, publishName, lookupName, unpublishName } from './api/dynamic.ts';
export type { SpawnCommand, DynamicOptions } from './api/dynamic.ts';
// Attributes, info and error handlers (issue 36): predefined keyvals, Info, Errhandler and the predefined handlers.
export { UNIVERSE_SIZE, APPNUM, WTIME_IS_GLOBAL, HOST, IO } from './api/attributes.ts';
export type { KeyvalFns } from './api/attributes.ts';
export { Info } from './api/info.ts';
export { Errhandler, ERRORS_RETURN, ERRORS_ARE_FATAL, ERRORS_ABORT } from './api/errhandler.ts';
export type { ErrhandlerFn } from './api/errhandler.ts';
// Communicators and groups (issue 4): the public Group.
export { Group } from './api/group.ts';
export { Request } from './api/request.ts';
// More point-to-point (issue 36): the process's attached buffer of buffered sends.
export { attachBuffer, detachBuffer, BSEND_OVERHEAD } from './api/bsend-buffer.ts';
export { PartitionedRequest } from './api/partitioned.ts';
export { Status } from './api/status.ts';
export { Message } from './api/message.ts';
export {
  Datatype, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT32, FLOAT64, BYTE,
  INT8 as CHAR, INT16 as SHORT, INT32 as INT, INT64 as LONG, FLOAT32 as FLOAT, FLOAT64 as DOUBLE,
} from './api/datatype.ts';
export type { BufSpec } from './api/buffer.ts';
// Derived datatypes and packing (issue 5): Datatype statics live on the class; pack / unpack are functions.
export { pack, unpack } from './api/buffer.ts';
export { Op, SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC } from './api/op.ts';
// Every collective in every form (issue 36): the one local reduction.
export { reduceLocal } from './api/reduce-local.ts';
export { config, stats } from './api/introspection.ts';
// Parallel I/O (issue 37): File and its access modes and seek origins.
export {
  File, MODE_RDONLY, MODE_WRONLY, MODE_RDWR, MODE_CREATE, MODE_EXCL, MODE_APPEND, MODE_DELETE_ON_CLOSE, MODE_UNIQUE_OPEN, MODE_SEQUENTIAL,
  SEEK_SET, SEEK_CUR, SEEK_END,
} from './api/file.ts';
// Profiling hooks (issue 41): MPI.profile.use wraps the public classes' methods while hooks are installed.
export { profile } from './api/profile.ts';
export type { ProfileHooks } from './api/profile.ts';
// One-sided communication (issue 37): windows, their constants and the accumulate-only ops.
export { Win } from './api/win.ts';
export {
  LOCK_EXCLUSIVE, LOCK_SHARED, MODE_NOCHECK, MODE_NOSTORE, MODE_NOPUT, MODE_NOPRECEDE, MODE_NOSUCCEED, REPLACE, NO_OP,
} from './api/win-args.ts';
export { Worker } from './api/worker.ts';
export { dehydrate, revive, workerData } from './api/revive.ts';
export { threadAttach, attachedEndpoint } from './api/endpoints.ts';
// mpi4py spellings (issue 39): aliases of the names above, one table in mpi4py-names.ts.
export {
  Init, Finalize, Is_initialized, Is_finalized, Query_thread, Wtime, Wtick, Get_processor_name, Get_error_string, Attach_buffer, Detach_buffer,
} from './api/mpi4py-names.ts';
export type { CommStats, Config, Stats } from './api/introspection.ts';
// Object messages (issue 39): classes that travel as themselves.
export { registerClass } from './util/index.ts';
export type { RegisterClassOptions } from './util/index.ts';
export {
  MPIError, errorString,
  SUCCESS, ERR_BUFFER, ERR_COUNT, ERR_TYPE, ERR_TAG, ERR_COMM, ERR_RANK, ERR_ROOT, ERR_GROUP, ERR_OP, ERR_ARG,
  ERR_TRUNCATE, ERR_OTHER, ERR_INTERN, ERR_IN_STATUS, ERR_PENDING, ERR_NO_MEM, ERR_PROC_FAILED, ERR_ENDPOINTS,
  ERR_DIMS, ERR_INFO, ERR_INFO_KEY, ERR_INFO_VALUE, ERR_INFO_NOKEY, ERR_KEYVAL,
  ERR_FILE, ERR_NO_SUCH_FILE, ERR_FILE_EXISTS, ERR_ACCESS, ERR_AMODE, ERR_BAD_FILE, ERR_READ_ONLY, ERR_NO_SPACE, ERR_IO,
  ERR_UNSUPPORTED_DATAREP, ERR_FILE_IN_USE,
  ERR_WIN, ERR_BASE, ERR_DISP, ERR_SIZE, ERR_LOCKTYPE, ERR_RMA_CONFLICT, ERR_RMA_SYNC, ERR_RMA_RANGE, ERR_RMA_ATTACH, ERR_RMA_SHARED,
  ERR_SPAWN, ERR_PORT, ERR_NAME, ERR_SERVICE,
} from './util/index.ts';
