export {
  ERROR_CLASSES, MPIError, mpiError, errorString, errorClassName, callSite, rejectAtCallSite,
  SUCCESS, ERR_BUFFER, ERR_COUNT, ERR_TYPE, ERR_TAG, ERR_COMM, ERR_RANK, ERR_ROOT, ERR_GROUP, ERR_OP, ERR_ARG,
  ERR_DIMS, ERR_TRUNCATE, ERR_OTHER, ERR_INTERN, ERR_IN_STATUS, ERR_PENDING, ERR_NO_MEM, ERR_PROC_FAILED, ERR_ENDPOINTS,
  ERR_INFO, ERR_INFO_KEY, ERR_INFO_VALUE, ERR_INFO_NOKEY, ERR_KEYVAL,
  ERR_FILE, ERR_NO_SUCH_FILE, ERR_FILE_EXISTS, ERR_ACCESS, ERR_AMODE, ERR_BAD_FILE, ERR_READ_ONLY, ERR_NO_SPACE, ERR_IO,
  ERR_UNSUPPORTED_DATAREP, ERR_FILE_IN_USE,
  ERR_WIN, ERR_BASE, ERR_DISP, ERR_SIZE, ERR_LOCKTYPE, ERR_RMA_CONFLICT, ERR_RMA_SYNC, ERR_RMA_RANGE, ERR_RMA_ATTACH, ERR_RMA_SHARED,
  ERR_SPAWN, ERR_PORT, ERR_NAME, ERR_SERVICE,
} from './errors.ts';
export type { ErrorClassName } from './errors.ts';
export { assert } from './assert.ts';
export { encodeObject, decodeObject } from './object-codec.ts';
export { registerClass } from './class-registry.ts';
export type { RegisterClassOptions } from './class-registry.ts';
export { workerArgs } from './ts-worker.ts';
export { waitAsync } from './wait-async.ts';
export { schedYield } from './sched-yield.ts';
export { COLL_SEQ_BITS, COLL_SEQ_MASK, COLL_SIGNATURE_BITS, collSignature, collTag, tagMatchMask } from './coll-tag.ts';
export { ANY, ANY_SOURCE, ANY_TAG, PROC_NULL, UNDEFINED, CONTEXT_SUFFIX, CONTEXT_SUFFIX_BITS } from './sentinels.ts';
export {
  KEY_PROOF_NONCE_BYTES, KEY_PROOF_BYTES, KeyChallenge, KeyResponse, isJobKeyProof, keyProofBinding, newKeyProofNonce, proveJobKey,
} from './key-proof.ts';
export type { KeyProofSide } from './key-proof.ts';
export { formatLogLine, textLogDestination } from './log-line.ts';
export type { LogFormat } from './log-line.ts';
export { deferredLogger } from './deferred-logger.ts';
export type { LogFn, Logger } from './deferred-logger.ts';
export { JOB_TLS_CIPHERS, JOB_TLS_IDENTITY, couplingTls, couplingTlsClientOptions, jobTlsClientOptions, jobTlsFailure, jobTlsPsk, jobTlsServerOptions, tlsModule } from './job-tls.ts';
export type { CouplingTls, CouplingTlsKind } from './job-tls.ts';
export { RankTable } from './rank-table.ts';
export { flushBeforeFirstUseLoads, loadAtFirstUse } from './first-use-load.ts';
