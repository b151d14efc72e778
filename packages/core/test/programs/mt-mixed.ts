// Threads of one process: a thread blocked in recv is woken by another thread of the
// same process; wildcard and specific receives interleaved across threads each get
// every message once, in per-thread posting order. 2 processes.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const THREADS = 4;
const PER = 200;
const url = new URL('./mt-mixed-worker.ts', import.meta.url);

// 1. Each worker blocks in recv from its own process; the main thread sends to them.
const locals = Array.from({ length: THREADS }, (_, index) => new MPI.Worker(url, { workerData: { role: 'local', index } }));
const localDone = locals.map((w) => once(w, 'message'));
for (let i = 0; i < THREADS; i++) await world.send(`hello ${i}`, world.rank, 500 + i);
for (const [m] of await Promise.all(localDone)) equal((m as { v: string }).v, `hello ${(m as { index: number }).index}`, 'local cross-thread receive');

// 2. Rank 0's threads post wildcard and specific receives on tag 7; rank 1 sends them all.
if (world.rank === 0) {
  const ws = Array.from({ length: THREADS }, (_, index) => new MPI.Worker(url, { workerData: { role: 'mixed', index, perThread: PER } }));
  const results = (await Promise.all(ws.map((w) => once(w, 'message')))).map(([m]) => m as { index: number; got: number[] });
  await world.send('posted', 1, 8);
  const all = results.flatMap((r) => r.got).sort((a, b) => a - b);
  equal(all.length, THREADS * PER, 'every message received');
  equal(all.every((v, i) => v === i), true, 'each message exactly once');
  for (const r of results) check(r.got.every((v, i) => i === 0 || v > r.got[i - 1]!), `thread ${r.index}: receives matched in its posting order`);
} else {
  for (let i = 0; i < THREADS * PER; i++) await world.send(i, 0, 7);
  await world.recv(0, 8);
}
await world.barrier();
if (world.rank === 0) console.log(`mt-mixed OK ${JSON.stringify(MPI.config())}`);
await MPI.finalize();
