// Over 600 lines: one answerer for every dyn request of a job (spawn, ports, coupling, names); the links it uses are files beside it (port-link, coupled-links, nameserver-link).
/**
 * mpiexec's side of dynamic processes (docs/adr/0040-dynamic-processes.md): answers the
 * wire-up protocol's `dyn` requests (core's pmi/protocol.ts DYN_OPS) of the job's processes.
 *
 * - spawn: checks the request against the job's free process numbers (the universe, never
 *   reused), resolves each command, places the children (info `host`, the hosts of `hostfile`,
 *   else the job's host slots in order), asks the job to start the new world (job.ts), and
 *   answers once the children's leader joined (spawnJoin) with the children's side.
 * - spawnJoin: the children's leader hands its side and gets the parents'.
 * - openPort / closePort, accept / connect: a port is `tsmpi-port:JOB@HOST:PORT:SECRET` (port-name.ts;
 *   `tsmpi-tls-port:` under --secure), JOB this mpiexec's random 64-bit tag (not secret: it says which
 *   job opened the port), HOST:PORT its wire-up service, SECRET a random 128-bit token; the first accept and
 *   the first connect at a port are paired, each gets the other's side. A connect at another
 *   job's port dials that job's mpiexec and proves SECRET (port-link.ts); another job's connect
 *   arrives so (acceptLink); job-coupling.ts then couples the two groups (docs/adr/0043-connect-two-jobs.md).
 * - coupled: the root of a coupled group says its processes took the other job's (or failed); the port
 *   link is then kept (coupled-links.ts): a failure of a coupled process reaches the other job's group.
 * - decoupled: the root of a coupled group disconnected from the other job's: failures no longer pass.
 * - publish / lookup / unpublish: a table of service names; with mpiexec --nameserver, the name server's
 *   (nameserver-link.ts: names between jobs, docs/adr/0046-name-server-between-jobs.md).
 * A "side" is the opaque bytes core's api/dynamic-side.ts encodes ([context id, endpoints]).
 * Errors are answers ([class name, message]), never exceptions: the request's process decides.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CLOSE_CODES, JOB_ENV, MAX_HELLO_BYTES, couplingTls, isProgress, newKeyProofNonce, type DynOp, type Logger, type Progress } from '@tsmpi/core/pmi';
import { CoupledLinks, type Coupling } from './coupled-links.ts';
import { acceptCoupling, channelsOf, confirmCoupling, connectCoupling, groupOffer, type CouplingDeps } from './job-coupling.ts';
import { LINK_HANDSHAKE_MS, LinkChannel, MAX_LINK_BYTES, dialPort, isPortProof, portLinkBinding, portServerProof, type GroupOffer } from './port-link.ts';
import { describePort, formatPortName, parsePortName, publicPort } from './port-name.ts';
import type { PendingLink } from './wireup-server.ts';
import { parseHostfile, type HostSlots } from './process-map.ts';

/** One answer to a request: its value, or [MPI error class name, message]. */
export type DynAnswer = { readonly value: unknown } | DynFailure;
/** A refused request: [MPI error class name, message]. */
export type DynFailure = { readonly error: readonly [string, string] };

/** One command of a spawn, resolved and placed. */
export interface SpawnCommand {
  /** The program, an absolute path (or a command name found on PATH, for non-Node programs). */
  readonly program: string;
  readonly args: readonly string[];
  /** The hosts of its processes, in rank order. */
  readonly hosts: readonly string[];
  /** Its working directory (info `wdir`, else the job's). */
  readonly wdir: string | null;
}

/** A world to start: processes first..first+size-1, the commands' processes in order. */
export interface SpawnedWorld {
  readonly spawnId: number;
  readonly first: number;
  readonly size: number;
  readonly commands: readonly SpawnCommand[];
  /** The spawning processes' progress (inline, threads or engines), which the children's progress auto follows; absent: not said. */
  readonly parentProgress?: Progress;
}

/** What the service needs from its job. */
export interface DynamicServiceDeps {
  /** The job's process numbers (UNIVERSE_SIZE). */
  readonly universe: number;
  /** Processes the job started with (the first free number). */
  readonly initial: number;
  /** The host of each slot, in order (the job's --hosts expanded by slots; one entry for a job without hosts). */
  readonly slotHosts: readonly string[];
  /** The job's working directory (--wdir), null: mpiexec's. */
  readonly wdir: string | null;
  /** Why the job cannot start children on a host (its launcher: Slurm, fork), or null when it can. */
  whyNotHost(host: string): string | null;
  /** Finds a program as mpiexec does (rank-command.ts resolveProgram). */
  resolveProgram(program: string, wdir: string | null): string | null;
  /** Starts the world (job.ts); an Error says why it cannot. */
  startWorld(world: SpawnedWorld): Error | null;
  /** The wire-up service's address another job's mpiexec dials ("host:port"), once listening; absent or null: ports without one. */
  portAddress?(): string | null;
  /** The job's store (the wire-up service's committed values): a coupling reads addresses and puts the other job's. */
  readonly store?: { get(key: string): string | undefined; put(key: string, value: string): void };
  /** Why this job cannot couple with another, or absent: it can. */
  readonly whyNoCoupling?: string;
  /** mpiexec --secure: ports are `tsmpi-tls-port:`, couple only with another --secure job, over TLS keyed by the port (portPsk). */
  readonly secure?: boolean;
  /** Sends wire-up peerFailed to process `to`: another job's process `failed` (this job's number) failed (coupled-links.ts). */
  tellPeerFailed?(to: number, failed: number, why: string): void;
  readonly log?: Logger;
  /** mpiexec --nameserver: publish / lookup / unpublish go to the name server (docs/adr/0046); absent: the job's own table. */
  readonly names?: NameService;
}

/** Where a job's name requests go with --nameserver (nameserver-link.ts NameserverClient): answers, never rejections. */
export interface NameService {
  request(op: 'publish' | 'lookup' | 'unpublish', service: unknown, port?: unknown): Promise<DynAnswer>;
}

interface PendingSpawn {
  readonly parent: Uint8Array;
  readonly first: number;
  readonly size: number;
  resolve: ((a: DynAnswer) => void) | null;
}

interface Port {
  accepting: { readonly side: Uint8Array; readonly args: Readonly<Record<string, unknown>>; readonly resolve: (a: DynAnswer) => void } | null;
  /**
   * Connects waiting for an accept, each with the timer that refuses it after its timeout; `link`: another
   * job's connect (docs/adr/0043), its group offered over a proven port link.
   */
  connecting: { readonly side: Uint8Array; readonly resolve: (a: DynAnswer) => void; readonly timer: NodeJS.Timeout; readonly link?: { readonly channel: LinkChannel; readonly group: GroupOffer } }[];
}

/**
 * How long a connect waits for an accept at an open port, in seconds, when the request names no
 * `timeout` (info key of Comm.connect): MPICH's default (MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT, 180 s),
 * after which the connect is ERR_PORT as there.
 */
const CONNECT_TIMEOUT_S = 180;
/** The longest timeout a connect may ask for (a day): setTimeout's range, and no connect waits longer. */
const MAX_CONNECT_TIMEOUT_S = 86_400;

/** Longest service name, port name or argument string accepted (MPI_MAX_PORT_NAME-like bound). */
const MAX_NAME_CHARS = 1024;
/** Most commands of one spawnMultiple, and most arguments of one command. */
const MAX_COMMANDS = 256;
const MAX_ARGS = 4096;

function fail(errorClass: string, message: string): DynFailure {
  return { error: [errorClass, message] };
}

function isName(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME_CHARS;
}

/** The service of one job. */
export class DynamicService {
  readonly #deps: DynamicServiceDeps;
  #next: number;
  #nextSpawnId = 1;
  readonly #spawns = new Map<number, PendingSpawn>();
  readonly #ports = new Map<string, Port>();
  /** Under --secure: each open port's TLS PSK by its identity (core's couplingTls('port', SECRET)), for the wire-up service. */
  readonly #portPsks = new Map<string, Buffer>();
  readonly #names = new Map<string, string>();
  /** This job's tag in its port names: tells a port of another job from a closed or made-up one. */
  readonly #jobTag = randomBytes(8).toString('hex');
  /** Port links of couplings whose processes have not confirmed yet ('coupled'), by coupling id. */
  readonly #couplings = new Map<number, Coupling & { readonly link: LinkChannel }>();
  /** The links of confirmed couplings, kept while the job runs (coupled-links.ts). */
  readonly #links: CoupledLinks;
  #nextCoupling = 1;
  /**
   * The lowest number given to another job's processes (the universe's size before any): couplings take
   * numbers from the top of the universe down, spawns from #next up, so the job's own processes (its rank
   * table, which spawn's numbering follows: job.ts) stay numbered 0..#next-1 whatever the order of the two.
   */
  #top: number;
  /** Another job's processes by this job's number: their number there and the port (without its secret) they coupled at. */
  readonly #coupledPeers = new Map<number, { readonly there: number; readonly port: string }>();

  constructor(deps: DynamicServiceDeps) {
    this.#deps = deps;
    this.#next = deps.initial;
    this.#top = deps.universe;
    this.#links = new CoupledLinks({
      tell: (to, failed, why) => deps.tellPeerFailed?.(to, failed, why),
      describe: (here) => this.coupledPeer(here) ?? `process ${here}`,
      log: deps.log,
    });
  }

  /** Process `p` of this job ended: `why` how (exited with code 1, ...), or null when it finalized. The other jobs coupled with it hear it. */
  processEnded(p: number, why: string | null): void {
    this.#links.processEnded(p, why);
  }

  /** The job ends: the links to coupled jobs close. */
  close(): void {
    this.#links.close();
  }

  /**
   * Under --secure, the TLS PSK of an open port whose identity another job's mpiexec names (the wire-up
   * service's TLS); null for any other identity, or without --secure.
   */
  portPsk(identity: string): Buffer | null {
    return this.#portPsks.get(identity) ?? null;
  }

  /** Process numbers not given out yet. */
  get freeSlots(): number {
    return this.#top - this.#next;
  }

  /** Answers one request of process `rank` (its number in the job). */
  handle(rank: number, op: DynOp, a: Readonly<Record<string, unknown>>): Promise<DynAnswer> {
    switch (op) {
      case 'spawn':
        return this.#spawn(a);
      case 'spawnJoin':
        return Promise.resolve(this.#spawnJoin(rank, a));
      case 'openPort': {
        const where = this.#deps.portAddress?.() ?? null;
        const secret = randomBytes(16).toString('hex');
        const port = formatPortName(this.#deps.secure === true, this.#jobTag, where, secret);
        this.#ports.set(port, { accepting: null, connecting: [] });
        if (this.#deps.secure === true) {
          const { identity, psk } = couplingTls('port', secret);
          this.#portPsks.set(identity, psk);
        }
        return Promise.resolve({ value: port });
      }
      case 'closePort':
        return Promise.resolve(this.#closePort(a));
      case 'accept':
      case 'connect':
        return this.#meet(op, a);
      case 'coupled':
        return this.#confirm(a);
      case 'decoupled': {
        const ps = a['processes'];
        if (!Array.isArray(ps) || ps.length === 0 || !ps.every((p) => Number.isInteger(p) && this.#coupledPeers.has(p as number))) {
          return Promise.resolve(fail('ERR_ARG', 'decoupled: expected processes of another job coupled at a port'));
        }
        return Promise.resolve(this.#links.decouple(ps as number[]) ? { value: null } : fail('ERR_ARG', 'decoupled: no coupling holds those processes'));
      }
      case 'publish':
      case 'lookup':
      case 'unpublish': {
        const names = this.#deps.names;
        if (names === undefined) return Promise.resolve(this.#nameService(op, a));
        return op === 'lookup' ? names.request(op, a['service']) : names.request(op, a['service'], a['port']);
      }
    }
  }

  /** The root of a coupled group says whether its processes took the other job's; on both sides' yes the link is kept. */
  async #confirm(a: Readonly<Record<string, unknown>>): Promise<DynAnswer> {
    const id = a['coupling'];
    const c = typeof id === 'number' ? this.#couplings.get(id) : undefined;
    if (c === undefined) return fail('ERR_ARG', `coupling ${String(id)} is not waiting`);
    this.#couplings.delete(id as number);
    const answer = await confirmCoupling(c.link, a['ok'] === true);
    if (!('error' in answer)) this.#links.add(c);
    return answer;
  }

  #spawn(a: Readonly<Record<string, unknown>>): Promise<DynAnswer> {
    const side = a['side'];
    const list = a['commands'];
    if (!(side instanceof Uint8Array) || !Array.isArray(list) || list.length === 0 || list.length > MAX_COMMANDS) {
      return Promise.resolve(fail('ERR_ARG', 'malformed spawn request'));
    }
    let total = 0;
    for (const c of list as unknown[]) {
      const m = (c as Record<string, unknown> | null)?.['maxprocs'];
      if (typeof m !== 'number' || !Number.isInteger(m) || m < 1) return Promise.resolve(fail('ERR_SPAWN', `maxprocs ${String(m)} is invalid: expected 1..${this.freeSlots} (the job's free slots)`));
      total += m;
    }
    const free = this.freeSlots;
    if (total > free) {
      return Promise.resolve(fail('ERR_SPAWN', `maxprocs ${total} is more than the job's free slots: ${free} of UNIVERSE_SIZE ${this.#deps.universe} (` +
        `${this.#next} processes started so far${this.#top < this.#deps.universe ? `, ${this.#deps.universe - this.#top} numbers given to coupled jobs' processes` : ''}; more slots: mpiexec --hosts HOST:SLOTS, a hostfile, or TSMPI_UNIVERSE in mpiexec's environment)`));
    }
    const first = this.#next;
    const commands: SpawnCommand[] = [];
    let placed = 0;
    for (const c of list as Record<string, unknown>[]) {
      const cmd = this.#command(c, first + placed);
      if ('error' in cmd) return Promise.resolve(cmd);
      commands.push(cmd);
      placed += cmd.hosts.length;
    }
    const spawnId = this.#nextSpawnId++;
    this.#next += total;
    const pending: PendingSpawn = { parent: side, first, size: total, resolve: null };
    const answer = new Promise<DynAnswer>((resolve) => {
      pending.resolve = resolve;
    });
    this.#spawns.set(spawnId, pending);
    const progress = a['progress'];
    const parentProgress = isProgress(progress) ? { parentProgress: progress } : {};
    const err = this.#deps.startWorld({ spawnId, first, size: total, commands, ...parentProgress });
    if (err !== null) {
      // Nothing started: the numbers go back (the job's rank table takes worlds in number order).
      this.#spawns.delete(spawnId);
      this.#next = first;
      return Promise.resolve(fail('ERR_SPAWN', err.message));
    }
    return answer;
  }

  /** Resolves and places one command whose first process will be `firstProcess`. */
  #command(c: Record<string, unknown>, firstProcess: number): SpawnCommand | DynFailure {
    const { command, args, maxprocs, host, wdir, path: searchPath, hostfile } = c;
    if (!isName(command)) return fail('ERR_SPAWN', `command ${JSON.stringify(command)} is invalid: expected a program path`);
    if (!Array.isArray(args) || args.length > MAX_ARGS || !args.every((x) => typeof x === 'string')) return fail('ERR_ARG', 'args is not a list of strings');
    for (const [k, v] of [['host', host], ['wdir', wdir], ['path', searchPath], ['hostfile', hostfile]] as const) {
      if (v !== undefined && !isName(v)) return fail('ERR_INFO_VALUE', `info key ${k}: expected a non-empty string`);
    }
    const dir = (wdir as string | undefined) ?? this.#deps.wdir;
    if (dir !== null && !existsSync(dir)) return fail('ERR_SPAWN', `info wdir ${dir}: no such directory`);
    let program: string | null = null;
    if (typeof searchPath === 'string' && !path.isAbsolute(command)) {
      for (const d of searchPath.split(':')) {
        const p = path.resolve(dir ?? process.cwd(), d, command);
        if (existsSync(p)) {
          program = p;
          break;
        }
      }
    }
    program ??= this.#deps.resolveProgram(command, dir);
    if (program === null) return fail('ERR_SPAWN', `command ${command} not found (looked in ${[typeof searchPath === 'string' ? `info path ${searchPath}` : '', dir ?? process.cwd()].filter((x) => x !== '').join(', ')})`);
    let slotHosts: readonly string[] = this.#deps.slotHosts;
    if (typeof host === 'string') slotHosts = [host];
    else if (typeof hostfile === 'string') {
      let text: string;
      try {
        text = readFileSync(hostfile, 'utf8');
      } catch (e) {
        return fail('ERR_SPAWN', `info hostfile ${hostfile}: ${(e as Error).message}`);
      }
      const hosts = parseHostfile(text, hostfile);
      if (hosts instanceof Error) return fail('ERR_SPAWN', hosts.message);
      slotHosts = expandSlots(hosts, null);
    }
    const n = maxprocs as number;
    const hosts = Array.from({ length: n }, (_, i) => slotHosts[(typeof host === 'string' || typeof hostfile === 'string' ? i : firstProcess + i) % slotHosts.length]!);
    for (const h of new Set(hosts)) {
      const why = this.#deps.whyNotHost(h);
      if (why !== null) return fail('ERR_SPAWN', why);
    }
    return { program, args: args as string[], hosts, wdir: dir };
  }

  #spawnJoin(rank: number, a: Readonly<Record<string, unknown>>): DynAnswer {
    const id = a['spawn'];
    const side = a['side'];
    const s = typeof id === 'number' ? this.#spawns.get(id) : undefined;
    if (s === undefined || !(side instanceof Uint8Array) || rank !== s.first) return fail('ERR_ARG', `spawnJoin: process ${rank} is not the leader of spawn ${String(id)}`);
    this.#spawns.delete(id as number);
    s.resolve?.({ value: { first: s.first, size: s.size, side } });
    return { value: { side: s.parent } };
  }

  #closePort(a: Readonly<Record<string, unknown>>): DynAnswer {
    const port = a['port'];
    const p = typeof port === 'string' ? this.#ports.get(port) : undefined;
    if (p === undefined) return this.#unknownPort(port);
    this.#ports.delete(port as string);
    const secret = parsePortName(port)?.secret;
    if (secret !== undefined) this.#portPsks.delete(couplingTls('port', secret).identity);
    const gone = fail('ERR_PORT', `${describePort(port)} was closed while waiting`);
    p.accepting?.resolve(gone);
    for (const c of p.connecting) {
      clearTimeout(c.timer);
      c.link?.channel.send({ t: 'refused', error: gone.error });
      c.link?.channel.close('port closed');
      c.resolve(gone);
    }
    return { value: null };
  }

  #meet(op: 'accept' | 'connect', a: Readonly<Record<string, unknown>>): Promise<DynAnswer> {
    const port = a['port'];
    const side = a['side'];
    const p = typeof port === 'string' ? this.#ports.get(port) : undefined;
    const timeout = a['timeout'] ?? CONNECT_TIMEOUT_S;
    if (op === 'connect' && (typeof timeout !== 'number' || !(timeout > 0 && timeout <= MAX_CONNECT_TIMEOUT_S))) {
      return Promise.resolve(fail('ERR_INFO_VALUE', `connect timeout ${String(timeout)} is out of range: expected 0 < seconds <= ${MAX_CONNECT_TIMEOUT_S}`));
    }
    if (p === undefined) {
      const away = parsePortName(port);
      if (op === 'connect' && away !== null && away.jobTag !== this.#jobTag && away.address !== null && side instanceof Uint8Array) {
        const why = whyNotSecure(this.#deps.secure === true, away.isSecure);
        if (why !== null) return Promise.resolve(fail('ERR_PORT', `${describePort(port)}: ${why}`));
        return this.#connectAway(port as string, away.jobTag, away.address, away.secret, side, a, timeout as number);
      }
      return Promise.resolve(this.#unknownPort(port));
    }
    if (!(side instanceof Uint8Array)) return Promise.resolve(fail('ERR_ARG', `malformed ${op} request`));
    if (op === 'accept') {
      if (p.accepting !== null) return Promise.resolve(fail('ERR_PORT', `${describePort(port)} already has an accept waiting`));
      const c = p.connecting.shift();
      if (c !== undefined) {
        clearTimeout(c.timer);
        if (c.link !== undefined) return this.#acceptAway(port as string, c.link.channel, c.link.group, side, a);
        c.resolve({ value: { side } });
        return Promise.resolve({ value: { side: c.side } });
      }
      return new Promise((resolve) => {
        p.accepting = { side, args: a, resolve };
      });
    }
    const acc = p.accepting;
    if (acc !== null) {
      p.accepting = null;
      acc.resolve({ value: { side } });
      return Promise.resolve({ value: { side: acc.side } });
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const i = p.connecting.indexOf(entry);
        if (i < 0) return;
        p.connecting.splice(i, 1);
        resolve(fail('ERR_PORT', `no accept at ${describePort(port)} within ${String(timeout)} s (the connect timeout; info key "timeout" sets it, in seconds)`));
      }, (timeout as number) * 1000);
      timer.unref();
      const entry = { side, resolve, timer };
      p.connecting.push(entry);
    });
  }

  /**
   * Process `n` of this job's universe when it is another job's process (coupled at a port):
   * "process N (process M of the job coupled at port tsmpi-port:TAG@HOST:PORT)", never the port's secret; else null.
   */
  coupledPeer(n: number): string | null {
    const c = this.#coupledPeers.get(n);
    return c === undefined ? null : `process ${n} (process ${c.there} of the job coupled at port ${c.port})`;
  }

  /** One line per port this job coupled at: which of its numbers are the other job's processes (a roll-call names them: their ranks answer in their own job). */
  couplingLines(): string[] {
    const byPort = new Map<string, number[]>();
    for (const [n, c] of this.#coupledPeers) byPort.set(c.port, [...(byPort.get(c.port) ?? []), n]);
    return [...byPort].map(([port, ns]) => `processes ${ns.join(', ')} are another job's (coupled at port ${port}; ` +
      `their ${ns.map((n) => this.#coupledPeers.get(n)!.there).join(', ')} there): its mpiexec's roll-call lists them`);
  }

  /** The store and the universe, as a coupling at `port` uses them; `peers` gets the other group's numbers here and there. */
  #couplingDeps(port: string, peers: { here: readonly number[]; there: readonly number[] }): CouplingDeps | null {
    const store = this.#deps.store;
    if (store === undefined || this.#deps.whyNoCoupling !== undefined) return null;
    return {
      get: (k) => store.get(k),
      put: (k, v) => store.put(k, v),
      take: (n, why) => {
        if (n > this.freeSlots) {
          return new Error(`${why} need ${n} free slots of UNIVERSE_SIZE ${this.#deps.universe}, ${this.freeSlots} are free ` +
            '(more slots: mpiexec --hosts HOST:SLOTS, a hostfile, or TSMPI_UNIVERSE in mpiexec\'s environment)');
        }
        // From the top down (#top): the job's own numbers stay contiguous for later spawns.
        this.#top -= n;
        const first = this.#top;
        return Array.from({ length: n }, (_, i) => first + i);
      },
      coupled: (here, there) => {
        const shown = publicPort(port);
        here.forEach((n, i) => this.#coupledPeers.set(n, { there: there[i]!, port: shown }));
        peers.here = here;
        peers.there = there;
      },
    };
  }

  #noCoupling(): string {
    return this.#deps.whyNoCoupling ?? 'this mpiexec cannot couple with another job';
  }

  /** A coupled answer: its link waits for 'coupled' under a new id, which the answer carries. */
  #coupled(answer: DynAnswer, pending: Coupling & { readonly link: LinkChannel }): DynAnswer {
    if ('error' in answer) return answer;
    const id = this.#nextCoupling++;
    this.#couplings.set(id, pending);
    return { value: { ...(answer.value as object), coupling: id } };
  }

  /** This job's accept pairs with another job's connect that arrived over `link`. */
  async #acceptAway(port: string, link: LinkChannel, theirs: GroupOffer, side: Uint8Array, a: Readonly<Record<string, unknown>>): Promise<DynAnswer> {
    const peers = { here: [] as readonly number[], there: [] as readonly number[] };
    const deps = this.#couplingDeps(port, peers);
    const mine = deps === null ? new Error(this.#noCoupling()) : groupOffer(side, typeof a['j'] === 'number' ? a['j'] : 1, a['engines'] === true, channelsOf(a), deps);
    if (mine instanceof Error) {
      link.send({ t: 'refused', error: ['ERR_PORT', mine.message] });
      link.close('refused');
      return fail('ERR_PORT', `${describePort(port)}: ${mine.message}`);
    }
    const answer = await acceptCoupling(link, theirs, mine, deps!, describePort(port));
    return this.#coupled(answer, { link, port: publicPort(port), mine: mine.procs.map((x) => x.p), ...peers });
  }

  /** A connect at another job's port: dial its mpiexec, prove the port, couple. */
  async #connectAway(port: string, tag: string, address: string, secret: string, side: Uint8Array, a: Readonly<Record<string, unknown>>, timeoutS: number): Promise<DynAnswer> {
    const peers = { here: [] as readonly number[], there: [] as readonly number[] };
    const deps = this.#couplingDeps(port, peers);
    if (deps === null) return fail('ERR_PORT', `${describePort(port)} is another job's: ${this.#noCoupling()}`);
    const mine = groupOffer(side, typeof a['j'] === 'number' ? a['j'] : 1, a['engines'] === true, channelsOf(a), deps);
    if (mine instanceof Error) return fail('ERR_PORT', `${describePort(port)}: ${mine.message}`);
    let link: LinkChannel;
    try {
      link = await dialPort(address, tag, secret, this.#deps.secure === true);
    } catch (e) {
      return fail('ERR_PORT', `${describePort(port)}: ${(e as Error).message}`);
    }
    const answer = await connectCoupling(link, mine, timeoutS, deps, describePort(port));
    return this.#coupled(answer, { link, port: publicPort(port), mine: mine.procs.map((x) => x.p), ...peers });
  }

  /**
   * A port link arrived on the wire-up service (PORT_PATH): challenge, check the proof against this job's
   * open ports' secrets, then take its connect as one at that port. A wrong proof is refused and logged.
   */
  acceptLink(pending: PendingLink): void {
    let isProven = false;
    const link = new LinkChannel(pending.ws, () => (isProven ? MAX_LINK_BYTES : MAX_HELLO_BYTES));
    const nonceS = newKeyProofNonce();
    link.send({ t: 'challenge', nonce: nonceS.toString('base64') });
    void (async () => {
      const hello = await link.next(LINK_HANDSHAKE_MS).catch(() => null);
      if (hello === null || hello.t !== 'hello' || typeof hello.nonce !== 'string' || typeof hello.proof !== 'string') {
        pending.refuse(CLOSE_CODES.protocol, 'port link: no hello');
        return;
      }
      const nonceC = Buffer.from(hello.nonce, 'base64');
      const proof = Buffer.from(hello.proof, 'base64');
      let found: { name: string; port: Port; secret: string; bound: Buffer } | null = null;
      for (const [name, port] of this.#ports) {
        const m = parsePortName(name);
        if (m === null || m.address === null) continue;
        const bound = portLinkBinding(m.jobTag, m.address);
        if (isPortProof(m.secret, nonceS, nonceC, bound, proof)) {
          found = { name, port, secret: m.secret, bound };
          break;
        }
      }
      if (found === null) {
        pending.refuse(CLOSE_CODES.badKey, 'port link: the proof matches no open port (closed, or a wrong secret)');
        return;
      }
      isProven = true;
      pending.authenticated();
      link.send({ t: 'welcome', proof: portServerProof(found.secret, nonceS, nonceC, found.bound).toString('base64') });
      const c = await link.next(LINK_HANDSHAKE_MS).catch(() => null);
      if (c === null || c.t !== 'connect' || typeof c.group !== 'object' || c.group === null) {
        link.close('no connect');
        return;
      }
      const timeout = typeof c.timeout === 'number' && c.timeout > 0 && c.timeout <= MAX_CONNECT_TIMEOUT_S ? c.timeout : CONNECT_TIMEOUT_S;
      const p = found.port;
      const acc = p.accepting;
      if (acc !== null) {
        p.accepting = null;
        acc.resolve(await this.#acceptAway(found.name, link, c.group, acc.side, acc.args));
        return;
      }
      const entry = {
        side: new Uint8Array(0), link: { channel: link, group: c.group },
        resolve: () => undefined,
        timer: setTimeout(() => {
          const i = p.connecting.indexOf(entry);
          if (i < 0) return;
          p.connecting.splice(i, 1);
          link.send({ t: 'refused', error: ['ERR_PORT', `no accept at ${describePort(found.name)} within ${timeout} s (the connect timeout; info key "timeout" sets it, in seconds)`] });
          link.close('timeout');
        }, timeout * 1000),
      };
      entry.timer.unref();
      p.connecting.push(entry);
      // The other job gave up (its mpiexec ended, or its connect timed out first): no accept pairs with a dead link.
      pending.ws.once('close', () => {
        const i = p.connecting.indexOf(entry);
        if (i < 0) return;
        p.connecting.splice(i, 1);
        clearTimeout(entry.timer);
      });
    })();
  }

  /** Why `port` is not open here: another job's port, or a closed or made-up one. */
  #unknownPort(port: unknown): DynFailure {
    const job = parsePortName(port)?.jobTag;
    if (job !== undefined && job !== this.#jobTag) {
      return fail('ERR_PORT', `${describePort(port)} was opened by another mpiexec job that takes no connections from other jobs ` +
        '(its port names no address)');
    }
    return fail('ERR_PORT', `${describePort(port)} is not an open port of this job (closed, or not a name MPI.openPort returned)`);
  }

  #nameService(op: 'publish' | 'lookup' | 'unpublish', a: Readonly<Record<string, unknown>>): DynAnswer {
    const service = a['service'];
    if (!isName(service)) return fail(op === 'lookup' ? 'ERR_NAME' : 'ERR_SERVICE', `service ${JSON.stringify(service)} is invalid: expected a string of 1..${MAX_NAME_CHARS} characters`);
    const held = this.#names.get(service);
    if (op === 'lookup') return held === undefined ? fail('ERR_NAME', `no service named "${service}" is published in this job`) : { value: held };
    const port = a['port'];
    if (!isName(port)) return fail('ERR_PORT', `${describePort(port)} is not a port name`);
    if (op === 'publish') {
      if (held !== undefined) return fail('ERR_SERVICE', `service "${service}" is already published (unpublish it first)`);
      this.#names.set(service, port);
      return { value: null };
    }
    if (held !== port) return fail('ERR_SERVICE', `service "${service}" is not published${held === undefined ? '' : ' with that port'}`);
    this.#names.delete(service);
    return { value: null };
  }
}

/**
 * Why a job (`isSecure`: run with --secure) cannot connect at a port of a job that runs with or without
 * --secure (`isPortSecure`), or null: both or neither. Mixed, one job's traffic would cross in clear.
 */
function whyNotSecure(isSecure: boolean, isPortSecure: boolean): string | null {
  if (isSecure === isPortSecure) return null;
  return isPortSecure
    ? 'the port\'s job runs with --secure and this one does not: coupled jobs must both run with --secure (or both without)'
    : 'this job runs with --secure and the port\'s job does not: its traffic would cross in clear (run both with --secure, or both without)';
}

/**
 * The host of each slot of a host list (a host without a count is one slot, --ppn counts per host),
 * in order; [defaultHost] without a list.
 */
export function expandSlots(hosts: readonly HostSlots[] | null, ppn: number | null, defaultHost = 'localhost'): string[] {
  if (hosts === null) return [defaultHost];
  return hosts.flatMap((h) => Array.from({ length: ppn ?? h.slots ?? 1 }, () => h.host));
}

/**
 * UNIVERSE_SIZE: TSMPI_UNIVERSE from mpiexec's environment when it is set (a number, at least
 * -n; the same variable then tells the ranks), else the slots of the job's host list, never fewer than -n.
 * @returns the universe, or an Error naming the variable
 */
export function universeSize(np: number, hosts: readonly HostSlots[] | null, ppn: number | null, env: NodeJS.ProcessEnv): number | Error {
  const text = env[JOB_ENV.universe];
  if (text !== undefined && text !== '') {
    if (!/^\d{1,7}$/.test(text) || Number(text) < np) return new Error(`${JOB_ENV.universe}=${text}: expected a whole number of processes, at least -n (${np})`);
    return Number(text);
  }
  return Math.max(np, hosts === null ? np : expandSlots(hosts, ppn).length);
}
