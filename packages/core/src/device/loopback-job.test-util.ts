/**
 * Test support for device/ (not exported from index.ts): simulated ranks in one
 * thread, each with its own shared state and Device, as separate processes
 * would have, connected by the loopback transport (no sockets, no child
 * processes), and small helpers to post sends and receives on them.
 *
 * simulatedJob: one device per process, one endpoint each (the protocols'
 * tests). simulatedProcesses: processes laid out as the send paths and
 * matchers need them (device-matrix.test.ts): receive lanes on a process's
 * main device, a second "user thread" device in a multithreaded process that
 * sends on its own connections (direct) or through the injection ring
 * (injected), several endpoints per process (local sends), a process whose
 * device has not started yet (start-hold.test.ts).
 */
import type { Logger } from '../log/index.ts';
import { createLoopbackFactory } from '../transport/kit.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { Device } from './device.ts';
import { SharedState } from './shared-state.ts';

export const silentLog = { child: () => silentLog, trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, isLevelEnabled: () => false } as unknown as Logger;
export const EAGER_LIMIT = 1024;
export const CTX = 32;

const started: Device[] = [];

/** Destroys every device simulatedJob or simulatedProcesses started (call it in afterEach). */
export function destroySimulated(): void {
  for (const d of started.splice(0)) d.destroy();
}

/** `ranks` started devices, one endpoint each, over one loopback network; `requestSlots` per rank (default 1024). */
export async function simulatedJob(ranks: number, requestSlots = 1024): Promise<Device[]> {
  const job = await simulatedProcesses(Array.from({ length: ranks }, () => ({})), { requestSlots });
  return job.main;
}

/** One simulated process of simulatedProcesses. */
export interface SimulatedProcess {
  /** receive lanes on its main device (DeviceOptions.lanes: only a single-threaded process with inline progress and one endpoint gets them) */
  readonly lanes?: boolean;
  /** a user thread's device besides the main one (the process is multithreaded): how it sends */
  readonly user?: 'direct' | 'injected';
  /** its main device listens but is not started: the test starts it (Device.start with SimulatedJob.addresses), as a process still in MPI.init */
  readonly unstarted?: boolean;
}

export interface SimulatedJob {
  /** per process: its main device, which hosts every channel */
  readonly main: Device[];
  /** per process: its user thread's device (thread 1, hosting nothing), or null */
  readonly user: (Device | null)[];
  /** what each main device's listen published (what an unstarted one's start takes) */
  readonly addresses: readonly string[];
}

/** Devices laid out as `processes` say, over one loopback network of one channel, started unless `unstarted`. */
export async function simulatedProcesses(
  processes: readonly SimulatedProcess[], o: { endpointsPerProcess?: number; requestSlots?: number } = {},
): Promise<SimulatedJob> {
  const n = processes.length;
  const J = o.endpointsPerProcess ?? 1;
  const factory = createLoopbackFactory(n, 1);
  const base = {
    processCount: n, endpointsPerProcess: J, eagerLimit: EAGER_LIMIT, channels: 1, jobKey: 'k', listenHost: '127.0.0.1',
    transportFactory: factory, log: silentLog, refcount: 'predefined' as const,
  };
  const states = processes.map((p) => SharedState.create({
    processCount: n, endpointsPerProcess: J, channels: 1, matching: 'parallel', requestSlots: o.requestSlots ?? 1024,
    multithreaded: p.user !== undefined, blockedSlotBytes: 4,
  }));
  const main = processes.map((p, i) => new Device({ ...base, process: i, threadId: 0, hosted: [0], statsRow: 0, lanes: p.lanes === true }, states[i]!));
  const addresses = (await Promise.all(main.map((d) => d.listen()))) as string[];
  main.forEach((d, i) => {
    if (processes[i]!.unstarted !== true) d.start(addresses);
  });
  started.push(...main);
  const user = processes.map((p, i) => {
    if (p.user === undefined) return null;
    // A worker's view of its process's shared memory, as MPI.Worker's boot attaches it.
    const d = new Device({ ...base, process: i, threadId: 1, hosted: [], statsRow: 1 }, SharedState.attach(states[i]!.buffers));
    d.start(null, p.user === 'direct' ? [{ channels: [0], addresses }] : []);
    started.push(d);
    return d;
  });
  return { main, user, addresses };
}

/** Resolves with r once it has completed. */
export function done(r: DevRequest): Promise<DevRequest> {
  return new Promise((resolve) => {
    if (r.done) resolve(r);
    else r.onComplete = resolve;
  });
}

/** Posts a receive of up to `bytes` bytes on endpoint `me`, as API call `call` would. */
export function recv(d: Device, me: number, src: number, tag: number, bytes: number, call?: string): DevRequest {
  const r = new DevRequest(REQ_KIND.RECV, call);
  r.buf = new Uint8Array(bytes);
  d.postRecv(r, me, CTX, src, tag);
  return r;
}

/** Sends `data` from endpoint `me`, as API call `call` would. */
export function send(d: Device, me: number, dst: number, tag: number, data: Uint8Array, sync = false, call?: string): DevRequest {
  const r = new DevRequest(REQ_KIND.SEND, call);
  d.send(r, me, dst, CTX, tag, data, false, sync);
  return r;
}
