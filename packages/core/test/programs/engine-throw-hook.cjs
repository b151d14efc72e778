/**
 * Test-only fault injection for a channel engine (issue 17; packages/launcher/test/faults.it.test.ts,
 * docs/RELIABILITY.md sections 1 and 5): a module the test preloads into every thread of a rank with
 * TSMPI_RANK_NODE_FLAGS='--require=<this file>' (CommonJS: Node runs --require preloads in worker
 * threads too, --import ones only in the main thread). Production code knows nothing of it.
 *
 * TSMPI_TEST_ENGINE_THROW=RANK:CHANNEL:MS makes that rank's engine of that channel throw an uncaught
 * exception MS ms after the main thread started it, as a bug in tsmpi would; the engine's own
 * handler (engine-worker.ts `die`) takes it. RANK:CHANNEL:MS:locked makes it throw holding the
 * matching-queue lock of source 1 on local endpoint 0, as a throw inside that locked section would
 * leave it: the hook writes the engine's holder id into the lock word (the queue buffer's lock words
 * are its last sources + 1, match-queues.ts). RANK:CHANNEL:MS:locked-exit takes the same lock and
 * ends the engine's thread at once (process.exit in a worker), as terminate() or running out of
 * memory would: no code of the engine runs after it, so only the kernel can tell a thread that
 * spins on the lock.
 */
'use strict';
const { isMainThread, parentPort, workerData } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const path = require('node:path');

const spec = process.env.TSMPI_TEST_ENGINE_THROW;
// A channel engine's workerData is its EngineBoot (engine-worker.ts): the channel and the transport module.
const boot = isMainThread ? null : workerData;
const isEngine = boot !== null && typeof boot === 'object' && typeof boot.channel === 'number' && typeof boot.transportModule === 'string';
if (spec !== undefined && isEngine) {
  const fields = spec.split(':');
  const [rank, channel, ms] = fields.map(Number);
  const how = fields[3];
  if (rank === boot.device.process && channel === boot.channel) {
    // The main thread sends 'start' once every engine listens (engines.ts startChannel): the clock starts there.
    parentPort.on('message', (m) => {
      if (m === null || typeof m !== 'object' || m.type !== 'start') return;
      setTimeout(() => void fail(how, channel), ms || 0);
    });
  }
}

async function fail(how, channel) {
  const locked = how === 'locked' || how === 'locked-exit';
  if (locked) {
    // The engine's holder id (shm/spin-lock.ts setLockHolder: its statistics row + 1). The engine thread
    // registered the TypeScript loader before the main thread could send 'start', so the source imports.
    const sharedState = pathToFileURL(path.resolve(__dirname, '../../src/device/shared-state.ts')).href;
    const { engineStatsRow } = await import(sharedState);
    const holder = engineStatsRow(boot.channel) + 1;
    const words = new Int32Array(boot.shared.queues[0]);
    const sources = boot.shared.layout.processCount * boot.shared.layout.endpointsPerProcess;
    // The lock words are the buffer's last sources + 1 (source s at the first of them + s): source 1's.
    const sourceOneLock = words.length - (sources + 1) + 1;
    while (Atomics.compareExchange(words, sourceOneLock, 0, holder) !== 0);
    if (how === 'locked-exit') process.exit(1);
  }
  // Thrown from a timer, not from this async function (a rejection): the engine's uncaughtException handler takes it.
  setImmediate(() => {
    throw new Error(`TSMPI_TEST_ENGINE_THROW: engine of channel ${channel} throws as asked${locked ? ', holding a matching-queue lock' : ''}`);
  });
}
