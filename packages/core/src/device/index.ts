export { Device } from './device.ts';
// The wire's message-size limit, for the API's argument checks (api/ does not import transport/).
export { MAX_MESSAGE_BYTES } from '../transport/index.ts';
export type { DeviceOptions, DirectRoute, ProbeInfo } from './device.ts';
export type { KnownProcesses } from './device-options.ts';
export { DevRequest, REQ_KIND } from './dev-request.ts';
export type { MatchingMode } from './match-queues.ts';
export {
  ObjectTable, OBJECT_KIND, OBJECT_FLAG, RECORD, DATA_WORDS, NULL_HANDLE, handleKind, handleIndex, isPredefinedHandle,
} from './object-table.ts';
export type { ObjectKind, ObjectTableBuffers } from './object-table.ts';
export { SharedState, MAX_THREADS, STAT, COMM_STAT, STAT_ROW_WORDS, statRows, commStatBlock } from './shared-state.ts';
export type { SharedBuffers, SharedLayout } from './shared-state.ts';
export { Engines } from './engines.ts';
export { processPeerBytes } from './peer-bytes.ts';
export { channelHosts, directoryName, type RmaWindowShared } from './rma-directory.ts';
export { RmaTarget, RMA_BATCH, RMA_CODE, RMA_EPOCH, RMA_LOCK_TYPE, RMA_STATUS, RMA_CONTROL, RMA_PREFIX_BYTES, RMA_REGION_SPAN, rmaDispWords } from './rma-target.ts';
export type { RmaWindowRecord } from './rma-target.ts';
export { ELEM, ELEM_SIZE, ACC_OP } from './rma-accumulate.ts';
export type { EngineBoot } from './engine-worker.ts';
export { Lifetime, GcLifetime, createLifetime, allocateLifetimeBuffers, REF_MODE, REFCOUNT_STRATEGIES, GC_THRESHOLD, CELLS_PER_THREAD } from './lifetime.ts';
export type { RefcountStrategy, LifetimeBuffers } from './lifetime.ts';
export { endpointReceivePlan, resolveEndpointReceive } from './endpoint-receive.ts';
export type { EndpointReceive, EndpointReceivePlan } from './endpoint-receive.ts';
