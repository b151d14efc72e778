// ThreadBridge at its limits: the largest injected frame, and a full injection ring whose host
// will never drain it (stopped, or the process failing) ends the wait with an MPIError; and an
// engine's completions, whose doorbells ring once per owner and batch.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { newFrameHeader } from '../transport/index.ts';
import { ERR_INTERN, ERR_OTHER, ERR_PROC_FAILED, MPIError } from '../util/index.ts';
import { SharedState } from './shared-state.ts';
import { ThreadBridge } from './thread-bridge.ts';

function multithreadedState(): SharedState {
  return SharedState.create({
    processCount: 2, endpointsPerProcess: 1, channels: 1, matching: 'parallel', requestSlots: 1024, multithreaded: true, blockedSlotBytes: 4,
  });
}

/** Injects frames of `bytes` until `inject` throws; returns the error (the ring is never drained). */
function injectUntilThrow(bridge: ThreadBridge, bytes: number): unknown {
  const h = newFrameHeader();
  const payload = new Uint8Array(bytes);
  try {
    for (let i = 0; i < 1000; i++) bridge.inject(0, 1, h, payload);
  } catch (e) {
    return e;
  }
  return null;
}

describe('ThreadBridge limits', () => {
  it('takes frames of up to a quarter of the injection ring', () => {
    const shared = multithreadedState();
    const bridge = new ThreadBridge(shared);
    expect(bridge.maxInjectBytes).toBe(shared.injectionRingBytes / 4 - 44);
    const ring = shared.injection(0);
    bridge.inject(0, 1, newFrameHeader(), new Uint8Array(bridge.maxInjectBytes));
    let length = -1;
    ring.drain((_off, len) => (length = len));
    expect(length).toBe(bridge.maxInjectBytes + 44);
  });

  it('fails a producer waiting on a full ring once the process is failing', () => {
    const shared = multithreadedState();
    const bridge = new ThreadBridge(shared);
    const full = shared.injection(0);
    while (full.tryPush(new Int32Array(11), 11, new Uint8Array(64 << 10)));
    shared.markFailed(ERR_PROC_FAILED);
    const err = injectUntilThrow(bridge, 1024);
    expect(err).toBeInstanceOf(MPIError);
    expect((err as MPIError).errorClass).toBe(ERR_PROC_FAILED);
    expect((err as MPIError).call).toBe('progress');
  });

  it('fails a producer waiting on a full ring whose host has stopped', () => {
    const shared = multithreadedState();
    const host = new ThreadBridge(shared);
    host.serveInjection(0, () => undefined);
    host.stop();
    const producer = new ThreadBridge(shared);
    // The stopped host drains no more: the ring fills, then the producer is told why it cannot go on.
    const err = injectUntilThrow(producer, 256 << 10);
    expect(err).toBeInstanceOf(MPIError);
    expect((err as MPIError).errorClass).toBe(ERR_OTHER);
    expect((err as MPIError).message).toMatch(/injection ring of channel 0 is closed: the thread that drains it has stopped/);
  });

  it('refuses a frame at once, not silently, when the ring is closed but has room (its host died)', () => {
    const shared = multithreadedState();
    const producer = new ThreadBridge(shared);
    producer.inject(0, 1, newFrameHeader(), new Uint8Array(16));
    // A channel engine dying from an uncaught exception marks the process failed and closes its ring (engine-worker.ts).
    shared.markFailed(ERR_INTERN);
    shared.injection(0).close();
    const err = injectUntilThrow(producer, 16);
    expect(err).toBeInstanceOf(MPIError);
    expect((err as MPIError).errorClass).toBe(ERR_INTERN);
    expect((err as MPIError).message).toMatch(/injection ring of channel 0 is closed: the thread that drains it has stopped and the process is failing/);
    let records = 0;
    shared.injection(0).drain(() => records++);
    expect(records).toBe(1); // only the frame from before the close
  });
});

describe('ThreadBridge doorbells of a channel engine (batchDoorbells)', () => {
  it('rings each owner once after the synchronous batch, with every slot in its ring in order', async () => {
    const shared = multithreadedState();
    const engine = new ThreadBridge(shared, true);
    const before = [shared.completion(1).doorbell(), shared.completion(2).doorbell()];
    for (const [owner, slot] of [[1, 10], [2, 20], [1, 11], [1, 12], [2, 21]] as const) engine.complete(owner, slot);
    // Pushed but not rung until the batch's code has returned.
    expect([shared.completion(1).doorbell(), shared.completion(2).doorbell()]).toEqual(before);
    await Promise.resolve();
    expect([shared.completion(1).doorbell(), shared.completion(2).doorbell()]).toEqual([before[0]! + 1, before[1]! + 1]);
    const slots = (owner: number): number[] => {
      const ring = shared.completion(owner);
      const got: number[] = [];
      ring.drain((off) => got.push(ring.words[off >>> 2]!));
      return got;
    };
    expect(slots(1)).toEqual([10, 11, 12]);
    expect(slots(2)).toEqual([20, 21]);
    // The next batch rings again.
    engine.complete(1, 13);
    await Promise.resolve();
    expect(shared.completion(1).doorbell()).toBe(before[0]! + 2);
  });

  it('rings every completion at once in a user thread', () => {
    const shared = multithreadedState();
    const user = new ThreadBridge(shared);
    const before = shared.completion(1).doorbell();
    user.complete(1, 10);
    user.complete(1, 11);
    expect(shared.completion(1).doorbell()).toBe(before + 2);
  });

  it('rings what it owes before it sleeps on a full completion ring, so an owner asleep on the doorbell drains it', async () => {
    const shared = multithreadedState();
    const owner = shared.completion(1);
    // More slots than the ring holds, in one synchronous batch: the engine must wait for space mid-batch.
    const total = (owner.capacity / 8) * 2 + 5;
    // The engine runs in a thread of its own, as in a process: were it to wait for ever, this test would time out.
    const body = `
      import('node:worker_threads').then(async ({ workerData, parentPort }) => {
        const { register } = await import('tsx/esm/api');
        register();
        const { SharedState } = await import(workerData.state);
        const { ThreadBridge } = await import(workerData.bridge);
        const engine = new ThreadBridge(SharedState.attach(workerData.buffers), true);
        for (let slot = 0; slot < workerData.total; slot++) engine.complete(1, slot);
        parentPort.postMessage('pushed');
      });
    `;
    const worker = new Worker(body, {
      eval: true,
      workerData: {
        buffers: shared.buffers, total,
        state: new URL('./shared-state.ts', import.meta.url).href, bridge: new URL('./thread-bridge.ts', import.meta.url).href,
      },
    });
    let next = 0;
    let inOrder = true;
    while (next < total) {
      const seen = owner.doorbell();
      owner.drain((off) => {
        if (owner.words[off >>> 2] !== next) inOrder = false;
        next++;
      });
      if (next < total) await owner.waitAsync(seen); // only the doorbell wakes this owner
    }
    expect(next).toBe(total);
    expect(inOrder).toBe(true);
    await worker.terminate();
  }, 60_000);
});
