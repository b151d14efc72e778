/**
 * The wire-up protocol between an MPI process (client.ts) and the launcher's
 * wire-up service (packages/launcher/src/wireup-server.ts), a small PMI.
 *
 * Transport: one link per process (link.ts: link-frames.ts's frames over a
 * socket, TLS under --secure; mpiexec's per-host proxies and other jobs use a
 * WebSocket on the same port), each frame one message encoded as MessagePack
 * (wire-codec.ts, the bytes msgpackr writes) as a plain object whose `t` field
 * names its type. The service's address is a
 * wire-up URL (wireupUrl): tcp://host:port, or tls://host:port under --secure.
 *
 * Conversation (client -> server unless marked <-):
 *
 *     <- challenge {v, nonce}         the service's first message: a fresh nonce
 *     hello {v, rank, pid,            must be first; proof proves the job key (util/key-proof.ts,
 *            nonce, proof}            bound to PMI_PROOF_LABEL, v, rank and pid); a wrong proof
 *                                     closes with CLOSE_CODES.badKey. The key never travels.
 *     <- welcome {size, proof}        the service's proof of the key: the client checks it before
 *                                     it sends anything else; the connection is now a member
 *     fence {puts}                    the puts made since the last fence travel with it
 *     <- fenceDone {kvs}              every rank called fence; kvs = everything those fences put
 *     get {id, key}                   <- getReply {id, value|null}
 *     initialized                     MPI.init completed (no reply)
 *     finalized {id, report}          <- ack {id}; exiting afterwards is normal
 *     abort {id, code, message}       <- ack {id}; the launcher then ends the job
 *     peerLost {id, process}          <- ack {id}; this process lost its connection to `process`,
 *                                     so its own failure is a consequence, not the cause
 *     <- rollCall {id, counters?}     rollCallReply {id, blockedIn|null, counters?}  (--timeout; with
 *                                     counters: true, mpiexec --dashboard's sample, and the reply
 *                                     carries the process's RankCounters, or omits them before init)
 *     clock {id}                      <- clockReply {id, timeMs}: mpiexec's clock, ms (--trace's offset, clock-offset.ts)
 *     trace {id, data}                <- ack {id}; data: the process's trace (trace-format.ts), before finalized
 *     <- peerFailed {process, why}    another job's process coupled at a port (docs/adr/0043) failed, as
 *                                     its mpiexec told this one: the process fails its pending and later
 *                                     calls that involve it (ERR_PROC_FAILED with `why`); no reply
 *     dyn {id, op, a}                 <- dynReply {id, error|null, value}: dynamic processes
 *                                     (docs/adr/0040-dynamic-processes.md): op names the request
 *                                     (DYN_OPS), `a` its arguments, checked by the launcher; error is
 *                                     [MPI error class name, message]
 *
 * hello's rank is the process's number in the job (its world's first process
 * number plus its rank; the same for the world mpiexec started), and welcome's
 * size is the size of the process's world.
 *
 * The decoders never throw: they return the message, or null for anything
 * malformed (the receiver then closes with CLOSE_CODES.protocol). Encoders return
 * a fresh buffer, because ws masks client frames in place.
 *
 * Before hello is accepted the service decodes nothing larger than
 * MAX_HELLO_BYTES (the launcher's pre-authentication limits).
 */
import { keyProofBinding } from '../util/index.ts';
import type { BlockedIn, FinalizeReport, RankCounters } from './client-api.ts';
import { packWire, unpackWire } from './wire-codec.ts';

/**
 * Bumped on any incompatible change of this conversation or of the link that carries it; the link's opening
 * (link-frames.ts LINK_REQUEST, LINK_RESPONSE), challenge and hello carry it. 2: challenge-response, no key in
 * hello. 3: the rank's framed link on a plain socket (link-frames.ts) instead of a WebSocket, wire-up URLs
 * tcp:// and tls:// instead of ws:// and wss://, and the messages added since 2 (clock, trace, dyn, peerFailed,
 * rollCall's counters).
 */
export const PMI_PROTOCOL_VERSION = 3;
/** Largest hello the service reads before a connection authenticated (a real one is about 150 bytes). */
export const MAX_HELLO_BYTES = 1024;
/** What the proofs of a wire-up connection are bound to, besides its nonces. */
const PMI_PROOF_LABEL = 'tsmpi-pmi';

/** The binding of a rank's proofs: protocol, version, rank and pid of its hello. */
export function pmiProofBinding(v: number, rank: number, pid: number): Buffer {
  return keyProofBinding(PMI_PROOF_LABEL, v, rank, pid);
}

/** The address a process joins the service at: tcp://host:port, or tls://host:port (mpiexec --secure). */
export function wireupUrl(isTls: boolean, host: string, port: number): string {
  return `${isTls ? 'tls' : 'tcp'}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/**
 * What a process says when mpiexec speaks another protocol version than its own (`mpiexecVersion` as mpiexec
 * sent it: a number, or what stood in its place): one installation of tsmpi must run both.
 */
export function versionMismatch(mpiexecVersion: number | string, rankVersion: number = PMI_PROTOCOL_VERSION): string {
  const theirs = String(mpiexecVersion).slice(0, 16);
  return `mpiexec and the rank are from different tsmpi versions: wire-up protocol ${theirs} vs ${rankVersion} (mpiexec's vs the rank's); run both from one installation`;
}

/**
 * Why `url` (TSMPI_PMI_URL) is no wire-up URL: a ws:// or wss:// one came from an mpiexec of protocol 2, whose
 * ranks joined over a WebSocket; anything else is not a wire-up URL at all.
 */
export function wireupUrlError(url: string): string {
  if (/^wss?:\/\//.test(url)) return versionMismatch(2);
  return `the wire-up URL "${url.slice(0, 200)}" is not tcp://host:port or tls://host:port`;
}

/** A wire-up URL's parts, or null when it is not one (wireupUrl's form). */
export function parseWireupUrl(url: string): { readonly isTls: boolean; readonly host: string; readonly port: number } | null {
  const m = /^(tcp|tls):\/\/(\[[0-9a-fA-F:.]+\]|[^:/[\]]+):(\d{1,5})$/.exec(url);
  if (m === null) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { isTls: m[1] === 'tls', host: m[2]!.replace(/^\[|\]$/g, ''), port };
}

/** Close codes of the protocol, as a WebSocket's (4000-4999 is the application range). */
export const CLOSE_CODES = {
  /** Normal end (client close() or job end). */
  normal: 1000,
  /** hello did not prove the job key. */
  badKey: 4001,
  /** A malformed or out-of-order message. */
  protocol: 4002,
  /** hello named a rank that is out of range or already connected. */
  badRank: 4003,
  /** No hello in time. */
  helloTimeout: 4004,
  /** The job is ending. */
  jobEnding: 4005,
} as const;

export type HelloMessage = {
  readonly t: 'hello'; readonly v: number; readonly rank: number; readonly pid: number; readonly nonce: Uint8Array; readonly proof: Uint8Array;
};
export type FenceMessage = { readonly t: 'fence'; readonly puts: readonly (readonly [string, string])[] };
export type GetMessage = { readonly t: 'get'; readonly id: number; readonly key: string };
export type InitializedMessage = { readonly t: 'initialized' };
export type FinalizedMessage = { readonly t: 'finalized'; readonly id: number; readonly report: FinalizeReport };
export type AbortMessage = { readonly t: 'abort'; readonly id: number; readonly code: number; readonly message: string };
export type PeerLostMessage = { readonly t: 'peerLost'; readonly id: number; readonly process: number };
export type RollCallReplyMessage = { readonly t: 'rollCallReply'; readonly id: number; readonly blockedIn: BlockedIn | null; readonly counters?: RankCounters };
export type ClockMessage = { readonly t: 'clock'; readonly id: number };
export type TraceMessage = { readonly t: 'trace'; readonly id: number; readonly data: Uint8Array };
/** The requests of dynamic processes (api/spawn.ts, api/ports.ts), answered by the launcher's dynamic-service.ts. */
export const DYN_OPS = ['spawn', 'spawnJoin', 'openPort', 'closePort', 'accept', 'connect', 'coupled', 'decoupled', 'publish', 'lookup', 'unpublish'] as const;
export type DynOp = (typeof DYN_OPS)[number];
export type DynMessage = { readonly t: 'dyn'; readonly id: number; readonly op: DynOp; readonly a: Readonly<Record<string, unknown>> };

/** Everything a process sends to the wire-up service. */
export type ClientMessage =
  | HelloMessage
  | FenceMessage
  | GetMessage
  | InitializedMessage
  | FinalizedMessage
  | AbortMessage
  | PeerLostMessage
  | RollCallReplyMessage
  | ClockMessage
  | TraceMessage
  | DynMessage;

export type ChallengeMessage = { readonly t: 'challenge'; readonly v: number; readonly nonce: Uint8Array };
export type WelcomeMessage = { readonly t: 'welcome'; readonly size: number; readonly proof: Uint8Array };
export type FenceDoneMessage = { readonly t: 'fenceDone'; readonly kvs: readonly (readonly [string, string])[] };
export type GetReplyMessage = { readonly t: 'getReply'; readonly id: number; readonly value: string | null };
export type AckMessage = { readonly t: 'ack'; readonly id: number };
/** counters: mpiexec --dashboard also asks for the process's counters (absent otherwise: a roll-call costs what it did). */
export type RollCallMessage = { readonly t: 'rollCall'; readonly id: number; readonly counters?: true };
export type ClockReplyMessage = { readonly t: 'clockReply'; readonly id: number; readonly timeMs: number };
/** Longest `why` of a peerFailed (mpiexec's sentence naming the process and how it ended). */
export const MAX_PEER_FAILED_CHARS = 2048;
export type PeerFailedMessage = { readonly t: 'peerFailed'; readonly process: number; readonly why: string };
export type DynReplyMessage = { readonly t: 'dynReply'; readonly id: number; readonly error: readonly [string, string] | null; readonly value: unknown };

/** Everything the wire-up service sends to a process. */
export type ServerMessage = ChallengeMessage | WelcomeMessage | FenceDoneMessage | GetReplyMessage | AckMessage | RollCallMessage | ClockReplyMessage | PeerFailedMessage | DynReplyMessage;

function encode(message: ClientMessage | ServerMessage): Buffer {
  // A fresh buffer per message: ws masks client frames in place.
  return packWire(message);
}

/** Encodes a client message into a fresh buffer. */
export function encodeClientMessage(message: ClientMessage): Buffer {
  return encode(message);
}

/** Encodes a server message into a fresh buffer. */
export function encodeServerMessage(message: ServerMessage): Buffer {
  return encode(message);
}

function unpackObject(data: Uint8Array): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = unpackWire(data);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return value as Record<string, unknown>;
}

// Binaries (nonces, proofs) are copied out: the decoder returns views of the input.
function isBytes(v: unknown): v is Uint8Array {
  return v instanceof Uint8Array;
}
function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}
function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}
function isPairs(v: unknown): v is (readonly [string, string])[] {
  if (!Array.isArray(v)) return false;
  for (const p of v) {
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'string' || typeof p[1] !== 'string') return false;
  }
  return true;
}
// The readers below copy only the documented fields: a peer with the key could
// add others (a BigInt, say), and consumers such as the job report's
// JSON.stringify must not see more than was checked. undefined = malformed.
function readReport(v: unknown): FinalizeReport | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  const [messagesSent, messagesReceived, bytesSent, bytesReceived] = [r['messagesSent'], r['messagesReceived'], r['bytesSent'], r['bytesReceived']];
  return isCount(messagesSent) && isCount(messagesReceived) && isCount(bytesSent) && isCount(bytesReceived)
    ? { messagesSent, messagesReceived, bytesSent, bytesReceived }
    : undefined;
}

function readCounters(v: unknown): RankCounters | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const report = readReport(v);
  const r = v as Record<string, unknown>;
  const collectives = r['collectives'];
  if (report === undefined || !isCount(collectives)) return undefined;
  const channels = r['channels'] === undefined ? undefined : readChannelCounts(r['channels']);
  const peerBytes = r['peerBytes'] === undefined ? undefined : readPeerBytes(r['peerBytes']);
  if ((r['channels'] !== undefined && channels === undefined) || (r['peerBytes'] !== undefined && peerBytes === undefined)) return undefined;
  return { ...report, collectives, ...(channels === undefined ? {} : { channels }), ...(peerBytes === undefined ? {} : { peerBytes }) };
}

/** Most channels and [process, bytes] pairs one sample may carry (a bigger one is refused as malformed). */
const MAX_COUNTER_ENTRIES = 1 << 16;

function readChannelCounts(v: unknown): { sent: number; received: number }[] | undefined {
  if (!Array.isArray(v) || v.length > MAX_COUNTER_ENTRIES) return undefined;
  const out: { sent: number; received: number }[] = [];
  for (const x of v as unknown[]) {
    if (typeof x !== 'object' || x === null) return undefined;
    const { sent, received } = x as Record<string, unknown>;
    if (!isCount(sent) || !isCount(received)) return undefined;
    out.push({ sent, received });
  }
  return out;
}

function readPeerBytes(v: unknown): [number, number][] | undefined {
  if (!Array.isArray(v) || v.length > MAX_COUNTER_ENTRIES) return undefined;
  const out: [number, number][] = [];
  for (const p of v as unknown[]) {
    if (!Array.isArray(p) || p.length !== 2 || !isInt(p[0]) || p[0] < 0 || !isCount(p[1])) return undefined;
    out.push([p[0], p[1]]);
  }
  return out;
}

type BlockedCall = { readonly call: string; readonly comm: string; readonly peer: number | null; readonly tag: number | null; readonly calls?: number };

function readBlockedCall(v: unknown): BlockedCall | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const b = v as Record<string, unknown>;
  const [call, comm, peer, tag, calls] = [b['call'], b['comm'], b['peer'], b['tag'], b['calls']];
  if (!(typeof call === 'string' && typeof comm === 'string' && (peer === null || isInt(peer)) && (tag === null || isInt(tag)))) return undefined;
  if (calls === undefined) return { call, comm, peer, tag };
  return isInt(calls) ? { call, comm, peer, tag, calls } : undefined;
}

function readBlockedIn(v: unknown): BlockedIn | null | undefined {
  if (v === null) return null;
  const main = readBlockedCall(v);
  if (main === undefined) return undefined;
  const threads = (v as Record<string, unknown>)['threads'];
  if (threads === undefined) return main;
  if (!Array.isArray(threads)) return undefined;
  const copied: (BlockedCall & { readonly thread: number })[] = [];
  for (const t of threads as unknown[]) {
    const call = readBlockedCall(t);
    const thread = call === undefined ? undefined : (t as Record<string, unknown>)['thread'];
    if (call === undefined || !isInt(thread)) return undefined;
    copied.push({ thread, ...call });
  }
  return { ...main, threads: copied };
}

/** Decodes and validates a client message; null when malformed. */
export function decodeClientMessage(data: Uint8Array): ClientMessage | null {
  const m = unpackObject(data);
  if (m === null) return null;
  switch (m['t']) {
    case 'hello':
      return isInt(m['v']) && isInt(m['rank']) && isInt(m['pid']) && isBytes(m['nonce']) && isBytes(m['proof'])
        ? { t: 'hello', v: m['v'], rank: m['rank'], pid: m['pid'], nonce: Buffer.from(m['nonce']), proof: Buffer.from(m['proof']) }
        : null;
    case 'fence':
      return isPairs(m['puts']) ? { t: 'fence', puts: m['puts'] } : null;
    case 'get':
      return isInt(m['id']) && typeof m['key'] === 'string' ? { t: 'get', id: m['id'], key: m['key'] } : null;
    case 'initialized':
      return { t: 'initialized' };
    case 'finalized': {
      const report = readReport(m['report']);
      return isInt(m['id']) && report !== undefined ? { t: 'finalized', id: m['id'], report } : null;
    }
    case 'abort':
      return isInt(m['id']) && isInt(m['code']) && typeof m['message'] === 'string'
        ? { t: 'abort', id: m['id'], code: m['code'], message: m['message'] }
        : null;
    case 'peerLost':
      return isInt(m['id']) && isInt(m['process']) ? { t: 'peerLost', id: m['id'], process: m['process'] } : null;
    case 'rollCallReply': {
      const blockedIn = readBlockedIn(m['blockedIn']);
      if (!isInt(m['id']) || blockedIn === undefined) return null;
      if (m['counters'] === undefined) return { t: 'rollCallReply', id: m['id'], blockedIn };
      const counters = readCounters(m['counters']);
      return counters === undefined ? null : { t: 'rollCallReply', id: m['id'], blockedIn, counters };
    }
    case 'clock':
      return isInt(m['id']) ? { t: 'clock', id: m['id'] } : null;
    case 'trace':
      return isInt(m['id']) && isBytes(m['data']) ? { t: 'trace', id: m['id'], data: m['data'] } : null;
    case 'dyn': {
      const op = m['op'];
      const a = m['a'];
      const known = (DYN_OPS as readonly unknown[]).includes(op);
      return isInt(m['id']) && known && typeof a === 'object' && a !== null && !Array.isArray(a)
        ? { t: 'dyn', id: m['id'], op: op as DynOp, a: a as Record<string, unknown> }
        : null;
    }
    default:
      return null;
  }
}

/** Decodes and validates a server message; null when malformed. */
export function decodeServerMessage(data: Uint8Array): ServerMessage | null {
  const m = unpackObject(data);
  if (m === null) return null;
  switch (m['t']) {
    case 'challenge':
      return isInt(m['v']) && isBytes(m['nonce']) ? { t: 'challenge', v: m['v'], nonce: Buffer.from(m['nonce']) } : null;
    case 'welcome':
      return isInt(m['size']) && m['size'] > 0 && isBytes(m['proof']) ? { t: 'welcome', size: m['size'], proof: Buffer.from(m['proof']) } : null;
    case 'fenceDone':
      return isPairs(m['kvs']) ? { t: 'fenceDone', kvs: m['kvs'] } : null;
    case 'getReply':
      return isInt(m['id']) && (m['value'] === null || typeof m['value'] === 'string')
        ? { t: 'getReply', id: m['id'], value: m['value'] }
        : null;
    case 'ack':
      return isInt(m['id']) ? { t: 'ack', id: m['id'] } : null;
    case 'rollCall':
      if (!isInt(m['id'])) return null;
      return m['counters'] === true ? { t: 'rollCall', id: m['id'], counters: true } : { t: 'rollCall', id: m['id'] };
    case 'clockReply':
      return isInt(m['id']) && typeof m['timeMs'] === 'number' && Number.isFinite(m['timeMs']) ? { t: 'clockReply', id: m['id'], timeMs: m['timeMs'] } : null;
    case 'peerFailed': {
      const why = m['why'];
      return isInt(m['process']) && m['process'] >= 0 && typeof why === 'string' && why.length <= MAX_PEER_FAILED_CHARS ? { t: 'peerFailed', process: m['process'], why } : null;
    }
    case 'dynReply': {
      const e = m['error'];
      const error = e === null ? null : Array.isArray(e) && e.length === 2 && typeof e[0] === 'string' && typeof e[1] === 'string' ? ([e[0], e[1]] as const) : undefined;
      return isInt(m['id']) && error !== undefined ? { t: 'dynReply', id: m['id'], error, value: m['value'] ?? null } : null;
    }
    default:
      return null;
  }
}

/**
 * ws's `generateMask` for the clients of the wire-up service (ranks, proxies): an all-zero mask,
 * which ws then does not apply. RFC 6455 masks a client's frames so that scripts in browsers cannot
 * poison the caches of HTTP intermediaries; these clients are not browsers, and a mask is no secret
 * (each frame carries its own). Masking a rank's 20 MB `--trace` dump cost the rank 1.2-1.7 s of CPU.
 */
export function zeroMask(mask: Uint8Array): void {
  mask.fill(0);
}
