// The three lifetime strategies (lifetime.ts) over simulated requests: a real
// object table in shared memory, DevRequests that never touch a socket, and two
// "threads" (two Lifetime rows over the same buffers).
import { describe, expect, it } from 'vitest';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { allocateLifetimeBuffers, CELLS_PER_THREAD, createLifetime, GC_THRESHOLD, REF_MODE, type RefcountStrategy } from './lifetime.ts';
import { ObjectTable, OBJECT_KIND } from './object-table.ts';

function setup(strategy: RefcountStrategy) {
  const objects = new ObjectTable(ObjectTable.allocateBuffers(1024, 1 << 16), true);
  const buffers = allocateLifetimeBuffers(4, objects.capacity);
  const destroyed: number[] = [];
  objects.onDestroy = (h) => destroyed.push(h);
  const t0 = createLifetime(strategy, objects, buffers, 0);
  const t1 = createLifetime(strategy, objects, buffers, 1);
  const world = objects.create(OBJECT_KIND.COMM, true, [0, 0], null, 'init');
  return { objects, t0, t1, destroyed, world };
}

const request = (): DevRequest => new DevRequest(REQ_KIND.RECV);

describe.each(['naive', 'predefined', 'gc'] as const)('lifetime %s', (strategy) => {
  it('keeps a freed communicator while a request uses it, and destroys it after (at the next collection under gc)', () => {
    const { objects, t0, destroyed } = setup(strategy);
    const comm = t0.create(OBJECT_KIND.COMM, [32, 0], null, 'test');
    const r = request();
    t0.acquire(r, comm, 0, 0);
    t0.userFree(comm);
    expect(t0.collect()).toBe(0);
    expect(objects.isLive(comm)).toBe(true);
    expect(destroyed).toEqual([]);
    t0.releaseRequest(r);
    t0.collect();
    expect(objects.isLive(comm)).toBe(false);
    expect(destroyed).toEqual([comm]);
    expect(t0.liveRequests()).toBe(0);
  });

  it('a request completed in one thread and a free in another: the object goes exactly once', () => {
    const { objects, t0, t1, destroyed } = setup(strategy);
    const type = t0.create(OBJECT_KIND.DATATYPE, [], new Uint8Array(8), 'test');
    const op = t0.create(OBJECT_KIND.OP, [0, 1], null, 'test');
    const reqs = Array.from({ length: 10 }, () => request());
    for (const r of reqs) t1.acquire(r, 0, type, op);
    expect(t0.liveRequests()).toBe(10);
    t0.userFree(type);
    t0.userFree(op);
    for (const r of reqs.slice(0, 9)) t1.releaseRequest(r);
    t0.collect();
    expect(objects.isLive(type) && objects.isLive(op)).toBe(true);
    t1.releaseRequest(reqs[9]!);
    t0.collect();
    t1.collect();
    expect(destroyed.sort()).toEqual([type, op].sort());
  });

  it('never destroys predefined objects, and counts them only in naive', () => {
    const { objects, t0, world } = setup(strategy);
    const before = objects.refCount(world);
    const r = request();
    t0.acquire(r, world, 0, 0);
    expect(objects.refCount(world) - before).toBe(strategy === 'naive' ? 1 : 0);
    t0.releaseRequest(r);
    expect(objects.refCount(world)).toBe(before);
  });

  it('a non-transient reference (persistent request, Message) outlives the user free', () => {
    const { objects, t0, destroyed } = setup(strategy);
    const comm = t0.create(OBJECT_KIND.COMM, [32, 0], null, 'test');
    t0.retain(comm);
    t0.userFree(comm);
    t0.collect();
    expect(objects.isLive(comm)).toBe(true);
    t0.release(comm);
    t0.collect();
    expect(destroyed).toEqual([comm]);
  });
});

describe('lifetime gc', () => {
  it('starts GC-managed objects at 2, groups at 1, and touches no count for a request', () => {
    const { objects, t0 } = setup('gc');
    const comm = t0.create(OBJECT_KIND.COMM, [32, 0], null, 'test');
    const group = t0.create(OBJECT_KIND.GROUP, [1], new Uint8Array(4), 'test');
    expect([objects.refCount(comm), objects.refCount(group)]).toEqual([2, 1]);
    const r = request();
    t0.acquire(r, comm, 0, 0);
    expect(r.refMode).toBe(REF_MODE.CELL);
    expect(objects.refCount(comm)).toBe(2);
    t0.userFree(comm);
    expect(objects.refCount(comm)).toBe(1);
    expect(t0.eligibleCount()).toBe(1);
    t0.userFree(group);
    expect(objects.isLive(group)).toBe(false);
    t0.releaseRequest(r);
  });

  it('marks over every thread\'s cells, keeps marked objects eligible, sweeps the rest, and counts cycles', () => {
    const { objects, t0, t1, destroyed } = setup('gc');
    const comms = Array.from({ length: 6 }, (_, i) => t0.create(OBJECT_KIND.COMM, [32 + 4 * i, 0], null, 'test'));
    const pending = [request(), request()];
    t1.acquire(pending[0]!, comms[1]!, 0, 0);
    t0.acquire(pending[1]!, comms[4]!, 0, 0);
    for (const c of comms) t0.userFree(c);
    expect(t0.eligibleCount()).toBe(6);
    expect(t1.collect()).toBe(4);
    expect(destroyed.sort()).toEqual([comms[0], comms[2], comms[3], comms[5]].sort());
    expect(t0.eligibleCount()).toBe(2);
    expect(t0.gcCycles()).toBe(1);
    t1.releaseRequest(pending[0]!);
    t0.releaseRequest(pending[1]!);
    expect(t0.collect()).toBe(2);
    expect(objects.isLive(comms[1]!) || objects.isLive(comms[4]!)).toBe(false);
    expect(t0.collect()).toBe(0); // nothing eligible: no cycle
    expect(t0.gcCycles()).toBe(2);
  });

  it('collects at creation once the eligible set reaches the threshold', () => {
    const { t0 } = setup('gc');
    for (let i = 0; i < GC_THRESHOLD; i++) t0.userFree(t0.create(OBJECT_KIND.DATATYPE, [], null, 'test'));
    expect(t0.eligibleCount()).toBe(GC_THRESHOLD);
    t0.create(OBJECT_KIND.DATATYPE, [], null, 'test');
    expect(t0.eligibleCount()).toBe(0);
    expect(t0.gcCycles()).toBe(1);
  });

  it('falls back to counts when a thread has no free cell, and stays correct', () => {
    const { objects, t0, destroyed } = setup('gc');
    const comm = t0.create(OBJECT_KIND.COMM, [32, 0], null, 'test');
    const reqs = Array.from({ length: CELLS_PER_THREAD + 3 }, () => request());
    for (const r of reqs) t0.acquire(r, comm, 0, 0);
    expect(reqs.filter((r) => r.refMode === REF_MODE.COUNTED).length).toBe(3);
    expect(objects.refCount(comm)).toBe(5);
    t0.userFree(comm);
    for (const r of reqs.slice(0, CELLS_PER_THREAD)) t0.releaseRequest(r);
    t0.collect();
    expect(objects.isLive(comm)).toBe(true);
    for (const r of reqs.slice(CELLS_PER_THREAD)) t0.releaseRequest(r);
    expect(t0.eligibleCount()).toBe(1);
    t0.collect();
    expect(destroyed).toEqual([comm]);
  });

  it('a recycled thread id starts with clean cells: requests of a thread that died keep nothing alive', () => {
    const { objects, destroyed } = setup('gc');
    const buffers = allocateLifetimeBuffers(4, objects.capacity);
    const dead = createLifetime('gc', objects, buffers, 2);
    const comm = dead.create(OBJECT_KIND.COMM, [32, 0], null, 'test');
    dead.acquire(request(), comm, 0, 0);
    dead.userFree(comm);
    const reborn = createLifetime('gc', objects, buffers, 2);
    expect(reborn.liveRequests()).toBe(0);
    reborn.collect();
    expect(destroyed).toEqual([comm]);
  });
});
