import { describe, expect, it } from 'vitest';
import { ObjectTable, OBJECT_KIND, handleIndex, handleKind, isPredefinedHandle } from './object-table.ts';

describe('ObjectTable', () => {
  it('encodes kind, predefined bit and index in the handle', () => {
    const t = new ObjectTable(ObjectTable.allocateBuffers(8, 1 << 16), true);
    const g = t.create(OBJECT_KIND.GROUP, true, [3], new Uint8Array(Int32Array.of(4, 5, 6).buffer), 'test');
    const c = t.create(OBJECT_KIND.COMM, false, [8, g], null, 'test');
    expect([handleKind(g), isPredefinedHandle(g), handleIndex(g)]).toEqual([OBJECT_KIND.GROUP, true, 1]);
    expect([handleKind(c), isPredefinedHandle(c), handleIndex(c)]).toEqual([OBJECT_KIND.COMM, false, 2]);
    expect([t.data(c, 0), t.data(c, 1)]).toEqual([8, g]);
    expect(Array.from(new Int32Array(t.blob(g).slice().buffer))).toEqual([4, 5, 6]);
    expect(t.liveCounts()[OBJECT_KIND.COMM]).toBe(1);
  });

  it('frees a record when its last reference goes, and reuses it', () => {
    const t = new ObjectTable(ObjectTable.allocateBuffers(4, 1 << 16), true);
    const a = t.create(OBJECT_KIND.DATATYPE, false, [], new Uint8Array(100), 'test');
    t.retain(a); // a pending request
    expect(t.userFree(a)).toBe(false);
    expect(t.isLive(a)).toBe(true);
    expect(t.isUserFreed(a)).toBe(true);
    expect(t.release(a)).toBe(true);
    expect(t.isLive(a)).toBe(false);
    const b = t.create(OBJECT_KIND.OP, false, [1], null, 'test');
    expect(handleIndex(b)).toBe(handleIndex(a));
  });

  it('gives a reused record a new handle (its generation): the old handle is neither live nor usable', () => {
    const t = new ObjectTable(ObjectTable.allocateBuffers(4, 1 << 16), true);
    const a = t.create(OBJECT_KIND.COMM, false, [32], null, 'test');
    expect([t.isLive(a), t.isUsable(a)]).toEqual([true, true]);
    t.retain(a); // a pending request
    t.userFree(a);
    expect([t.isLive(a), t.isUsable(a)]).toEqual([true, false]); // freed by its user, still referenced
    t.release(a);
    const b = t.create(OBJECT_KIND.COMM, false, [32], null, 'test');
    expect(handleIndex(b)).toBe(handleIndex(a));
    expect(b).not.toBe(a);
    expect([handleKind(b), isPredefinedHandle(b)]).toEqual([OBJECT_KIND.COMM, false]);
    expect([t.isLive(a), t.isUsable(a), t.isLive(b), t.isUsable(b)]).toEqual([false, false, true, true]);
    // The generation wraps after 1,024 reuses of one record.
    const seen = new Set<number>([b]);
    let h = b;
    for (let i = 1; i < 1024; i++) {
      t.release(h);
      h = t.create(OBJECT_KIND.COMM, false, [32], null, 'test');
      seen.add(h);
    }
    expect(seen.size).toBe(1024);
    t.release(h);
    expect(t.create(OBJECT_KIND.COMM, false, [32], null, 'test')).toBe(b);
    expect(t.isUsable(0)).toBe(false);
  });

  it('reports exhaustion as ERR_NO_MEM and stays usable', () => {
    const t = new ObjectTable(ObjectTable.allocateBuffers(3, 1 << 16), true);
    const h = [t.create(OBJECT_KIND.OP, false, [], null, 'x'), t.create(OBJECT_KIND.OP, false, [], null, 'x')];
    expect(() => t.create(OBJECT_KIND.OP, false, [], null, 'Op.create')).toThrow(/MPI_ERR_NO_MEM: Op.create/);
    t.release(h[0]!);
    expect(t.isLive(t.create(OBJECT_KIND.OP, false, [], null, 'x'))).toBe(true);
  });

  it('is shared: a second view over the same buffers sees the same records', () => {
    const bufs = ObjectTable.allocateBuffers(8, 1 << 16);
    const a = new ObjectTable(bufs, true);
    const h = a.create(OBJECT_KIND.COMM, false, [42], null, 'x');
    const b = new ObjectTable(bufs, false);
    expect(b.data(h, 0)).toBe(42);
    b.retain(h);
    expect(a.refCount(h)).toBe(2);
  });
});
