/**
 * Dynamic processes (API.md Part 2 "Dynamic processes"; MPI 4.0 chapter 11;
 * docs/adr/0040-dynamic-processes.md): Comm.spawn / spawnMultiple, MPI.getParent,
 * MPI.openPort / closePort, Comm.accept / connect, the name service, Comm.disconnect;
 * the methods are installed on Comm.prototype here (as intercomm-create.ts installs
 * createIntercomm).
 *
 * Every call that makes an intercommunicator is createIntercomm's scheme with mpiexec
 * as the leaders' channel: the communicator allocates a context id over itself, its
 * root hands [id, endpoints] to mpiexec (pmi `dyn` requests) and gets the other
 * group's back (spawn: from the children's leader at their init; accept/connect: from
 * the other root at the port), broadcasts the answer (or the error, so that no rank
 * waits for a root that failed), and every rank builds the Intercomm. Processes outside
 * this one's own world (the children, a spawned world's parents, other spawned worlds) get
 * their addresses from the job's key/value store before the Intercomm is returned
 * (Device.addPeers): a world's init reads its own world's only (docs/adr/0040).
 *
 * Under --progress threads/engines the channel engines learn the new processes too
 * (Engines.addPeers), and the MPI.Worker threads' own connections (runtime/worker-peers.ts), for
 * another job's processes with their pair keys (and their releases at disconnect).
 * An MPI.Worker thread's calls are carried out by the main thread (runtime/dynamic-relay.ts).
 * Another job's group (a port of another mpiexec, docs/adr/0043-connect-two-jobs.md) is coupled in two
 * steps (`coupled`, below) and released at disconnect (`decoupled`: its failures no longer reach this job).
 */
import { allocateContextId, freeContextId } from '../comm/index.ts';
import { bcastBytes, gatherBytes } from '../coll/index.ts';
import { dynamicRelay, peerAddress, runtime, runtimeOrNull, serveWorkerRequests, workerBoot, workerPeers, type ThreadRuntime } from '../runtime/index.ts';
import type { DynOp } from '../pmi/index.ts';
import type { ForeignPeer } from '../transport/index.ts';
import { ERR_ARG, ERR_COMM, ERR_INFO_VALUE, ERR_NAME, ERR_OTHER, ERR_PORT, ERR_ROOT, ERR_SPAWN, MPIError, mpiError } from '../util/index.ts';
import { describe } from './buffer.ts';
import { revive } from './revive.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import { Comm } from './comm.ts';
import { Info } from './info.ts';
import { decodeSide, encodeSide, Intercomm } from './intercomm.ts';
import { COMM_WORLD } from './predefined-comms.ts';

/** One command of spawnMultiple (API.md). */
export interface SpawnCommand {
  readonly command: string;
  readonly args?: readonly string[];
  readonly maxprocs: number;
  readonly info?: Info;
}

/** The options of spawn, spawnMultiple, accept and connect. */
export interface DynamicOptions {
  readonly info?: Info;
  /** The rank whose arguments count (default 0). */
  readonly root?: number;
}

declare module './comm.ts' {
  interface Comm {
    /**
     * Starts `maxprocs` processes of `command` through the job's mpiexec (MPI_Comm_spawn); collective over this communicator.
     * Arguments count at `root` only. Info keys: `host`, `wdir`, `path`, `hostfile`.
     * @returns the intercommunicator to the children (their COMM_WORLD is its remote group)
     * @throws MPIError(ERR_SPAWN) when maxprocs is out of range or above the job's free slots, or the command is not found; ERR_ROOT for a bad root
     * @example const children = await MPI.COMM_WORLD.spawn('worker.js', [], 2);
     */
    spawn(command: string, args: readonly string[], maxprocs: number, opts?: DynamicOptions): Promise<Intercomm>;
    /** Several commands in one new COMM_WORLD, ranks in command order (MPI_Comm_spawn_multiple); as spawn. */
    spawnMultiple(commands: readonly SpawnCommand[], opts?: DynamicOptions): Promise<Intercomm>;
    /** Waits at `port` (MPI.openPort) for a connect; collective over this communicator (MPI_Comm_accept). @throws MPIError(ERR_PORT) for a port that is not open */
    accept(port: string, opts?: DynamicOptions): Promise<Intercomm>;
    /**
     * Connects to the group accepting at `port`; collective over this communicator (MPI_Comm_connect).
     * Info key `timeout`: seconds to wait for an accept at an open port (default 180, as MPICH).
     * @throws MPIError(ERR_PORT) for a port that is not open, another job's port, or no accept within the timeout
     */
    connect(port: string, opts?: DynamicOptions): Promise<Intercomm>;
    /** Waits for the communicator's traffic to end and frees it (MPI_Comm_disconnect); collective. */
    disconnect(): Promise<void>;
  }
}

/** The intercommunicator to the parents, in a spawned process; null otherwise (a worker thread's comes from its boot record). */
let parent: Intercomm | null = null;
/** A worker thread took its parent intercommunicator from its boot record. */
let parentRevived = false;
/** Processes this one learned the addresses of after init (its own world's are known from init: DeviceOptions.knownProcesses). */
const learned = new Set<number>();
/** Ports this process opened and has not closed. */
const openPorts = new Set<string>();

/**
 * The intercommunicator to the parents in a process started by spawn; null in a job started by mpiexec (MPI_Comm_get_parent).
 * @example const parent = MPI.getParent(); if (parent !== null) await parent.send('hi', 0);
 */
export function getParent(): Intercomm | null {
  runtime('MPI.getParent');
  // An MPI.Worker thread of a spawned process: its creator's parent intercommunicator (worker.ts puts it in the boot record).
  if (!parentRevived) {
    parentRevived = true;
    const boot = workerBoot();
    if (boot !== null && boot.parent !== null) parent = revive(boot.parent) as Intercomm;
  }
  return parent;
}

/**
 * The wire-up client's dynamic requests: on the main thread of a process started by mpiexec its own,
 * on an MPI.Worker thread the main thread's (runtime/dynamic-relay.ts).
 */
function dynamicClient(rt: ThreadRuntime, call: string): NonNullable<NonNullable<ThreadRuntime['pmi']>['dynamic']> {
  const pmi = rt.pmi;
  const relay = rt.device.opts.threadId !== 0 ? dynamicRelay() : null;
  if (relay !== null) return (c, op, args) => relay.ask(c, op, { ...args });
  if (pmi === null || pmi.dynamic === undefined) {
    throw mpiError(ERR_SPAWN, call, rt.device.opts.threadId !== 0
      ? 'this worker thread was not started by MPI.Worker, so no main thread carries out its dynamic-process calls'
      : 'dynamic processes need tsmpi\'s mpiexec (this process runs without it, or under a foreign launcher)');
  }
  return pmi.dynamic.bind(pmi);
}

// A worker thread's request, on the main thread: mpiexec's answer, or the reach of the new processes (which tells every worker thread).
serveWorkerRequests(async (call, op, args) => {
  const rt = runtime(call);
  if (op === 'reach') {
    await reach(rt, Int32Array.from(args['endpoints'] as number[]), call, args['coupled'] === true);
    return null;
  }
  if (op === 'release') {
    await releaseCoupled(rt, args['processes'] as number[]);
    return null;
  }
  return dynamicClient(rt, call)(call, op as DynOp, args);
});

// The root's answer as every rank receives it: 0 + the remote side, or 1 + [error class, message].
function okMessage(side: Uint8Array): Uint8Array {
  const m = new Uint8Array(side.length + 1);
  m.set(side, 1);
  return m;
}
function errorMessage(e: unknown, call: string): Uint8Array {
  const err = e instanceof MPIError ? e : mpiError(ERR_OTHER, call, (e as Error).message);
  const m = okMessage(new TextEncoder().encode(JSON.stringify(err.toWire())));
  m[0] = 1;
  return m;
}

/** What the root learns from mpiexec: the other group's side, and for another job's group the coupling to confirm ('coupled'). */
interface RemoteSide {
  readonly side: Uint8Array;
  readonly coupling?: number;
}

/** First byte of the root's answer for another job's group (0: this job's, 1: an error). */
const COUPLED = 2;

/** The root's error, as every rank reports it. */
function throwRootError(got: Uint8Array): void {
  if (got[0] === 1) throw MPIError.fromWire(JSON.parse(new TextDecoder().decode(got.subarray(1))) as { errorClass: number; call: string; message: string });
}

/**
 * Makes this process able to reach the processes of `endpoints` (their addresses from the job's store).
 * `coupled`: they are another job's (docs/adr/0043-connect-two-jobs.md); mpiexec put, with each one's
 * address, `pair:P` = the pair of jobs' key and the numbers the other job gave this group's processes.
 */
async function reach(rt: ThreadRuntime, endpoints: Int32Array, call: string, coupled: boolean): Promise<void> {
  const j = rt.device.opts.endpointsPerProcess;
  const known = rt.device.opts.knownProcesses;
  const wanted = [...new Set(Array.from(endpoints, (e) => Math.floor(e / j)))].filter((p) => known !== undefined && (p < known.first || p >= known.end) && !learned.has(p));
  if (wanted.length === 0) return;
  // A worker thread: the main thread learns them and tells every worker thread, this one included, before it answers.
  const relay = rt.device.opts.threadId !== 0 ? dynamicRelay() : null;
  if (relay !== null) {
    await relay.ask(call, 'reach', { endpoints: Array.from(endpoints), coupled });
    for (const p of wanted) learned.add(p);
    return;
  }
  const addresses = new Array<string>(rt.device.opts.processCount).fill('');
  const engines = rt.engines;
  if (engines === null) {
    await Promise.all(wanted.map(async (p) => {
      addresses[p] = await peerAddress(rt.pmi!, p, null, call, ERR_SPAWN);
    }));
  }
  // Threads/engines progress: each channel's engine (and this thread's direct route to that channel) learns the new processes' engine of that channel.
  const perChannel = engines === null ? null : await Promise.all(engines.addresses.map(async (_, c) => {
    const list = new Array<string>(rt.device.opts.processCount).fill('');
    await Promise.all(wanted.map(async (p) => {
      list[p] = await peerAddress(rt.pmi!, p, c, call, ERR_SPAWN);
    }));
    return list;
  }));
  const foreign = coupled ? await coupledPeers(rt, wanted, call) : undefined;
  if (perChannel !== null) await engines!.addPeers(perChannel, foreign);
  if (!rt.device.addPeers(addresses, perChannel, foreign)) throw mpiError(ERR_SPAWN, call, 'this transport cannot reach processes that joined the job later');
  // The MPI.Worker threads' own connections too (runtime/worker-peers.ts), answered before the call
  // returns; a coupled job's processes with their pair keys (docs/adr/0043).
  await workerPeers()?.announce(addresses, perChannel, foreign === undefined ? {} : { coupled: foreign });
  for (const p of wanted) learned.add(p);
}

/**
 * Another job's processes `wanted` as mpiexec put them (`pair:P`, docs/adr/0043): the pair key, this
 * process's number in that job, theirs there, and, when that job runs channel engines, each channel's address.
 */
async function coupledPeers(rt: ThreadRuntime, wanted: readonly number[], call: string): Promise<Map<number, ForeignPeer>> {
  const me = rt.device.opts.process;
  const foreign = new Map<number, ForeignPeer>();
  await Promise.all(wanted.map(async (p) => {
    const pair = JSON.parse(await rt.pmi!.get(`pair:${p}`)) as { key: string; as: Record<string, number>; is?: number; channels?: unknown };
    const asProcess = pair.as[String(me)];
    if (typeof pair.key !== 'string' || typeof asProcess !== 'number') throw mpiError(ERR_PORT, call, `mpiexec gave no number for process ${me} in the other job`);
    const channels = Array.isArray(pair.channels) && pair.channels.every((a) => typeof a === 'string') ? (pair.channels as string[]) : undefined;
    foreign.set(p, { key: pair.key, asProcess, ...(Number.isInteger(pair.is) ? { theirProcess: pair.is } : {}), ...(channels === undefined ? {} : { channelAddresses: channels }) });
  }));
  return foreign;
}

/**
 * The common part: a context id over `comm`, the root's exchange through mpiexec, the answer
 * broadcast, the Intercomm built. `atRoot` gets this group's side and returns the other's.
 */
function exchangeSides(comm: Comm, call: string, root: number, name: string, atRoot: (side: Uint8Array) => Promise<RemoteSide>): Promise<Intercomm> {
  comm._me(call);
  if (comm.isInter) throw mpiError(ERR_COMM, call, `${comm.name} is an intercommunicator: ${call} is called on an intracommunicator`);
  if (!Number.isInteger(root) || root < 0 || root >= comm.size) throw mpiError(ERR_ROOT, call, `root ${String(root)} is out of range for ${comm.name} (size ${comm.size}): expected 0..${comm.size - 1}`);
  const rt = runtime(call);
  dynamicClient(rt, call);
  const c = comm._beginCreation(call);
  const [coll, priority, wtag] = comm._creationCollectives(call);
  const pt = new CommCollPt2pt(comm, call);
  const local = comm._endpoints;
  return comm._collBlocking(call, (async () => {
    const ctx = await allocateContextId(c.state, comm._ctx, priority, coll, c.options);
    let remote: { ctx: number; endpoints: Int32Array };
    try {
      let msg: Uint8Array | null = null;
      let coupling: number | undefined;
      if (comm.rank === root) {
        try {
          const answer = await atRoot(encodeSide(ctx, local));
          coupling = answer.coupling;
          msg = okMessage(answer.side);
          if (coupling !== undefined) msg[0] = COUPLED;
        } catch (e) {
          msg = errorMessage(e, call);
        }
      }
      const got = await bcastBytes(pt, wtag, msg, root);
      throwRootError(got);
      remote = decodeSide(got.subarray(1));
      const coupled = got[0] === COUPLED;
      if (!coupled) {
        await reach(rt, remote.endpoints, call, false);
      } else {
        // Another job's group: every process of both groups takes the other's pair key before any frame
        // crosses (a HELLO with it would be refused before): installed here, then the two roots meet again.
        let ok: Uint8Array = okMessage(new Uint8Array(0));
        try {
          await reach(rt, remote.endpoints, call, true);
        } catch (e) {
          ok = errorMessage(e, call);
        }
        const all = await gatherBytes(pt, wtag, ok, root);
        let after: Uint8Array | null = null;
        if (comm.rank === root) {
          try {
            const bad = all!.find((m) => m[0] !== 0);
            await dynamicClient(rt, call)(call, 'coupled', { coupling, ok: bad === undefined });
            after = bad ?? okMessage(new Uint8Array(0));
          } catch (e) {
            after = errorMessage(e, call);
          }
        }
        throwRootError(await bcastBytes(pt, wtag, after, root));
      }
    } catch (e) {
      freeContextId(c.state, ctx);
      throw e;
    }
    return Comm._makeWith(c, name, ctx, local, null, (n, x, e) => new Intercomm(n, x, e, remote.endpoints, remote.ctx)) as Intercomm;
  })());
}

function rootOf(opts: DynamicOptions | undefined): number {
  return opts?.root ?? 0;
}

/** A command's request for mpiexec, checked at the root. */
function commandRequest(cmd: SpawnCommand, call: string, what: string): Record<string, unknown> {
  if (typeof cmd !== 'object' || cmd === null) throw mpiError(ERR_ARG, call, `${what} is ${describe(cmd)}: expected { command, args?, maxprocs, info? }`);
  const { command, args = [], maxprocs, info } = cmd;
  if (typeof command !== 'string' || command === '') throw mpiError(ERR_SPAWN, call, `${what}.command is ${describe(command)}: expected a program path`);
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw mpiError(ERR_ARG, call, `${what}.args is ${describe(args)}: expected an array of strings`);
  const universe = Math.max(1, runtime(call).device.opts.processCount);
  if (typeof maxprocs !== 'number' || !Number.isInteger(maxprocs) || maxprocs < 1 || maxprocs > universe) {
    throw mpiError(ERR_SPAWN, call, `${what}.maxprocs ${describe(maxprocs)} is out of range: expected 1..${universe} (UNIVERSE_SIZE)`);
  }
  const req: Record<string, unknown> = { command, args: [...args], maxprocs };
  if (info !== undefined) {
    if (!(info instanceof Info)) throw mpiError(ERR_ARG, call, `${what}.info is ${describe(info)}: expected an Info`);
    for (const key of ['host', 'wdir', 'path', 'hostfile']) {
      const v = info.get(key);
      if (v !== undefined) req[key] = v;
    }
  }
  return req;
}

function spawnWith(comm: Comm, call: string, commands: () => Record<string, unknown>[], opts: DynamicOptions | undefined): Promise<Intercomm> {
  const rt = runtime(call);
  return exchangeSides(comm, call, rootOf(opts), `${comm.name}.spawn`, async (side) => {
    // `progress`: the children's progress auto follows it (config/job-env.ts parentProgress).
    const value = (await dynamicClient(rt, call)(call, 'spawn', { commands: commands(), side, progress: rt.progress })) as { side: Uint8Array };
    return { side: value.side };
  });
}

function spawn(this: Comm, command: string, args: readonly string[], maxprocs: number, opts?: DynamicOptions): Promise<Intercomm> {
  const call = 'Comm.spawn';
  return spawnWith(this, call, () => [commandRequest({ command, args, maxprocs, ...(opts?.info === undefined ? {} : { info: opts.info }) }, call, 'command')], opts);
}

function spawnMultiple(this: Comm, commands: readonly SpawnCommand[], opts?: DynamicOptions): Promise<Intercomm> {
  const call = 'Comm.spawnMultiple';
  return spawnWith(this, call, () => {
    if (!Array.isArray(commands) || commands.length === 0) throw mpiError(ERR_ARG, call, `commands is ${describe(commands)}: expected a non-empty array of { command, args?, maxprocs, info? }`);
    return commands.map((c, i) => commandRequest(c, call, `commands[${i}]`));
  }, opts);
}

function checkPort(port: unknown, call: string): string {
  if (typeof port !== 'string' || port === '') throw mpiError(ERR_PORT, call, `port is ${describe(port)}: expected a port name from MPI.openPort`);
  return port;
}

/** A connect's info key `timeout` (seconds to wait for an accept, as MPICH's), checked at the root; undefined: mpiexec's default. */
function connectTimeout(info: Info | undefined, call: string): number | undefined {
  if (info === undefined) return undefined;
  if (!(info instanceof Info)) throw mpiError(ERR_ARG, call, `info is ${describe(info)}: expected an Info`);
  const text = info.get('timeout');
  if (text === undefined) return undefined;
  const s = Number(text);
  if (text.trim() === '' || !(s > 0 && s <= 86_400)) throw mpiError(ERR_INFO_VALUE, call, `info key timeout is "${text}": expected seconds, 0 < timeout <= 86400`);
  return s;
}

function meet(comm: Comm, op: 'accept' | 'connect', port: string, opts: DynamicOptions | undefined): Promise<Intercomm> {
  const call = op === 'accept' ? 'Comm.accept' : 'Comm.connect';
  const rt = runtime(call);
  return exchangeSides(comm, call, rootOf(opts), `${comm.name}.${op}`, async (side) => {
    const timeout = op === 'connect' ? connectTimeout(opts?.info, call) : undefined;
    // `engines`: this process runs channel engines (asked of the progress mode: an MPI.Worker thread's runtime holds no Engines;
    // a coupling needs free universe slots, so the universe is above 1 and engines run under threads/engines progress).
    const request = { port: checkPort(port, call), side, engines: rt.progress !== 'inline', j: rt.device.opts.endpointsPerProcess, channels: rt.device.opts.channels, ...(timeout === undefined ? {} : { timeout }) };
    return (await dynamicClient(rt, call)(call, op, request)) as RemoteSide;
  });
}

function accept(this: Comm, port: string, opts?: DynamicOptions): Promise<Intercomm> {
  return meet(this, 'accept', port, opts);
}

function connect(this: Comm, port: string, opts?: DynamicOptions): Promise<Intercomm> {
  return meet(this, 'connect', port, opts);
}

async function disconnect(this: Comm): Promise<void> {
  const call = 'Comm.disconnect';
  this._me(call);
  // MPI_Comm_disconnect waits for the communicator's pending traffic: a barrier, then the free.
  await this.barrier();
  // Another job's group (docs/adr/0043): from now on the two are independent (MPI 4.0 11.10.4), so the end of
  // one of its processes fails nothing here; the root tells mpiexec, which stops passing failures either way.
  const rt = runtime(call);
  const coupled = this instanceof Intercomm ? [...new Set(Array.from(this._peers, (e) => Math.floor(e / rt.device.opts.endpointsPerProcess)))].filter((p) => rt.device.coupled.has(p)) : [];
  if (coupled.length > 0) {
    // Every thread and engine of the process (an MPI.Worker thread's disconnect: its main thread tells them).
    const relay = rt.device.opts.threadId !== 0 ? dynamicRelay() : null;
    rt.device.coupled.release(coupled);
    if (relay !== null) await relay.ask(call, 'release', { processes: coupled });
    else await releaseCoupled(rt, coupled);
  }
  const isRoot = this.rank === 0;
  if (this === parent) parent = null;
  this.free();
  if (coupled.length > 0 && isRoot) await dynamicClient(rt, call)(call, 'decoupled', { processes: coupled });
}

/** The main thread: another job's processes `procs` are released in this thread, the engines and every MPI.Worker thread. */
async function releaseCoupled(rt: ThreadRuntime, procs: readonly number[]): Promise<void> {
  rt.device.coupled.release(procs);
  await rt.engines?.releaseCoupled(procs);
  await workerPeers()?.announce([], null, { released: procs });
}

for (const [name, fn] of [['spawn', spawn], ['spawnMultiple', spawnMultiple], ['accept', accept], ['connect', connect], ['disconnect', disconnect]] as const) {
  Object.defineProperty(Comm.prototype, name, { value: fn, writable: true, configurable: true, enumerable: false });
}

/** One request to mpiexec outside a collective (ports, names). */
function request(call: string, op: DynOp, args: Record<string, unknown>): Promise<unknown> {
  return dynamicClient(runtime(call), call)(call, op, args);
}

/**
 * Opens a port (MPI_Open_port): an opaque name mpiexec resolves, for accept and connect in any world of this job.
 * @example const port = await MPI.openPort(); await MPI.publishName('ocean', port);
 */
export async function openPort(info?: Info): Promise<string> {
  const call = 'MPI.openPort';
  if (info !== undefined && !(info instanceof Info)) throw mpiError(ERR_ARG, call, `info is ${describe(info)}: expected an Info`);
  const port = (await request(call, 'openPort', {})) as string;
  openPorts.add(port);
  return port;
}

/** Closes a port this process opened (MPI_Close_port); an accept waiting at it fails with ERR_PORT. @throws MPIError(ERR_PORT) for a port not open here */
export function closePort(port: string): void {
  const call = 'MPI.closePort';
  checkPort(port, call);
  if (!openPorts.has(port)) throw mpiError(ERR_PORT, call, `port "${port.replace(/:[0-9a-f]{32}$/, ':(secret)')}" is not open in this process (MPI.openPort opens one; a port is closed once)`);
  openPorts.delete(port);
  void request(call, 'closePort', { port }).catch((e: Error) => runtimeOrNull()?.log.warn({ err: e.message }, 'closePort'));
}

function checkService(service: unknown, call: string): string {
  if (typeof service !== 'string' || service === '') throw mpiError(ERR_NAME, call, `service is ${describe(service)}: expected a non-empty string`);
  return service;
}

/** Publishes `port` under `service` in the job's name service (MPI_Publish_name). @throws MPIError(ERR_SERVICE) when the service is already published */
export async function publishName(service: string, port: string): Promise<void> {
  const call = 'MPI.publishName';
  await request(call, 'publish', { service: checkService(service, call), port: checkPort(port, call) });
}

/** The port published under `service` (MPI_Lookup_name). @throws MPIError(ERR_NAME) when nobody published it */
export async function lookupName(service: string): Promise<string> {
  const call = 'MPI.lookupName';
  return (await request(call, 'lookup', { service: checkService(service, call) })) as string;
}

/** Withdraws `service` (MPI_Unpublish_name). @throws MPIError(ERR_SERVICE) when it is not published with `port` */
export async function unpublishName(service: string, port: string): Promise<void> {
  const call = 'MPI.unpublishName';
  await request(call, 'unpublish', { service: checkService(service, call), port: checkPort(port, call) });
}

/**
 * MPI.init in a spawned process (api/lifecycle.ts): the intercommunicator to the parents,
 * collective over the new COMM_WORLD; its rank 0 swaps sides with the spawn's root through mpiexec.
 */
export async function joinParent(): Promise<void> {
  const call = 'MPI.init';
  const rt = runtime(call);
  const spawnId = rt.job?.parentSpawn;
  if (spawnId === undefined) return;
  parent = await exchangeSides(COMM_WORLD, call, 0, 'COMM_PARENT', async (side) => {
    const value = (await dynamicClient(rt, call)(call, 'spawnJoin', { spawn: spawnId, side })) as { side: Uint8Array };
    return { side: value.side };
  });
}
