// The route table in SharedState (docs/adr/0019): allocated only when the layout asks for
// endpoint readers, so the default (endpointReceive engine) carries nothing of it; when present,
// every thread's view (the buffers cross to workers by structured clone) sees the same words.
import { describe, expect, it } from 'vitest';
import { ROUTE_STATE, routeEpoch, routeState } from './route-table.ts';
import { MAX_THREADS, SharedState, type SharedLayout } from './shared-state.ts';

const BASE: SharedLayout = {
  processCount: 3, endpointsPerProcess: 2, channels: 1, matching: 'parallel', requestSlots: 64, multithreaded: false, blockedSlotBytes: 4,
};

describe('SharedState routes', () => {
  it('has no route table unless the layout asks for endpoint readers', () => {
    for (const layout of [BASE, { ...BASE, endpointReaders: false }]) {
      const shared = SharedState.create(layout);
      expect(shared.routes).toBeNull();
      expect(shared.buffers.routes).toBeNull();
      expect(SharedState.attach(structuredClone(shared.buffers)).routes).toBeNull();
    }
  });

  it('gives every thread the same table, sized for the job and every thread id', () => {
    const shared = SharedState.create({ ...BASE, endpointReaders: true });
    const table = shared.routes!;
    expect(table.layout).toEqual({ processCount: 3, endpointsPerProcess: 2, threads: MAX_THREADS });
    // Another thread's view: what postMessage hands a worker.
    const other = SharedState.attach(structuredClone(shared.buffers)).routes!;
    expect(other.claimReader(1, 5)).toBe(1);
    expect(table.readerOf(1)).toBe(5);
    expect(table.claimReader(1, 6)).toBe(-1);
    table.setRoute(5, 1, ROUTE_STATE.OPEN);
    expect(routeEpoch(other.route(5))).toBe(1);
    expect(routeState(other.route(5))).toBe(ROUTE_STATE.OPEN);
    // The last words (the last thread id's sender epoch towards the last endpoint) are in the buffer.
    other.setSenderEpoch(MAX_THREADS - 1, 5, 7);
    expect(table.senderEpoch(MAX_THREADS - 1, 5)).toBe(7);
    expect(table.senderEpoch(MAX_THREADS - 1, 4)).toBe(0);
  });
});
