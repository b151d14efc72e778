import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Ring } from './ring.ts';

describe('Ring', () => {
  it('passes records in order, wrapping around the end', () => {
    const r = Ring.create(256);
    const got: number[] = [];
    for (let round = 0; round < 50; round++) {
      for (let k = 0; k < 3; k++) {
        const bytes = new Uint8Array(round % 17).fill(k);
        expect(r.tryPush(Int32Array.of(round, k), 2, bytes)).toBe(true);
      }
      r.drain((off, len) => {
        got.push(r.words[off >>> 2]! * 10 + r.words[(off >>> 2) + 1]!);
        expect(len).toBe(8 + (round % 17));
        const b = r.bytes.subarray(off + 8, off + len);
        expect(b.every((x) => x === r.words[(off >>> 2) + 1])).toBe(true);
      });
    }
    expect(got.length).toBe(150);
    expect(got.slice(0, 6)).toEqual([0, 1, 2, 10, 11, 12]);
    expect(r.isEmpty()).toBe(true);
  });

  it('refuses a record when full and accepts it after a drain', () => {
    const r = Ring.create(64);
    let pushed = 0;
    while (r.tryPush(Int32Array.of(pushed), 1, null)) pushed++;
    expect(pushed).toBeGreaterThan(3);
    expect(r.drain(() => undefined)).toBe(pushed);
    expect(r.tryPush(Int32Array.of(1), 1, null)).toBe(true);
  });

  it('keeps each producer thread in order with 4 producers', async () => {
    const r = Ring.create(1 << 12);
    const N = 5000;
    // Plain-JS worker body: registers tsx so it can import ring.ts.
    const body = `
      import('node:worker_threads').then(async ({ workerData }) => {
        const { register } = await import('tsx/esm/api');
        register();
        const { Ring } = await import(workerData.url);
        const ring = new Ring(workerData.buffer);
        const w = new Int32Array(2);
        for (let i = 0; i < ${N}; i++) { w[0] = workerData.id; w[1] = i; while (!ring.tryPush(w, 2, null)) {} }
      });
    `;
    const url = new URL('./ring.ts', import.meta.url).href;
    const workers = [0, 1, 2, 3].map((id) => new Worker(body, { eval: true, workerData: { buffer: r.buffer, id, url } }));
    const next = [0, 0, 0, 0];
    let total = 0;
    const exited = Promise.all(workers.map((w) => new Promise((res) => w.on('exit', res))));
    let done = false;
    void exited.then(() => (done = true));
    while (!done || !r.isEmpty()) {
      r.drain((off) => {
        const id = r.words[off >>> 2]!;
        expect(r.words[(off >>> 2) + 1]).toBe(next[id]);
        next[id]!++;
        total++;
      });
      await new Promise((res) => setImmediate(res));
    }
    expect(total).toBe(4 * N);
  }, 60_000);
});
