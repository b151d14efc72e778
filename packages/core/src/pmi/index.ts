/**
 * @tsmpi/core/pmi: the wire-up service contract shared by core (the client)
 * and packages/launcher (the server). Explicit named exports only.
 */
export { connectPmi } from './client.ts';
export {
  PMI_PROTOCOL_VERSION,
  CLOSE_CODES,
  encodeClientMessage,
  encodeServerMessage,
  decodeClientMessage,
  decodeServerMessage,
} from './protocol.ts';
export type {
  ClientMessage,
  ServerMessage,
  HelloMessage,
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
} from './protocol.ts';
export type { PmiClient, BlockedIn, FinalizeReport } from './client-api.ts';
export type { JobEnv } from '../config/index.ts';
// The launcher may import only @tsmpi/core/pmi: the settings table (for its
// flags and --help) and the job environment names are part of that contract.
export { SETTINGS, parseSetting, JOB_ENV } from '../config/index.ts';
export type { SettingRow, Settings } from '../config/index.ts';
