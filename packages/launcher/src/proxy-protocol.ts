/**
 * The protocol between mpiexec and a per-host proxy (proxy.ts), the process
 * that starts and watches the ranks of one remote host (Hydra's pmi_proxy,
 * PRRTE's prted).
 *
 * Start: mpiexec runs the proxy through ssh (or --launcher-exec) and writes one
 * line of JSON, the LaunchSpec, on its stdin: the job key travels there, never
 * on a command line or in an environment `ps` shows. Stdin then stays open;
 * its end means mpiexec is gone. Under Slurm (`tsmpi-proxy --slurm`) one srun
 * step starts every node's proxy with the same stdin: mpiexec writes one
 * LaunchSpec line per node, and each proxy takes the line whose `host` is its
 * SLURMD_NODENAME, or, when srun picked the nodes itself, whose `slurmNodeId`
 * is its SLURM_NODEID.
 *
 * Link: the proxy connects back to mpiexec's wire-up service at the path
 * PROXY_PATH (ranks use "/"), one WebSocket, binary frames, each one message
 * encoded with msgpackr, `t` naming its type:
 *
 *     <- challenge {v, nonce}                mpiexec's first message: a fresh nonce
 *     hello {v, index, hostname, pid,        must be first; proof proves the job key (core's
 *            nonce, proof}                   util/key-proof.ts, bound to proxyProofBinding);
 *                                            the key itself never travels on the link
 *     <- welcome {proof}                     mpiexec's proof of the key: the proxy checks it
 *                                            before it sends or starts anything, and tries its
 *                                            next address of mpiexec when it does not hold
 *     address {listenHost}                   the address its ranks listen on (after --iface)
 *     started {rank, pid}  |  startError {rank, message}
 *     out {rank, fd, data}                   whole lines of a rank's stdout (1) or stderr (2)
 *     exit {rank, code, signal}              as child_process reports it
 *     closed {rank}                          the rank's stdout and stderr ended
 *     fatal {message}                        the proxy cannot go on (bad --iface, ...)
 *     <- signal {rank, sig}                  rank -1: every rank of the host
 *     <- stdin {data}                        mpiexec's stdin, for rank 0 (its host's proxy only)
 *     <- stdinEnd {}                         mpiexec's stdin ended: close rank 0's
 *     stdinAck {bytes}                       that many stdin bytes reached rank 0's pipe; mpiexec
 *                                            keeps at most STDIN_WINDOW_BYTES unacknowledged
 *     hb {}  <->                             heartbeat, both ways, every HEARTBEAT_MS
 *
 * Either side that hears nothing for HEARTBEAT_MS * HEARTBEAT_MISSES declares
 * the other gone: mpiexec ends the job naming the host, the proxy kills its
 * ranks and exits. Decoders never throw; they return null for anything
 * malformed.
 */
import { Packr } from 'msgpackr';
import { keyProofBinding } from '@tsmpi/core/pmi';

/** Bumped on any incompatible change. 3: challenge-response, no key on the link. */
export const PROXY_PROTOCOL_VERSION = 3;
/** What the proofs of a proxy link are bound to, besides its nonces. */
const PROXY_PROOF_LABEL = 'tsmpi-proxy';

/** The binding of a proxy's proofs: protocol, version and the identity its hello claims. */
export function proxyProofBinding(v: number, index: number, hostname: string, pid: number): Buffer {
  return keyProofBinding(PROXY_PROOF_LABEL, v, index, hostname, pid);
}
/** URL path of the proxy link on the wire-up service. */
export const PROXY_PATH = '/proxy';
/**
 * Heartbeat period. 1 s with 5 misses: a vanished host is noticed within
 * about 6 s (docs: at most 10 s), while a loaded machine that stalls an event
 * loop for a few seconds is not mistaken for a dead one.
 */
export const HEARTBEAT_MS = 1000;
export const HEARTBEAT_MISSES = 5;
/**
 * Stdin bytes in flight to a remote rank 0 (sent, not yet in its pipe). mpiexec stops reading its
 * own stdin beyond this, so a rank that reads slowly holds back the producer instead of filling
 * mpiexec's memory (backpressure end to end: rank 0's pipe -> proxy -> link -> mpiexec's stdin).
 */
export const STDIN_WINDOW_BYTES = 256 * 1024;

/** One rank a proxy starts. */
export interface SpecRank {
  readonly rank: number;
  readonly localRank: number;
  readonly localSize: number;
}

/** What mpiexec tells a proxy on its stdin (one JSON line). */
export interface LaunchSpec {
  readonly v: number;
  readonly key: string;
  /** The proxy's index in mpiexec's host list. */
  readonly index: number;
  /** The host name as the user wrote it (TSMPI_HOST of its ranks). */
  readonly host: string;
  /** Port of the wire-up service. */
  readonly port: number;
  /** Addresses of mpiexec to try, in order, after the one in SSH_CONNECTION. */
  readonly addresses: readonly string[];
  readonly size: number;
  readonly ranks: readonly SpecRank[];
  readonly file: string;
  readonly args: readonly string[];
  readonly wdir: string;
  /** Variables added to the proxy's own environment for every rank. */
  readonly env: Readonly<Record<string, string>>;
  readonly iface: string | null;
  /** "LO-HI" or null (TSMPI_PORT_RANGE of the ranks). */
  readonly portRange: string | null;
  /**
   * Under Slurm when srun chose the nodes (no allocation, no --hosts): the proxy whose SLURM_NODEID
   * this is takes the line, and `host` is only a placeholder (the proxy uses its SLURMD_NODENAME).
   */
  readonly slurmNodeId?: number;
  /** mpiexec --secure: the link and the ranks' wire-up run TLS keyed by the job (wss://, core's util/job-tls.ts). Absent: plain. */
  readonly secure?: boolean;
  /**
   * The world the ranks belong to (dynamic processes, docs/adr/0040): its first process number (a
   * rank's TSMPI_RANK is its number minus this) and the job's variables of that world
   * (TSMPI_UNIVERSE, TSMPI_WORLD_FIRST, TSMPI_PARENT_SPAWN, TSMPI_APPNUM, TSMPI_PARENT_PROGRESS). Absent: world 0, none.
   */
  readonly world?: { readonly first: number; readonly env: Readonly<Record<string, string>> };
}

export type ProxyMessage =
  | {
    readonly t: 'hello'; readonly v: number; readonly index: number; readonly hostname: string; readonly pid: number;
    readonly nonce: Uint8Array; readonly proof: Uint8Array;
  }
  | { readonly t: 'address'; readonly listenHost: string }
  | { readonly t: 'started'; readonly rank: number; readonly pid: number }
  | { readonly t: 'startError'; readonly rank: number; readonly message: string }
  | { readonly t: 'out'; readonly rank: number; readonly fd: number; readonly data: Uint8Array }
  | { readonly t: 'exit'; readonly rank: number; readonly code: number | null; readonly signal: string | null }
  | { readonly t: 'closed'; readonly rank: number }
  | { readonly t: 'fatal'; readonly message: string }
  | { readonly t: 'stdinAck'; readonly bytes: number }
  | { readonly t: 'hb' };

export type HeadMessage =
  | { readonly t: 'challenge'; readonly v: number; readonly nonce: Uint8Array }
  | { readonly t: 'welcome'; readonly proof: Uint8Array }
  | { readonly t: 'signal'; readonly rank: number; readonly sig: string }
  | { readonly t: 'stdin'; readonly data: Uint8Array }
  | { readonly t: 'stdinEnd' }
  | { readonly t: 'hb' };

const packr = new Packr({ useRecords: false });

/** Encodes into a fresh buffer (ws masks client frames in place). */
export function encodeProxyMessage(m: ProxyMessage | HeadMessage): Buffer {
  return Buffer.from(packr.pack(m));
}

function unpack(data: Uint8Array): Record<string, unknown> | null {
  let v: unknown;
  try {
    v = packr.unpack(data);
  } catch {
    return null;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;

/** Decodes a message from a proxy; null when malformed. */
export function decodeProxyMessage(data: Uint8Array): ProxyMessage | null {
  const m = unpack(data);
  if (m === null) return null;
  switch (m['t']) {
    case 'hello':
      return isInt(m['v']) && isInt(m['index']) && isStr(m['hostname']) && isInt(m['pid']) && isBytes(m['nonce']) && isBytes(m['proof'])
        ? { t: 'hello', v: m['v'], index: m['index'], hostname: m['hostname'], pid: m['pid'], nonce: Buffer.from(m['nonce']), proof: Buffer.from(m['proof']) } : null;
    case 'address':
      return isStr(m['listenHost']) ? { t: 'address', listenHost: m['listenHost'] } : null;
    case 'started':
      return isInt(m['rank']) && isInt(m['pid']) ? { t: 'started', rank: m['rank'], pid: m['pid'] } : null;
    case 'startError':
      return isInt(m['rank']) && isStr(m['message']) ? { t: 'startError', rank: m['rank'], message: m['message'] } : null;
    case 'out':
      return isInt(m['rank']) && (m['fd'] === 1 || m['fd'] === 2) && m['data'] instanceof Uint8Array
        ? { t: 'out', rank: m['rank'], fd: m['fd'], data: m['data'] } : null;
    case 'exit':
      return isInt(m['rank']) && (m['code'] === null || isInt(m['code'])) && (m['signal'] === null || isStr(m['signal']))
        ? { t: 'exit', rank: m['rank'], code: m['code'], signal: m['signal'] } : null;
    case 'closed':
      return isInt(m['rank']) ? { t: 'closed', rank: m['rank'] } : null;
    case 'fatal':
      return isStr(m['message']) ? { t: 'fatal', message: m['message'] } : null;
    case 'stdinAck':
      return isInt(m['bytes']) && m['bytes'] >= 0 ? { t: 'stdinAck', bytes: m['bytes'] } : null;
    case 'hb':
      return { t: 'hb' };
    default:
      return null;
  }
}

/** Decodes a message from mpiexec; null when malformed. */
export function decodeHeadMessage(data: Uint8Array): HeadMessage | null {
  const m = unpack(data);
  if (m === null) return null;
  switch (m['t']) {
    case 'challenge':
      return isInt(m['v']) && isBytes(m['nonce']) ? { t: 'challenge', v: m['v'], nonce: Buffer.from(m['nonce']) } : null;
    case 'welcome':
      return isBytes(m['proof']) ? { t: 'welcome', proof: Buffer.from(m['proof']) } : null;
    case 'signal':
      return isInt(m['rank']) && isStr(m['sig']) ? { t: 'signal', rank: m['rank'], sig: m['sig'] } : null;
    case 'stdin':
      return m['data'] instanceof Uint8Array ? { t: 'stdin', data: m['data'] } : null;
    case 'stdinEnd':
      return { t: 'stdinEnd' };
    case 'hb':
      return { t: 'hb' };
    default:
      return null;
  }
}

function isWorld(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const w = v as Record<string, unknown>;
  return isInt(w['first']) && w['first'] >= 0 && typeof w['env'] === 'object' && w['env'] !== null && Object.values(w['env']).every(isStr);
}

/** Parses the stdin line; an Error says what is wrong. */
export function parseLaunchSpec(line: string): LaunchSpec | Error {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return new Error('the launch spec on stdin is not JSON');
  }
  if (typeof v !== 'object' || v === null) return new Error('the launch spec on stdin is not an object');
  const s = v as Record<string, unknown>;
  if (s['v'] !== PROXY_PROTOCOL_VERSION) return new Error(`launch spec version ${String(s['v'])}, expected ${PROXY_PROTOCOL_VERSION} (mpiexec and proxy from different tsmpi versions?)`);
  const ok =
    isStr(s['key']) && isInt(s['index']) && isStr(s['host']) && isInt(s['port']) && Array.isArray(s['addresses']) &&
    s['addresses'].every(isStr) && isInt(s['size']) && Array.isArray(s['ranks']) &&
    s['ranks'].every((r: unknown) => typeof r === 'object' && r !== null && isInt((r as SpecRank).rank) && isInt((r as SpecRank).localRank) && isInt((r as SpecRank).localSize)) &&
    isStr(s['file']) && Array.isArray(s['args']) && s['args'].every(isStr) && isStr(s['wdir']) &&
    typeof s['env'] === 'object' && s['env'] !== null && Object.values(s['env']).every(isStr) &&
    (s['iface'] === null || isStr(s['iface'])) && (s['portRange'] === null || isStr(s['portRange'])) &&
    (s['slurmNodeId'] === undefined || (isInt(s['slurmNodeId']) && s['slurmNodeId'] >= 0)) &&
    (s['secure'] === undefined || typeof s['secure'] === 'boolean') && (s['world'] === undefined || isWorld(s['world']));
  return ok ? (s as unknown as LaunchSpec) : new Error('the launch spec on stdin is malformed');
}
