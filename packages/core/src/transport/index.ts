export { FRAME_KIND, FRAME_FLAG, MAX_MESSAGE_BYTES, channelOf, fillAnswer, newFrameHeader } from './interface.ts';
// The job-key proof every transport's connection handshake uses (util/key-proof.ts: one mechanism for every connection of a job).
export { KEY_PROOF_BYTES, KEY_PROOF_NONCE_BYTES, isJobKeyProof, newKeyProofNonce, proveJobKey } from '../util/index.ts';
// TLS keyed by the job (util/job-tls.ts, mpiexec --secure): a transport's connections between hosts use it.
export { couplingTls, couplingTlsClientOptions, jobTlsClientOptions, jobTlsFailure, jobTlsServerOptions } from '../util/index.ts';
export { secureTransportFactory } from './secure-factory.ts';
export type {
  EagerArrived, ForeignPeer, FrameKind, FrameHeader, ReaderSocketName, Transport, TransportFactory, TransportHandlers, TransportOptions, TransportLog, TransportError,
} from './interface.ts';
// The loopback network and the conformance suite are test code: kit.ts (`@tsmpi/core/transport/kit`), not loaded by a rank.
