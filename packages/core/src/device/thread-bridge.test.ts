// ThreadBridge at its limits: the largest injected frame, and a full injection ring whose host
// will never drain it (stopped, or the process failing) ends the wait with an MPIError.
import { describe, expect, it } from 'vitest';
import { newFrameHeader } from '../transport/index.ts';
import { ERR_OTHER, ERR_PROC_FAILED, MPIError } from '../util/index.ts';
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
    expect((err as MPIError).message).toMatch(/injection ring of channel 0 is full/);
  });
});
