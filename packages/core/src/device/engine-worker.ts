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
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { TransportFactory } from '../transport/index.ts';
import { createLogger } from '../log/index.ts';
import { schedYield } from '../util/index.ts';
import { EnginePoll } from './engine-poll.ts';
import { Device, type DeviceOptions } from './device.ts';
import { MAX_THREADS, SharedState, type SharedBuffers } from './shared-state.ts';

export interface EngineBoot {
  readonly shared: SharedBuffers;
  readonly channel: number;
  readonly transportModule: string;
  readonly logLevel: string;
  /** milliseconds the engine polls its sockets after a frame (engine-poll.ts); 0: it sleeps */
  readonly pollMs: number;
  readonly device: Omit<DeviceOptions, 'log' | 'transportFactory' | 'threadId' | 'hosted' | 'statsRow'>;
}

const boot = workerData as EngineBoot;
const port = parentPort!;
const log = createLogger(boot.logLevel, boot.device.process).child({ mod: 'engine', channel: boot.channel });
const mod = (await import(boot.transportModule)) as { createTransport: TransportFactory };
const shared = SharedState.attach(boot.shared);
const device = new Device(
  { ...boot.device, log, transportFactory: mod.createTransport, threadId: -1, hosted: [boot.channel], statsRow: MAX_THREADS + boot.channel },
  shared,
);
device.onFatal = (err, lostProcess) => port.postMessage({ type: 'fatal', message: err.message, lostProcess });
const yieldCore = boot.pollMs > 0 ? schedYield() : null;
const poll = yieldCore === null ? null : new EnginePoll(boot.pollMs, yieldCore);
if (poll !== null) device.onFrame = () => poll.touch();
// The engine lives until the main thread closes it; the main thread unrefs the Worker, so this never holds the process.
const keepAlive = setInterval(() => undefined, 1 << 30);
port.on('message', (m: { type: string; peers?: string[] }) => {
  if (m.type === 'start') {
    device.start(m.peers!);
  } else if (m.type === 'close') {
    poll?.stop();
    void device.close().then(() => {
      clearInterval(keepAlive);
      port.postMessage({ type: 'closed' });
      port.close();
    });
  }
});
port.postMessage({ type: 'listening', address: await device.listen() });
