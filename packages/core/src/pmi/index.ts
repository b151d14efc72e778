/**
 * @tsmpi/core/pmi: the wire-up service contract shared by core (the client)
 * and packages/launcher (the server). Explicit named exports only.
 */
export { connectPmi } from './client.ts';
export {
  PMI_PROTOCOL_VERSION,
  MAX_HELLO_BYTES,
  CLOSE_CODES,
  pmiProofBinding,
  encodeClientMessage,
  encodeServerMessage,
  decodeClientMessage,
  decodeServerMessage,
  DYN_OPS,
  MAX_PEER_FAILED_CHARS,
  zeroMask,
  wireupUrl,
  parseWireupUrl,
  versionMismatch,
  wireupUrlError,
} from './protocol.ts';
// A rank's link (issue 38): the service side reads and writes the frames the process side does.
export { FramedLink, CLOSE_ABNORMAL, LinkOpeningError } from './link.ts';
export type { LinkHandler } from './link.ts';
export { LINK_UPGRADE, LINK_VERSION_HEADER, LINK_REQUEST, LINK_RESPONSE, LINK_VERSION_REFUSAL, linkRequestError, linkResponseError, FrameReader, encodeMessageFrame, encodeCloseFrame, FRAME_KIND } from './link-frames.ts';
export type { FrameSink } from './link-frames.ts';
export type {
  ClientMessage,
  ServerMessage,
  HelloMessage,
  ChallengeMessage,
  FenceMessage,
  GetMessage,
  InitializedMessage,
  FinalizedMessage,
  AbortMessage,
  PeerLostMessage,
  RollCallReplyMessage,
  WelcomeMessage,
  FenceDoneMessage,
  GetReplyMessage,
  AckMessage,
  RollCallMessage,
  ClockMessage,
  ClockReplyMessage,
  TraceMessage,
  DynMessage,
  DynReplyMessage,
  PeerFailedMessage,
  DynOp,
} from './protocol.ts';
// mpiexec --trace (issue 41): the trace a process hands over, and the clock offset it measures.
export { TRACE_CALL, TRACE_MSG, encodeTraceDump, decodeTraceDump } from './trace-format.ts';
export type { TraceDump, TraceThread } from './trace-format.ts';
export { estimateClockOffset } from './clock-offset.ts';
export type { ClockSample } from './clock-offset.ts';
export type { PmiClient, BlockedIn, FinalizeReport, RankCounters, LocalCounters } from './client-api.ts';
export type { JobEnv } from '../config/index.ts';
// The job-key proof (util/key-proof.ts): the launcher's service, proxy link and port link (a port's secret) use the mechanism the ranks use.
export { KeyChallenge, KeyResponse, isJobKeyProof, keyProofBinding, newKeyProofNonce, proveJobKey } from '../util/index.ts';
// mpiexec writes its own logs in the ranks' format (util/log-line.ts).
export { textLogDestination } from '../util/index.ts';
// mpiexec's logger makes its pino logger on the first record it writes, as a rank's (util/deferred-logger.ts).
export { deferredLogger } from '../util/index.ts';
export type { Logger } from '../util/index.ts';
// TLS keyed by the job (util/job-tls.ts, mpiexec --secure): the wire-up service and the proxies' links use what the ranks use.
export { couplingTls, couplingTlsClientOptions, jobTlsClientOptions, jobTlsFailure, jobTlsServerOptions } from '../util/index.ts';
// The launcher may import only @tsmpi/core/pmi: the settings table (for its
// flags and --help) and the job environment names are part of that contract.
export { SETTINGS, parseSetting, JOB_ENV, isProgress } from '../config/index.ts';
export type { Progress, SettingRow, Settings } from '../config/index.ts';
