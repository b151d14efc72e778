/**
 * The per-host proxy: one per remote host of a job (Hydra's pmi_proxy,
 * PRRTE's prted). mpiexec starts it through ssh; it
 *   1. reads the LaunchSpec (job key included) from the first line of stdin;
 *   2. connects back to mpiexec's wire-up service (PROXY_PATH), trying the
 *      client address of SSH_CONNECTION first, then mpiexec's addresses; on
 *      each, answers mpiexec's challenge with a proof of the job key (never
 *      the key) and takes the link only when mpiexec's welcome proves the key
 *      back: a server that cannot is refused and the next address tried;
 *   3. picks the address its ranks listen on (--iface resolved here, else the
 *      local address of this link: never loopback, never the host name);
 *   4. forks its ranks, each the leader of its own process group, and relays
 *      their output as whole lines, their exits and mpiexec's signals
 *      (proxy-protocol.ts); rank 0, when it runs here, gets mpiexec's stdin
 *      over the link, acknowledged chunk by chunk once its pipe took it.
 * It exits when all its ranks are done (status 0), and kills its ranks and
 * exits (status 1) as soon as its link to mpiexec breaks: the WebSocket
 * closes, no heartbeat for HEARTBEAT_MS x HEARTBEAT_MISSES, stdin ends (the
 * ssh session or srun step is gone), or SIGHUP/SIGINT/SIGTERM (status 128 +
 * the signal's number). No rank outlives it: if the proxy itself is killed
 * -9, the kernel kills its ranks (parent-death.ts).
 *
 * Under Slurm (`--slurm`, started by mpiexec's one srun step): every proxy
 * reads the same stdin, one LaunchSpec line per node, and takes the line of
 * its node (isSlurmSpecFor: SLURMD_NODENAME, or SLURM_NODEID when srun chose
 * the nodes); it tries srun's host (SLURM_SRUN_COMM_HOST) first to reach
 * mpiexec, and names its ranks' host after its Slurm node.
 *
 * Diagnostics before the link exists go to stderr (ssh carries them back to
 * mpiexec, which shows them with the host's name); afterwards as `fatal`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { WebSocket, type ClientOptions, type RawData } from 'ws';
import { JOB_ENV, KeyResponse, jobTlsClientOptions, wireupUrl, zeroMask } from '@tsmpi/core/pmi';
import { claimSameHostDirectory, removeSameHostSockets, sweepStaleSameHostDirectories } from '@tsmpi/transport-tcp/host';
import { isLoopbackAddress, resolveIface } from './iface.ts';
import { LineForwarder } from './output-forwarder.ts';
import { findSetpriv, withParentDeath } from './parent-death.ts';
import { hasGroupMembers } from './process-group.ts';
import {
  HEARTBEAT_MISSES, HEARTBEAT_MS, PROXY_PATH, PROXY_PROTOCOL_VERSION, decodeHeadMessage, encodeProxyMessage, parseLaunchSpec,
  proxyProofBinding, type LaunchSpec, type ProxyMessage, type SpecRank,
} from './proxy-protocol.ts';

/** How long the proxy waits for its launch spec on stdin. */
const SPEC_TIMEOUT_MS = 30_000;
/** How long one connection attempt to mpiexec may take (the WebSocket upgrade; then as long again for the key proofs). */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long a rank's pipes may stay open after it exited (held by its children) before they are killed (as fork-launcher.ts). */
const STDIO_GRACE_MS = 500;
/**
 * Output backpressure: when this much is queued on the link (mpiexec or the
 * network is slower than the ranks' output), the ranks' pipes are paused
 * until the queue is below a quarter of it, so the proxy's memory stays
 * bounded and a rank that writes blocks, as it would on mpiexec's own host.
 */
const OUTPUT_HIGH_WATER_BYTES = 4 * 1024 * 1024;
const OUTPUT_CHECK_MS = 10;
/** The longest delay a Node timer takes (about 24.8 days): no close timeout of ws's own. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** TCP keep-alive probe start on the link, so a dead peer is found by the kernel too. */
const KEEPALIVE_MS = 2_000;

interface ProxyRank {
  readonly spec: SpecRank;
  child: ChildProcess | null;
  pid: number | null;
  hasExited: boolean;
  isClosed: boolean;
}

/**
 * Reads stdin line by line until `select` accepts one (returns a spec) or
 * refuses it (returns an Error); null means "not this proxy's line, read on"
 * (under Slurm every proxy sees every node's line). Keeps listening for the
 * end of stdin afterwards.
 */
function readSpec(select: (line: string) => LaunchSpec | Error | null, onEnd: () => void): Promise<LaunchSpec> {
  return new Promise((resolve, reject) => {
    let text = '';
    let isDone = false;
    const timer = setTimeout(() => reject(new Error(`no launch spec on stdin within ${SPEC_TIMEOUT_MS / 1000} s`)), SPEC_TIMEOUT_MS);
    const finish = (result: LaunchSpec | Error): void => {
      isDone = true;
      text = '';
      clearTimeout(timer);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    process.stdin.on('data', (b: Buffer) => {
      if (isDone) return;
      text += b.toString('utf8');
      for (let nl = text.indexOf('\n'); nl >= 0 && !isDone; nl = text.indexOf('\n')) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        const r = select(line);
        if (r !== null) finish(r);
      }
    });
    process.stdin.on('end', () => {
      if (!isDone) {
        clearTimeout(timer);
        reject(new Error('stdin ended before the launch spec arrived'));
        return;
      }
      onEnd();
    });
    process.stdin.on('error', () => onEnd());
  });
}

/**
 * Under Slurm: whether a launch spec line is this node's, by SLURMD_NODENAME
 * (the name SLURM_JOB_NODELIST uses) or, for nodes srun chose itself, by
 * SLURM_NODEID. Task numbers (SLURM_PROCID) follow Slurm's node order, not
 * mpiexec's, so they are not used.
 */
export function isSlurmSpecFor(spec: LaunchSpec, env: NodeJS.ProcessEnv): boolean {
  if (spec.slurmNodeId !== undefined) return env['SLURM_NODEID'] !== undefined && Number(env['SLURM_NODEID']) === spec.slurmNodeId;
  return env['SLURMD_NODENAME'] !== undefined && spec.host === env['SLURMD_NODENAME'];
}

/** Addresses of mpiexec to try, in order: the ssh client's address (or srun's host, SLURM_SRUN_COMM_HOST) first. */
export function candidateAddresses(spec: LaunchSpec, sshConnection: string | undefined): string[] {
  const out: string[] = [];
  const client = sshConnection?.trim().split(/\s+/)[0];
  if (client !== undefined && client !== '') out.push(client.replace(/^::ffff:/, ''));
  for (const a of spec.addresses) if (!out.includes(a)) out.push(a);
  return out;
}

/** ws, or wss under mpiexec --secure: the proxy's link (its ranks' link is core's: pmi wireupUrl). */
function wireupScheme(spec: LaunchSpec): 'ws' | 'wss' {
  return spec.secure === true ? 'wss' : 'ws';
}

/** An open, not yet authenticated link: its TCP socket, and the messages that came with the upgrade (mpiexec's challenge). */
interface OpenLink {
  readonly ws: WebSocket;
  readonly socket: Socket;
  readonly arrived: Buffer[];
  readonly stopCollecting: () => void;
}

/**
 * Opens the link; resolves to it and its TCP socket (for the local address and keep-alive).
 * Messages are collected from the start: mpiexec's challenge may come in the same read as the upgrade.
 */
function openLink(address: string, port: number, spec: LaunchSpec): Promise<OpenLink> {
  const host = address.includes(':') ? `[${address}]` : address;
  return new Promise((resolve, reject) => {
    // closeTimeout: ws destroys the socket this long after close() when mpiexec has not answered
    // (30 s by default), dropping output still queued here; mpiexec answers only once its own
    // reader took everything before the close (minutes behind a paged `mpiexec | less`). The
    // proxy's heartbeat rule decides instead (#closed): wait while mpiexec is alive.
    // (ws 8.23, as pnpm-lock.yaml pins it, reads the option; its type declarations do not list it.)
    // mpiexec --secure: TLS keyed by the job (core's util/job-tls.ts); a server without the key fails its handshake.
    const options: ClientOptions & { closeTimeout: number } = {
      perMessageDeflate: false, generateMask: zeroMask, handshakeTimeout: CONNECT_TIMEOUT_MS, closeTimeout: MAX_TIMER_MS, ...(spec.secure === true ? (jobTlsClientOptions(spec.key) as unknown as ClientOptions) : {}),
    };
    const ws = new WebSocket(`${wireupScheme(spec)}://${host}:${port}${PROXY_PATH}`, options);
    const arrived: Buffer[] = [];
    const collect = (data: RawData): void => {
      if (arrived.length < 4) arrived.push(data as Buffer);
    };
    ws.on('message', collect);
    let socket: Socket | null = null;
    ws.once('upgrade', (res) => {
      socket = res.socket as Socket;
    });
    const onError = (err: Error): void => {
      ws.terminate();
      reject(err);
    };
    ws.once('error', onError);
    ws.once('open', () => {
      ws.off('error', onError);
      if (socket === null) {
        ws.terminate();
        reject(new Error('no socket after the upgrade'));
        return;
      }
      resolve({ ws, socket, arrived, stopCollecting: () => ws.off('message', collect) });
    });
  });
}

/** An authenticated link: the messages mpiexec sent after its welcome wait in `early` until the proxy reads the link. */
interface Link {
  readonly ws: WebSocket;
  readonly socket: Socket;
  readonly early: Buffer[];
  /** Stops queueing into `early` (the proxy's own reader takes over). */
  readonly detach: () => void;
}

/**
 * Runs the key proofs on a fresh link: waits for mpiexec's challenge, answers
 * with a hello that proves the key, and resolves once the welcome proves that
 * the server knows the key too. Nothing else is sent before. Rejects (and
 * closes the link) when the server does not prove the key, speaks out of turn,
 * or takes longer than CONNECT_TIMEOUT_MS.
 */
function authenticateLink(open: OpenLink, spec: LaunchSpec): Promise<Link> {
  const { ws, socket } = open;
  const hostname = nodeName();
  const proofs = new KeyResponse(spec.key, proxyProofBinding(PROXY_PROTOCOL_VERSION, spec.index, hostname, process.pid));
  const early: Buffer[] = [];
  return new Promise((resolve, reject) => {
    let isAuthenticated = false;
    const fail = (why: string): void => {
      clearTimeout(timer);
      ws.off('message', onMessage);
      ws.terminate();
      reject(new Error(why));
    };
    const timer = setTimeout(() => fail(`no proof of the job key within ${CONNECT_TIMEOUT_MS / 1000} s`), CONNECT_TIMEOUT_MS);
    const onMessage = (data: RawData): void => {
      if (isAuthenticated) {
        early.push(data as Buffer);
        return;
      }
      const m = decodeHeadMessage(data as Buffer);
      if (m?.t === 'challenge') {
        const proof = m.v === PROXY_PROTOCOL_VERSION ? proofs.respond(m.nonce) : null;
        if (proof === null) {
          fail(m.v === PROXY_PROTOCOL_VERSION ? 'a malformed or second challenge' : `protocol version ${m.v}, this proxy's ${PROXY_PROTOCOL_VERSION}`);
          return;
        }
        ws.send(encodeProxyMessage({ t: 'hello', v: PROXY_PROTOCOL_VERSION, index: spec.index, hostname, pid: process.pid, nonce: proofs.nonce, proof }));
        return;
      }
      if (m?.t !== 'welcome' || !proofs.isServerProof(m.proof)) {
        fail('the server did not prove the job key (not this job\'s mpiexec)');
        return;
      }
      isAuthenticated = true;
      clearTimeout(timer);
      ws.off('close', onClose);
      resolve({ ws, socket, early, detach: () => ws.off('message', onMessage) });
    };
    const onClose = (code: number): void => fail(`the server closed the link (code ${code}) before proving the job key`);
    open.stopCollecting();
    ws.on('message', onMessage);
    ws.once('close', onClose);
    ws.on('error', () => undefined); // 'close' follows
    for (const data of open.arrived.splice(0)) onMessage(data);
  });
}

class Proxy {
  readonly #spec: LaunchSpec;
  readonly #ws: WebSocket;
  readonly #socket: Socket;
  readonly #url: string;
  readonly #ranks: ProxyRank[];
  #lastHeard = Date.now();
  #congestionTimer: NodeJS.Timeout | null = null;
  #hbTimer: NodeJS.Timeout | null = null;
  #isEnding = false;
  /** setpriv, when this host has one that sets a parent-death signal; probed once, before the first rank starts. */
  #setpriv: string | null = null;

  readonly #link: Link;

  constructor(spec: LaunchSpec, link: Link, url: string) {
    this.#spec = spec;
    this.#link = link;
    this.#ws = link.ws;
    this.#socket = link.socket;
    this.#url = url;
    this.#ranks = spec.ranks.map((r) => ({ spec: r, child: null, pid: null, hasExited: false, isClosed: false }));
  }

  run(): void {
    const ws = this.#ws;
    // The welcome (mpiexec's proof of the key) is in: the link is this proxy's; read what followed it first.
    this.#link.detach();
    ws.on('message', (data: RawData) => this.#onMessage(data as Buffer));
    ws.on('close', () => this.die('its link to mpiexec closed'));
    ws.on('error', () => undefined); // 'close' follows
    for (const data of this.#link.early.splice(0)) this.#onMessage(data);
    this.#start();
    this.#hbTimer = setInterval(() => {
      if (Date.now() - this.#lastHeard > HEARTBEAT_MS * HEARTBEAT_MISSES) {
        this.die(`no heartbeat from mpiexec for ${(HEARTBEAT_MS * HEARTBEAT_MISSES) / 1000} s`);
        return;
      }
      this.#send({ t: 'hb' });
    }, HEARTBEAT_MS);
  }

  /**
   * Kills every rank's process group and exits: status 1, or 128 + the signal's number when a signal
   * ended it (under Slurm, srun's status is its tasks' worst, so a scancel then reads as 143, not 1).
   */
  die(why: string, status = 1): void {
    if (this.#isEnding) return;
    this.#isEnding = true;
    this.#killAll('SIGKILL');
    process.stderr.write(`tsmpi proxy on ${os.hostname()} (${this.#spec.host}): ${why}; killed its ranks\n`);
    this.#ws.terminate();
    process.exit(status);
  }

  #send(m: ProxyMessage): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(encodeProxyMessage(m));
  }

  #onMessage(data: Buffer): void {
    this.#lastHeard = Date.now();
    const m = decodeHeadMessage(data);
    if (m === null) {
      this.die('malformed message from mpiexec');
      return;
    }
    switch (m.t) {
      case 'challenge':
      case 'welcome':
        this.die(`mpiexec sent ${m.t} on an authenticated link`);
        return;
      case 'signal':
        for (const r of this.#ranks) if (m.rank < 0 || r.spec.rank === m.rank) this.#kill(r, m.sig as NodeJS.Signals);
        return;
      case 'stdin':
        this.#stdinWrite(m.data);
        return;
      case 'stdinEnd':
        this.#stdinPipe()?.end();
        return;
      case 'hb':
        return;
    }
  }

  /** Rank 0's stdin pipe, when rank 0 runs here and its pipe is still open. */
  #stdinPipe(): Writable | null {
    const p = this.#ranks.find((r) => r.spec.rank === 0)?.child?.stdin ?? null;
    return p === null || p.destroyed || p.writableEnded ? null : p;
  }

  /** Writes a chunk of mpiexec's stdin to rank 0 and acknowledges it once the pipe took it (or is gone). */
  #stdinWrite(data: Uint8Array): void {
    const bytes = data.byteLength;
    const pipe = this.#stdinPipe();
    if (pipe === null) {
      this.#send({ t: 'stdinAck', bytes }); // nobody reads it any more: do not hold mpiexec back
      return;
    }
    pipe.write(data, () => this.#send({ t: 'stdinAck', bytes }));
  }

  #listenHost(): string | Error {
    if (this.#spec.iface !== null) {
      const a = resolveIface(this.#spec.iface, os.networkInterfaces());
      return a instanceof Error ? new Error(`host ${this.#spec.host} (${os.hostname()}): ${a.message}`) : a;
    }
    const local = (this.#socket.localAddress ?? '').replace(/^::ffff:/, '');
    if (local === '' || isLoopbackAddress(local)) {
      return new Error(`host ${this.#spec.host} (${os.hostname()}): reached mpiexec only over loopback (${local}); give --iface NAME|CIDR`);
    }
    return local;
  }

  #start(): void {
    const listenHost = this.#listenHost();
    if (listenHost instanceof Error) {
      this.#send({ t: 'fatal', message: listenHost.message });
      this.#ws.close(1000);
      setTimeout(() => process.exit(1), 500).unref();
      this.#isEnding = true;
      return;
    }
    this.#send({ t: 'address', listenHost });
    this.#setpriv = findSetpriv();
    for (const r of this.#ranks) this.#spawn(r, listenHost);
  }

  #spawn(r: ProxyRank, listenHost: string): void {
    const s = this.#spec;
    const env: NodeJS.ProcessEnv = { ...process.env, ...s.env };
    for (const [k, v] of Object.entries(s.world?.env ?? {})) env[k] = v;
    env[JOB_ENV.rank] = String(r.spec.rank - (s.world?.first ?? 0));
    env[JOB_ENV.size] = String(s.size);
    env[JOB_ENV.localRank] = String(r.spec.localRank);
    env[JOB_ENV.localSize] = String(r.spec.localSize);
    env[JOB_ENV.pmiUrl] = this.#url;
    env[JOB_ENV.jobKey] = s.key;
    env[JOB_ENV.host] = s.slurmNodeId === undefined ? s.host : nodeName();
    env[JOB_ENV.listenHost] = listenHost;
    if (s.portRange !== null) env[JOB_ENV.portRange] = s.portRange;
    let child: ChildProcess;
    try {
      // Rank 0 reads mpiexec's stdin (API.md), relayed over the link.
      const stdin = r.spec.rank === 0 ? 'pipe' : 'ignore';
      // A Node rank (run by this proxy's own node) dies with this proxy, even with one killed -9 before the rank
      // joined (parent-death.ts); other programs start directly, so that one that cannot be executed is reported as before.
      const plain = { file: s.file, args: s.args };
      const cmd = s.file === process.execPath ? withParentDeath(plain, this.#setpriv) : plain;
      child = spawn(cmd.file, [...cmd.args], { cwd: s.wdir, env, detached: true, stdio: [stdin, 'pipe', 'pipe'] });
    } catch (err) {
      this.#startError(r, (err as Error).message);
      return;
    }
    r.child = child;
    child.stdin?.on('error', () => undefined); // EPIPE when rank 0 exits without reading: its exit is reported
    r.pid = child.pid ?? null;
    if (r.pid !== null) this.#send({ t: 'started', rank: r.spec.rank, pid: r.pid });
    const rank = r.spec.rank;
    const out = new LineForwarder((b) => this.#sendOutput(rank, 1, b), null);
    const err = new LineForwarder((b) => this.#sendOutput(rank, 2, b), null);
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      if (r.pid === null && !r.hasExited) this.#startError(r, e.message);
    });
    child.on('exit', (code, signal) => {
      r.hasExited = true;
      if (r.pid !== null && !hasGroupMembers(r.pid)) r.pid = null; // the number is free: never signal it again
      this.#send({ t: 'exit', rank, code, signal });
      setTimeout(() => {
        if (r.isClosed) return;
        this.#kill(r, 'SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, STDIO_GRACE_MS).unref();
    });
    // 'close' comes after 'exit' and after both pipes ended: the rank's last line is out.
    child.on('close', () => {
      out.flush();
      err.flush();
      this.#closed(r);
    });
  }

  #sendOutput(rank: number, fd: 1 | 2, data: Buffer): void {
    this.#send({ t: 'out', rank, fd, data });
    if (this.#congestionTimer !== null || this.#ws.bufferedAmount < OUTPUT_HIGH_WATER_BYTES) return;
    for (const r of this.#ranks) {
      r.child?.stdout?.pause();
      r.child?.stderr?.pause();
    }
    this.#congestionTimer = setInterval(() => {
      if (this.#ws.bufferedAmount > OUTPUT_HIGH_WATER_BYTES / 4) return;
      clearInterval(this.#congestionTimer!);
      this.#congestionTimer = null;
      for (const r of this.#ranks) {
        r.child?.stdout?.resume();
        r.child?.stderr?.resume();
      }
    }, OUTPUT_CHECK_MS);
  }

  #startError(r: ProxyRank, message: string): void {
    r.hasExited = true;
    this.#send({ t: 'startError', rank: r.spec.rank, message });
    this.#closed(r);
  }

  #closed(r: ProxyRank): void {
    if (r.isClosed) return;
    r.isClosed = true;
    this.#send({ t: 'closed', rank: r.spec.rank });
    if (this.#ranks.every((x) => x.isClosed)) {
      // Done: leftover children of finished ranks go too, then a clean goodbye.
      this.#isEnding = true;
      this.#killAll('SIGKILL');
      if (this.#hbTimer !== null) clearInterval(this.#hbTimer);
      // mpiexec answers the close once it has read everything queued before it: the ranks' last
      // output and these 'closed' messages. While its own output is congested (a slow reader, a
      // loaded machine) it reads the link late, so exiting after a fixed time dropped what was
      // still queued here and read to mpiexec as a lost host. Wait for the answer while mpiexec is
      // alive (its heartbeats keep coming); exit without it only once it has gone silent.
      this.#ws.close(1000);
      this.#ws.once('close', () => process.exit(0));
      setInterval(() => {
        if (Date.now() - this.#lastHeard > HEARTBEAT_MS * HEARTBEAT_MISSES) process.exit(0);
      }, HEARTBEAT_MS).unref();
    }
  }

  #kill(r: ProxyRank, sig: NodeJS.Signals): void {
    if (r.pid === null) return;
    try {
      process.kill(-r.pid, sig);
    } catch {
      // already gone
    }
  }

  #killAll(sig: NodeJS.Signals): void {
    for (const r of this.#ranks) this.#kill(r, sig);
  }
}

/** This host's name as the job knows it: the Slurm node name under Slurm, else the host name. */
function nodeName(): string {
  return process.env['SLURMD_NODENAME'] ?? os.hostname();
}

/**
 * The proxy's main; never returns normally (the process exits).
 * `--slurm` in argv: started by srun, one of several proxies reading the same stdin.
 */
export async function runProxy(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const isSlurm = argv.includes('--slurm');
  let proxy: Proxy | null = null;
  let stdinEnded = false;
  const session = isSlurm ? 'its srun step' : 'its ssh session';
  const onStdinEnd = (): void => {
    stdinEnded = true;
    proxy?.die(`mpiexec went away (${session} ended)`);
  };
  for (const sig of ['SIGHUP', 'SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      const status = 128 + (os.constants.signals[sig] ?? 0);
      if (proxy !== null) proxy.die(`received ${sig}`, status);
      else process.exit(status);
    });
  }
  let spec: LaunchSpec;
  const select = (line: string): LaunchSpec | Error | null => {
    const parsed = parseLaunchSpec(line);
    if (parsed instanceof Error || !isSlurm) return parsed;
    return isSlurmSpecFor(parsed, process.env) ? parsed : null;
  };
  try {
    spec = await readSpec(select, onStdinEnd);
  } catch (err) {
    const which = isSlurm ? ` for Slurm node ${process.env['SLURMD_NODENAME'] ?? '?'} (SLURM_NODEID ${process.env['SLURM_NODEID'] ?? '?'})` : '';
    process.stderr.write(`tsmpi proxy on ${nodeName()}: ${(err as Error).message}${which}\n`);
    process.exit(1);
  }
  // However the proxy ends, its ranks are gone by then (it kills them): their same-host sockets go too (docs/adr/0029).
  process.on('exit', () => removeSameHostSockets(spec.key, spec.ranks.map((r) => r.rank)));
  // As mpiexec does on its host (docs/adr/0029): left-over job directories go, this job's is claimed.
  sweepStaleSameHostDirectories();
  claimSameHostDirectory(spec.key);
  const tried: string[] = [];
  let link: Link | null = null;
  let url = '';
  for (const a of candidateAddresses(spec, isSlurm ? process.env['SLURM_SRUN_COMM_HOST'] : process.env['SSH_CONNECTION'])) {
    try {
      const opened = await openLink(a, spec.port, spec);
      link = await authenticateLink(opened, spec);
      url = wireupUrl(spec.secure === true, a, spec.port);
      break;
    } catch (err) {
      tried.push(`${a} (${(err as Error).message})`);
    }
  }
  if (link === null) {
    process.stderr.write(`tsmpi proxy on ${os.hostname()}: cannot reach mpiexec's wire-up service on port ${spec.port}: tried ${tried.join(', ')}; check firewalls and --port-range, or give --iface\n`);
    process.exit(1);
  }
  link.socket.setKeepAlive(true, KEEPALIVE_MS);
  proxy = new Proxy(spec, link, url);
  proxy.run();
  if (stdinEnded) proxy.die(`mpiexec went away (${session} ended)`);
}
