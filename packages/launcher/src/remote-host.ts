/**
 * mpiexec's side of one remote host: the ssh (or --launcher-exec) process
 * that starts the host's proxy, and the proxy's link back (proxy-protocol.ts).
 *
 * States:  starting (ssh runs, no link yet) -> linked -> finished | lost
 *   starting -> lost   ssh exited, or no hello within CONNECT_BACK_MS; the
 *                      reason comes from ssh's stderr (remote-command.ts)
 *   starting -> starting  ssh exited because the host is not up yet: the
 *                      same launch again after a wait (connect-retry.ts)
 *   linked -> finished every rank of the host reported `closed` (the proxy
 *                      then closes the link itself)
 *   linked -> lost     the link closed early, or nothing heard for
 *                      HEARTBEAT_MS x HEARTBEAT_MISSES (proxy killed, link
 *                      down, machine gone), or the proxy sent `fatal`
 * `lost` is reported once, to the job, which ends the job naming the host
 * and its ranks. The ssh process runs in its own process group (detached) so
 * that close() can kill it and everything it started on this side.
 * Under Slurm one srun step (slurm-step.ts) starts every host's proxy: the
 * host then only waits for its link (awaitLink), and the job tells it when
 * srun ended (launcherEnded), which loses a host that never linked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Logger } from '@tsmpi/core/pmi';
import { WebSocket, type RawData } from 'ws';
import { CLOSE_CODES, KeyChallenge, MAX_HELLO_BYTES } from '@tsmpi/core/pmi';
import type { ConnectRetry } from './connect-retry.ts';
import { hasGroupMembers } from './process-group.ts';
import { explainStartFailure } from './remote-command.ts';
import {
  HEARTBEAT_MISSES, HEARTBEAT_MS, PROXY_PROTOCOL_VERSION, STDIN_WINDOW_BYTES, decodeProxyMessage, encodeProxyMessage, proxyProofBinding,
  type HeadMessage, type ProxyMessage,
} from './proxy-protocol.ts';
import type { PendingLink } from './wireup-server.ts';

/** A proxy must connect back within this time (ssh connect timeout 10 s + Node start on a loaded host). */
const CONNECT_BACK_MS = 30_000;
/** Most ssh stderr kept for the failure message. */
const MAX_STDERR_CHARS = 8192;
/** Status when a host fails or vanishes (as Hydra: 255, ssh's own failure status). */
export const HOST_FAILED_STATUS = 255;

/** What the job hears from a remote host. */
export interface RemoteHostEvents {
  /** The proxy is linked; `listenHost` is its ranks' address, `localAddress` mpiexec's end of the link. */
  onLinked(host: RemoteHost, listenHost: string, localAddress: string): void;
  onStarted(rank: number, pid: number): void;
  onStartError(rank: number, message: string): void;
  onOut(rank: number, fd: 1 | 2, data: Buffer): void;
  onExit(rank: number, code: number | null, signal: string | null): void;
  onClosed(rank: number): void;
  /** The host is gone; `why` is one line naming it (without "mpiexec: "). */
  onLost(host: RemoteHost, why: string, status: number): void;
}

export class RemoteHost {
  readonly host: string;
  readonly index: number;
  readonly ranks: readonly number[];
  readonly #events: RemoteHostEvents;
  readonly #log: Logger;
  readonly #node: string;
  /** The ssh command's process group while it may still be ours to kill (process-group.ts). */
  #sshGroup: number | null = null;
  #sshStderr = '';
  #ws: WebSocket | null = null;
  #lastHeard = 0;
  #timer: NodeJS.Timeout | null = null;
  #closedRanks = 0;
  #isLost = false;
  #isFinished = false;
  #localAddress = '';
  /** The name the proxy's host gave in its hello (its Slurm node name under Slurm); '' before. */
  #linkedName = '';
  /** Reading from the link is paused while mpiexec's output is congested (OutputSink); heartbeats are not judged then. */
  #pauses = 0;
  /** mpiexec's stdin while it is relayed to this host's rank 0, and the bytes not yet acknowledged. */
  #stdin: { readonly input: Readable; readonly stop: () => void } | null = null;
  #stdinInFlight = 0;

  constructor(host: string, index: number, ranks: readonly number[], node: string, log: Logger, events: RemoteHostEvents) {
    this.host = host;
    this.index = index;
    this.ranks = ranks;
    this.#node = node;
    this.#log = log;
    this.#events = events;
  }

  get isLinked(): boolean {
    return this.#ws !== null;
  }

  get isDone(): boolean {
    return this.#isLost || this.#isFinished;
  }

  /** The host name the proxy reported in its hello ('' before the link). */
  get linkedName(): string {
    return this.#linkedName;
  }

  /**
   * For a proxy someone else starts (one srun for all hosts): waits for its
   * link; `connectBackMs` null waits as long as the launcher runs (srun may
   * queue for resources).
   */
  awaitLink(connectBackMs: number | null, what: string, onSettled: () => void): void {
    let isSettled = false;
    this.#settleOnLink = () => {
      if (!isSettled) {
        isSettled = true;
        onSettled();
      }
    };
    if (connectBackMs === null) return;
    this.#timer = setTimeout(() => {
      if (this.#ws !== null) return;
      this.#settleOnLink?.();
      this.#lose(`host ${this.host}: its proxy (started by ${what}) did not connect back to mpiexec within ${connectBackMs / 1000} s; check that this machine is reachable from ${this.host} (firewall, --port-range, --iface)`, HOST_FAILED_STATUS);
    }, connectBackMs);
  }

  /** The shared launcher (srun) ended: a host that never linked is lost with `why`. */
  launcherEnded(why: string, status: number): void {
    this.#settleOnLink?.();
    if (this.#ws === null) this.#lose(why, status);
  }

  /**
   * Starts the remote launch; `specLine` goes to its stdin, which then stays open. With `retry`, a launch
   * that fails because the host is not up yet is started again after a wait (connect-retry.ts), with one
   * info line each time; the host is lost once `retry` says no more.
   */
  start(file: string, args: readonly string[], specLine: string, onSettled: () => void, retry: ConnectRetry | null = null): void {
    let isSettled = false;
    const settle = (): void => {
      if (!isSettled) {
        isSettled = true;
        onSettled();
      }
    };
    this.#settleOnLink = settle;
    this.#attempt(file, args, specLine, settle, retry);
  }

  /** One attempt of start(). */
  #attempt(file: string, args: readonly string[], specLine: string, settle: () => void, retry: ConnectRetry | null): void {
    if (this.#isLost || this.#isFinished) return;
    let ssh: ChildProcess;
    try {
      ssh = spawn(file, [...args], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (err) {
      settle();
      this.#lose(`host ${this.host}: cannot run ${file}: ${(err as Error).message}; check --launcher-exec`, HOST_FAILED_STATUS);
      return;
    }
    retry?.started();
    this.#sshGroup = ssh.pid ?? null;
    this.#sshStderr = '';
    const keep = (b: Buffer): void => {
      if (this.#sshStderr.length < MAX_STDERR_CHARS) this.#sshStderr += b.toString('utf8');
    };
    ssh.stdout!.on('data', keep);
    ssh.stderr!.on('data', keep);
    ssh.stdin!.on('error', () => undefined);
    ssh.stdin!.write(`${specLine}\n`);
    ssh.on('error', (err) => {
      settle();
      this.#lose(`host ${this.host}: cannot run ${file}: ${err.message}; check --launcher-exec`, HOST_FAILED_STATUS);
    });
    ssh.on('exit', (code, signal) => {
      if (this.#sshGroup !== null && !hasGroupMembers(this.#sshGroup)) this.#sshGroup = null;
      this.#log.debug({ host: this.host, code, signal }, 'remote launch exited');
      if (this.#ws !== null || this.#isFinished) {
        settle();
        return;
      }
      // Let the last stderr bytes arrive before explaining.
      setTimeout(() => {
        if (this.#isLost || this.#isFinished) return;
        const next = retry?.next(code, this.#sshStderr) ?? null;
        if (next !== null) {
          this.#clearTimer();
          this.#log.info({ remoteHost: this.host, attempt: next.attempt, retryInSec: next.waitMs / 1000, ssh: this.#sshTail().slice(2) }, 'host not reachable yet; trying ssh again');
          this.#timer = setTimeout(() => this.#attempt(file, args, specLine, settle, retry), next.waitMs);
          return;
        }
        settle();
        const status = code === 127 ? 127 : HOST_FAILED_STATUS;
        const tried = retry !== null && retry.attempts > 1 ? ` (gave up after ${retry.attempts} attempts in ${retry.elapsedSec} s; --connect-retry SECONDS waits longer)` : '';
        this.#lose(`${explainStartFailure(this.host, code, signal, this.#sshStderr, this.#node)}${tried}`, status);
      }, 50);
    });
    this.#clearTimer();
    this.#timer = setTimeout(() => {
      if (this.#ws !== null) return;
      settle();
      this.#lose(`host ${this.host}: its proxy did not connect back to mpiexec within ${CONNECT_BACK_MS / 1000} s; check that this machine is reachable from ${this.host} (firewall, --port-range, --iface)`, HOST_FAILED_STATUS);
    }, CONNECT_BACK_MS);
  }

  #clearTimer(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      clearInterval(this.#timer);
    }
    this.#timer = null;
  }

  #settleOnLink: (() => void) | null = null;

  /** The proxy's hello was accepted: this link is the host's from now on; `proof` (mpiexec's proof of the key) goes in the welcome. */
  attach(ws: WebSocket, localAddress: string, hostname: string, proof: Uint8Array): void {
    this.#ws = ws;
    this.#linkedName = hostname;
    this.#localAddress = localAddress.replace(/^::ffff:/, '');
    this.#settleOnLink?.();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#lastHeard = Date.now();
    ws.on('message', (data: RawData) => this.#onMessage(data as Buffer));
    ws.on('close', () => {
      if (this.#isFinished || this.#isLost) return;
      this.#lose(`host ${this.host}: lost its proxy (the link to it closed: proxy killed or host down)${this.#sshTail()}`, HOST_FAILED_STATUS);
    });
    ws.on('error', () => undefined);
    this.#timer = setInterval(() => {
      if (this.#pauses > 0) this.#lastHeard = Date.now();
      if (Date.now() - this.#lastHeard > HEARTBEAT_MS * HEARTBEAT_MISSES) {
        this.#lose(`host ${this.host}: no heartbeat from its proxy for ${(HEARTBEAT_MS * HEARTBEAT_MISSES) / 1000} s (host down or network link broken)`, HOST_FAILED_STATUS);
        return;
      }
      this.#send({ t: 'hb' });
    }, HEARTBEAT_MS);
    this.#send({ t: 'welcome', proof });
  }

  /** The job failed before this host linked: forget it quietly and stop its launch. */
  abandon(): void {
    this.#isFinished = true;
    this.close();
  }

  /**
   * Output backpressure (OutputSink source): stops reading the link, so TCP
   * fills up and the proxy pauses its ranks' pipes. One pause per sink.
   */
  pause(): void {
    if (this.#pauses++ === 0) this.#ws?.pause();
  }

  resume(): void {
    if (this.#pauses > 0 && --this.#pauses === 0) {
      this.#lastHeard = Date.now();
      this.#ws?.resume();
    }
  }

  /** Sends `sig` to one rank of this host (-1: all). */
  signal(rank: number, sig: NodeJS.Signals): void {
    this.#send({ t: 'signal', rank, sig });
  }

  /**
   * Relays `input` (mpiexec's stdin) to this host's rank 0 over the link, then its end. Reading pauses
   * while STDIN_WINDOW_BYTES are unacknowledged, so a slow rank 0 slows the producer (backpressure).
   */
  forwardStdin(input: Readable): void {
    if (this.#stdin !== null) return;
    const onData = (chunk: Buffer): void => {
      this.#send({ t: 'stdin', data: chunk });
      this.#stdinInFlight += chunk.byteLength;
      if (this.#stdinInFlight >= STDIN_WINDOW_BYTES) input.pause();
    };
    const onEnd = (): void => {
      this.#send({ t: 'stdinEnd' });
      stop();
    };
    const stop = (): void => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onEnd);
      input.pause();
      this.#stdin = null;
    };
    this.#stdin = { input, stop };
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('error', onEnd); // an unreadable stdin ends rank 0's too
    input.resume();
  }

  /** Ends everything on this side: the link and the ssh process group. */
  close(): void {
    this.#stdin?.stop();
    this.#clearTimer();
    this.#ws?.terminate();
    const pid = this.#sshGroup;
    if (pid !== null) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }

  #sshTail(): string {
    const t = this.#sshStderr.trim().split('\n').filter((l) => l.trim() !== '').pop();
    return t === undefined ? '' : `: ${t.trim()}`;
  }

  #send(m: HeadMessage): void {
    if (this.#ws !== null && this.#ws.readyState === WebSocket.OPEN) this.#ws.send(encodeProxyMessage(m));
  }

  #lose(why: string, status: number): void {
    if (this.#isLost || this.#isFinished) return;
    this.#isLost = true;
    this.close();
    this.#events.onLost(this, why, status);
  }

  #onMessage(data: Buffer): void {
    this.#lastHeard = Date.now();
    const m: ProxyMessage | null = decodeProxyMessage(data);
    if (m === null || this.#isLost) {
      if (m === null) this.#lose(`host ${this.host}: malformed message from its proxy`, HOST_FAILED_STATUS);
      return;
    }
    if (m.t !== 'hb' && m.t !== 'address' && m.t !== 'fatal' && m.t !== 'hello' && m.t !== 'stdinAck' && !this.ranks.includes(m.rank)) {
      this.#lose(`host ${this.host}: its proxy reported rank ${m.rank}, which is not one of its ranks`, HOST_FAILED_STATUS);
      return;
    }
    switch (m.t) {
      case 'address':
        this.#events.onLinked(this, m.listenHost, this.#localAddress);
        return;
      case 'started':
        this.#events.onStarted(m.rank, m.pid);
        return;
      case 'startError':
        this.#events.onStartError(m.rank, m.message);
        return;
      case 'out':
        this.#events.onOut(m.rank, m.fd as 1 | 2, Buffer.from(m.data));
        return;
      case 'exit':
        this.#events.onExit(m.rank, m.code, m.signal);
        return;
      case 'closed':
        if (++this.#closedRanks === this.ranks.length) this.#isFinished = true;
        this.#events.onClosed(m.rank);
        return;
      case 'fatal':
        this.#lose(m.message, 1);
        return;
      case 'stdinAck':
        this.#stdinInFlight = Math.max(0, this.#stdinInFlight - m.bytes);
        if (this.#stdin !== null && this.#stdinInFlight < STDIN_WINDOW_BYTES / 2) this.#stdin.input.resume();
        return;
      case 'hb':
      case 'hello':
        return;
    }
  }
}

/**
 * Turns a new connection on the proxy path into a host's link: mpiexec sends
 * a challenge; the first message must be a hello of at most MAX_HELLO_BYTES
 * (larger is refused undecoded) that proves the job key for this challenge,
 * in this protocol's version, naming a host that is still waiting. The
 * welcome then proves the key back. Until the proof, the wire-up service's
 * pre-authentication limits hold (pre-auth.ts); refusals are logged with the
 * remote address.
 */
export function acceptProxyLink(link: PendingLink, jobKey: string, hosts: readonly RemoteHost[], log: Logger): void {
  const { ws } = link;
  const challenge = new KeyChallenge(jobKey);
  ws.once('message', (data: RawData) => {
    const bytes = data as Buffer;
    if (bytes.length > MAX_HELLO_BYTES) {
      link.refuse(CLOSE_CODES.protocol, 'proxy link: message before hello too large', { bytes: bytes.length });
      return;
    }
    const m = decodeProxyMessage(bytes);
    if (m === null || m.t !== 'hello') {
      link.refuse(CLOSE_CODES.protocol, 'proxy link: first message is not a hello');
      return;
    }
    if (m.v !== PROXY_PROTOCOL_VERSION) {
      link.refuse(CLOSE_CODES.protocol, 'proxy link: protocol version mismatch', { version: m.v, expected: PROXY_PROTOCOL_VERSION });
      return;
    }
    const proof = challenge.answer(m.nonce, proxyProofBinding(m.v, m.index, m.hostname, m.pid), m.proof);
    if (proof === null) {
      link.refuse(CLOSE_CODES.badKey, 'proxy link: hello does not prove the job key', { index: m.index });
      return;
    }
    link.authenticated();
    const h = hosts.find((x) => x.index === m.index);
    if (h === undefined || h.isLinked || h.isDone) {
      link.refuse(CLOSE_CODES.protocol, 'proxy link: no host waits for this index', { index: m.index });
      return;
    }
    log.debug({ host: h.host, hostname: m.hostname, pid: m.pid, remote: link.remote }, 'proxy linked');
    h.attach(ws, link.localAddress, m.hostname, proof);
  });
  if (ws.readyState === WebSocket.OPEN) ws.send(encodeProxyMessage({ t: 'challenge', v: PROXY_PROTOCOL_VERSION, nonce: challenge.nonce }));
}
