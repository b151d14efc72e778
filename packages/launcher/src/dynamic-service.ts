/**
 * mpiexec's side of dynamic processes (docs/adr/0040-dynamic-processes.md): answers the
 * wire-up protocol's `dyn` requests (core's pmi/protocol.ts DYN_OPS) of the job's processes.
 *
 * - spawn: checks the request against the job's free process numbers (the universe, never
 *   reused), resolves each command, places the children (info `host`, the hosts of `hostfile`,
 *   else the job's host slots in order), asks the job to start the new world (job.ts), and
 *   answers once the children's leader joined (spawnJoin) with the children's side.
 * - spawnJoin: the children's leader hands its side and gets the parents'.
 * - openPort / closePort, accept / connect: a port is `tsmpi-port:JOB:SECRET`, JOB this mpiexec's
 *   random 64-bit tag (not secret: it says which job opened the port), SECRET a random 128-bit
 *   token known only to this mpiexec and usable only over an authenticated wire-up connection;
 *   the first accept and the first connect at a port are paired, each gets the other's side. A
 *   port of another job is refused with an answer that says so (two jobs do not connect yet:
 *   docs/adr/0043-connect-two-jobs.md).
 * - publish / lookup / unpublish: a table of service names.
 * A "side" is the opaque bytes core's api/dynamic-side.ts encodes ([context id, endpoints]).
 * Errors are answers ([class name, message]), never exceptions: the request's process decides.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { JOB_ENV, type DynOp } from '@tsmpi/core/pmi';
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
}

interface PendingSpawn {
  readonly parent: Uint8Array;
  readonly first: number;
  readonly size: number;
  resolve: ((a: DynAnswer) => void) | null;
}

interface Port {
  accepting: { readonly side: Uint8Array; readonly resolve: (a: DynAnswer) => void } | null;
  /** Connects waiting for an accept, each with the timer that refuses it after its timeout. */
  connecting: { readonly side: Uint8Array; readonly resolve: (a: DynAnswer) => void; readonly timer: NodeJS.Timeout }[];
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
  readonly #names = new Map<string, string>();
  /** This job's tag in its port names: tells a port of another job from a closed or made-up one. */
  readonly #jobTag = randomBytes(8).toString('hex');

  constructor(deps: DynamicServiceDeps) {
    this.#deps = deps;
    this.#next = deps.initial;
  }

  /** Process numbers not given out yet. */
  get freeSlots(): number {
    return this.#deps.universe - this.#next;
  }

  /** Answers one request of process `rank` (its number in the job). */
  handle(rank: number, op: DynOp, a: Readonly<Record<string, unknown>>): Promise<DynAnswer> {
    switch (op) {
      case 'spawn':
        return this.#spawn(a);
      case 'spawnJoin':
        return Promise.resolve(this.#spawnJoin(rank, a));
      case 'openPort': {
        const port = `${PORT_PREFIX}${this.#jobTag}:${randomBytes(16).toString('hex')}`;
        this.#ports.set(port, { accepting: null, connecting: [] });
        return Promise.resolve({ value: port });
      }
      case 'closePort':
        return Promise.resolve(this.#closePort(a));
      case 'accept':
      case 'connect':
        return this.#meet(op, a);
      case 'publish':
      case 'lookup':
      case 'unpublish':
        return Promise.resolve(this.#nameService(op, a));
    }
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
        `${this.#next} processes started so far; more slots: mpiexec --hosts HOST:SLOTS, a hostfile, or TSMPI_UNIVERSE in mpiexec's environment)`));
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
    const err = this.#deps.startWorld({ spawnId, first, size: total, commands });
    if (err !== null) {
      this.#spawns.delete(spawnId);
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
    const gone = fail('ERR_PORT', `port ${port as string} was closed while waiting`);
    p.accepting?.resolve(gone);
    for (const c of p.connecting) {
      clearTimeout(c.timer);
      c.resolve(gone);
    }
    return { value: null };
  }

  #meet(op: 'accept' | 'connect', a: Readonly<Record<string, unknown>>): Promise<DynAnswer> {
    const port = a['port'];
    const side = a['side'];
    const p = typeof port === 'string' ? this.#ports.get(port) : undefined;
    if (p === undefined) return Promise.resolve(this.#unknownPort(port));
    if (!(side instanceof Uint8Array)) return Promise.resolve(fail('ERR_ARG', `malformed ${op} request`));
    const timeout = a['timeout'] ?? CONNECT_TIMEOUT_S;
    if (op === 'connect' && (typeof timeout !== 'number' || !(timeout > 0 && timeout <= MAX_CONNECT_TIMEOUT_S))) {
      return Promise.resolve(fail('ERR_INFO_VALUE', `connect timeout ${String(timeout)} is out of range: expected 0 < seconds <= ${MAX_CONNECT_TIMEOUT_S}`));
    }
    if (op === 'accept') {
      if (p.accepting !== null) return Promise.resolve(fail('ERR_PORT', `port ${port as string} already has an accept waiting`));
      const c = p.connecting.shift();
      if (c !== undefined) {
        clearTimeout(c.timer);
        c.resolve({ value: { side } });
        return Promise.resolve({ value: { side: c.side } });
      }
      return new Promise((resolve) => {
        p.accepting = { side, resolve };
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
        resolve(fail('ERR_PORT', `no accept at port ${port as string} within ${String(timeout)} s (the connect timeout; info key "timeout" sets it, in seconds)`));
      }, (timeout as number) * 1000);
      timer.unref();
      const entry = { side, resolve, timer };
      p.connecting.push(entry);
    });
  }

  /** Why `port` is not open here: another job's port, or a closed or made-up one. */
  #unknownPort(port: unknown): DynFailure {
    const job = typeof port === 'string' ? PORT_NAME.exec(port)?.[1] : undefined;
    if (job !== undefined && job !== this.#jobTag) {
      return fail('ERR_PORT', `${describePort(port)} was opened by another mpiexec job: ports connect the worlds of one job (its initial world and the worlds it spawned); ` +
        'connecting two separately started jobs is not supported yet');
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

/** Every port name starts so; then the job's tag (16 hex digits), ':', the secret (32 hex digits). */
const PORT_PREFIX = 'tsmpi-port:';
const PORT_NAME = /^tsmpi-port:([0-9a-f]{16}):[0-9a-f]{32}$/;

function describePort(port: unknown): string {
  return typeof port === 'string' ? `port "${port.length > 80 ? `${port.slice(0, 80)}...` : port}"` : `port ${typeof port}`;
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
