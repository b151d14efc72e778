import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Ring } from './ring.ts';
import { WORKER_START_MS } from './worker-report.test-util.ts';
import { ERR_INTERN, MPIError } from '../util/index.ts';

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

  it('leaves the doorbell to the producer when told, and wakes the consumer once for the batch', async () => {
    const r = Ring.create(1 << 10);
    const seen = r.doorbell();
    const woken = r.waitAsync(seen);
    expect(woken).not.toBeNull();
    let resolved = false;
    void woken!.then(() => (resolved = true));
    for (let i = 0; i < 3; i++) expect(r.tryPush(Int32Array.of(i), 1, null, false)).toBe(true);
    await new Promise((res) => setImmediate(res));
    expect(resolved).toBe(false); // nothing rang: a consumer asleep on the doorbell still sleeps
    expect(r.doorbell()).toBe(seen);
    r.ringDoorbell();
    await woken;
    expect(r.doorbell()).toBe(seen + 1);
    const got: number[] = [];
    r.drain((off) => got.push(r.words[off >>> 2]!));
    expect(got).toEqual([0, 1, 2]); // unrung records were visible to drain all along
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
  }, 60_000 + WORKER_START_MS); // the workers load tsx and the sources first: slow under CI's load (worker-report.test-util.ts)

  it('always takes a record of maxRecordBytes once drained, wherever the tail stands, and refuses a larger one', () => {
    const r = Ring.create(256);
    const big = new Uint8Array(r.maxRecordBytes - 4);
    // A filler of `shift` bytes (length word, one word, shift - 8 bytes) moves the tail each round.
    for (let shift = 8; shift <= 128; shift += 4) {
      expect(r.tryPush(Int32Array.of(0), 1, new Uint8Array(shift - 8))).toBe(true);
      r.drain(() => undefined);
      expect(r.tryPush(Int32Array.of(7), 1, big)).toBe(true);
      r.drain(() => undefined);
    }
    let err: unknown;
    try {
      r.tryPush(Int32Array.of(7), 1, new Uint8Array(r.maxRecordBytes));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MPIError);
    expect((err as MPIError).errorClass).toBe(ERR_INTERN);
  });

  it('lets a producer sleep on a full ring while the consumer is busy, and wakes it when drained', async () => {
    const r = Ring.create(1 << 10);
    const N = 2000;
    const status = new Int32Array(new SharedArrayBuffer(8)); // [0] producer sleeps seen, [1] done
    const body = `
      import('node:worker_threads').then(async ({ workerData }) => {
        const { register } = await import('tsx/esm/api');
        register();
        const { Ring } = await import(workerData.url);
        const ring = new Ring(workerData.buffer);
        const st = new Int32Array(workerData.status);
        const w = new Int32Array(1);
        for (let i = 0; i < ${N}; i++) {
          w[0] = i;
          for (;;) {
            const seen = ring.head();
            if (ring.tryPush(w, 1, new Uint8Array(60))) break;
            Atomics.add(st, 0, 1);
            ring.waitForSpace(seen, 60000);
          }
        }
        Atomics.store(st, 1, 1);
      });
    `;
    const url = new URL('./ring.ts', import.meta.url).href;
    const worker = new Worker(body, { eval: true, workerData: { buffer: r.buffer, url, status: status.buffer } });
    const exited = new Promise((res) => worker.on('exit', res));
    // The consumer is busy (no drain) until the producer has filled the ring and gone to sleep.
    while (Atomics.load(status, 0) === 0) await new Promise((res) => setTimeout(res, 5));
    let next = 0;
    while (Atomics.load(status, 1) === 0 || !r.isEmpty()) {
      r.drain((off) => {
        expect(r.words[off >>> 2]).toBe(next);
        next++;
      });
      await new Promise((res) => setImmediate(res));
    }
    await exited;
    expect(next).toBe(N);
    expect(Atomics.load(status, 0)).toBeGreaterThan(0);
  }, 60_000 + WORKER_START_MS); // the worker loads tsx and the sources first: slow under CI's load (worker-report.test-util.ts)

  // A producer asleep when close() notifies wakes at once; one descheduled between its isClosed() and
  // its Atomics.wait misses the notify (close() leaves the head word it waits on as it was) and sees
  // the close at its next slice: the device's producers wait in slices of 50 ms (thread-bridge.ts
  // WAIT_SLICE_MS), and so does this one, so the test holds whichever happened.
  it('a producer waiting for space ends its wait once the consumer closes the ring', async () => {
    const r = Ring.create(64);
    while (r.tryPush(Int32Array.of(1), 1, null));
    const body = `
      import('node:worker_threads').then(async ({ workerData, parentPort }) => {
        const { register } = await import('tsx/esm/api');
        register();
        const { Ring } = await import(workerData.url);
        const ring = new Ring(workerData.buffer);
        parentPort.postMessage('waiting');
        while (!ring.isClosed()) ring.waitForSpace(ring.head(), 50);
        parentPort.postMessage('woken');
      });
    `;
    const url = new URL('./ring.ts', import.meta.url).href;
    const worker = new Worker(body, { eval: true, workerData: { buffer: r.buffer, url } });
    const messages: string[] = [];
    const woken = new Promise<void>((res) => worker.on('message', (m: string) => (messages.push(m), m === 'woken' && res())));
    while (messages.length === 0) await new Promise((res) => setTimeout(res, 5));
    r.close();
    await woken;
    expect(r.isClosed()).toBe(true);
    await worker.terminate();
  }, 60_000 + WORKER_START_MS); // the worker loads tsx and the sources first: slow under CI's load (worker-report.test-util.ts)
});
