/**
 * A channel engine (DESIGN.md "Channels and progress", --progress threads):
 * a worker thread that owns the sockets of one channel, so progress on that
 * channel never waits for a user thread. It runs a Device that hosts channel
 * c: it serves the channel's injection ring (frames user threads queued),
 * parses incoming frames, matches them against the shared queues and
 * completes requests into their owners' completion rings.
 *
 * Messages with the thread that started it (engines.ts):
 *   engine -> main   { type: 'listening', address } | { type: 'closed' } | { type: 'fatal', message }
 *   main -> engine   { type: 'start', peers } | { type: 'close' }
 *   main -> engine   { type: 'add-peers', peers, coupled?, contextId }: processes that joined later (dynamic processes;
 *                    `coupled`: [process, ForeignPeer] of another job's, docs/adr/0043)
 *   main -> engine   { type: 'release-coupled', processes, contextId }: a coupled job's processes disconnected from
 *   engine -> main   { type: 'peers-added', contextId } (the answer to both)
 * Windows reach the engine through its process's window directory (rma-directory.ts), which it
 * opens before it listens.
 *
 * An uncaught exception or rejection in the engine (a bug in tsmpi, or user
 * code that runs here) ends its service of the channel, never silently: it
 * marks the process failed (ERR_INTERN) and closes the channel's injection
 * ring, so every thread waiting to push gets an MPIError naming the channel
 * instead of waiting forever, and reports 'fatal' to the main thread, which
 * prints a line naming the rank and the channel and exits. Its sockets close
 * with the process, not before: peers that saw them close first would fail
 * as having lost this rank before the launcher saw this rank fail, and be
 * blamed in its place.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { secureTransportFactory, type ForeignPeer, type TransportFactory } from '../transport/index.ts';
import { createLogger } from '../log/index.ts';
import type { LogFormat } from '../util/index.ts';
import { ERR_INTERN, schedYield } from '../util/index.ts';
import { EnginePoll } from './engine-poll.ts';
import { Device, type DeviceOptions } from './device.ts';
import { SharedState, engineStatsRow, type SharedBuffers } from './shared-state.ts';
import { directoryName } from './rma-directory.ts';

export interface EngineBoot {
  readonly shared: SharedBuffers;
  readonly channel: number;
  readonly transportModule: string;
  /** mpiexec --secure: the engine's transport runs TLS on its network connections (TransportOptions.secure). */
  readonly secure: boolean;
  readonly logLevel: string;
  /** The rank's log format (--log-format): the engine's records read like its main thread's. */
  readonly logFormat: LogFormat;
  /** milliseconds the engine polls its sockets after a frame (engine-poll.ts); 0: it sleeps */
  readonly pollMs: number;
  readonly device: Omit<DeviceOptions, 'log' | 'transportFactory' | 'threadId' | 'hosted' | 'statsRow'>;
}

const boot = workerData as EngineBoot;
const port = parentPort!;
const log = createLogger(boot.logLevel, boot.device.process, boot.logFormat).child({ mod: 'engine', channel: boot.channel });
const mod = (await import(boot.transportModule)) as { createTransport: TransportFactory };
const shared = SharedState.attach(boot.shared);
const device = new Device(
  { ...boot.device, log, transportFactory: boot.secure ? secureTransportFactory(mod.createTransport) : mod.createTransport, threadId: -1, hosted: [boot.channel], statsRow: engineStatsRow(boot.channel) },
  shared,
);
device.rma.openDirectory(boot.device.jobKey, boot.device.process, directoryName({ threadId: -1, hosted: [boot.channel] }));
device.onFatal = (err, lostProcess) => port.postMessage({ type: 'fatal', message: err.message, lostProcess });
let hasDied = false;
/** The engine threw and nothing caught it: stop serving the channel and say so (see the header). */
function die(err: unknown): void {
  if (hasDied) return;
  hasDied = true;
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  log.error({ err }, 'channel engine failed: uncaught exception');
  shared.markFailed(ERR_INTERN);
  // The thread lives on, but a shared spin lock it held when it threw is never released: threads spinning on one throw (shm/spin-lock.ts).
  shared.markEnded(engineStatsRow(boot.channel));
  shared.injection(boot.channel).close();
  port.postMessage({ type: 'fatal', message: `channel ${boot.channel}: uncaught exception in its engine thread (${what})`, lostProcess: null });
}
process.on('uncaughtException', die);
process.on('unhandledRejection', die);
const yieldCore = boot.pollMs > 0 ? schedYield() : null;
const poll = yieldCore === null ? null : new EnginePoll(boot.pollMs, yieldCore);
if (poll !== null) device.onFrame = () => poll.touch();
// The engine lives until the main thread closes it; the main thread unrefs the Worker, so this never holds the process.
const keepAlive = setInterval(() => undefined, 1 << 30);
port.on('message', (m: { type: string; peers?: string[]; coupled?: [number, ForeignPeer][]; processes?: number[]; contextId?: number }) => {
  if (m.type === 'start') {
    device.start(m.peers!);
  } else if (m.type === 'add-peers') {
    // Dynamic processes (engines.ts addPeers): this channel's addresses of processes that joined later.
    device.addPeers(m.peers!, null, m.coupled === undefined ? undefined : new Map(m.coupled));
    port.postMessage({ type: 'peers-added', contextId: m.contextId });
  } else if (m.type === 'release-coupled') {
    // After Comm.disconnect the end of those processes' connections fails nothing here (coupled-peers.ts).
    device.coupled.release(m.processes!);
    port.postMessage({ type: 'peers-added', contextId: m.contextId });
  } else if (m.type === 'close') {
    poll?.stop();
    void device.close().then(() => {
      clearInterval(keepAlive);
      device.rma.directory?.close();
      port.postMessage({ type: 'closed' });
      port.close();
    });
  }
});
port.postMessage({ type: 'listening', address: await device.listen() });

