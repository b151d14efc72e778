/**
 * The cost of one request's reference work in each --refcount strategy
 * (papers/refcount-gc.txt §IV-V), with 1 and 2 threads contending on the same
 * communicator and datatype records: each thread runs acquire + releaseRequest
 * (device/lifetime.ts) in a loop over one DevRequest, nothing else. 'derived'
 * references a created communicator and datatype (the contended case), and
 * 'predefined' references predefined ones (the handle bit lets predefined and gc
 * skip them). A device-layer microbenchmark: it lives beside core's source
 * because the lifetime module is internal (packages/bench sees only @tsmpi/core).
 *
 * Each thread times its loop in chunks of CHUNK requests. Reported per point:
 *   wall     total time / requests: what a run costs, every preemption included;
 *   chunk    the median chunk: a chunk in which the thread was descheduled is an
 *            outlier, so this is the cost while running (load-robust);
 *   side by side (2 threads)  the median over the chunks during which the other
 *            thread did between half and twice as many requests (each thread
 *            publishes its count every STEP requests): both were running at the
 *            same time, the contended case the paper measures; and the share of
 *            such chunks. On a machine so loaded that two threads of one process
 *            rarely run at the same time, that share is near 0 and so is the
 *            contention a run meets.
 *
 *   npx tsx packages/core/bench/lifetime-cost.ts [--loops 2000000] [--repeat 5] [--json FILE]
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { appendFileSync } from 'node:fs';
import { workerArgs } from '../src/util/index.ts';
import { parseArgs } from 'node:util';
import { DevRequest, REQ_KIND, ObjectTable, OBJECT_KIND, allocateLifetimeBuffers, createLifetime, type LifetimeBuffers, type ObjectTableBuffers, type RefcountStrategy } from '../src/device/index.ts';

interface Job {
  readonly strategy: RefcountStrategy;
  readonly row: number;
  readonly loops: number;
  readonly objects: ObjectTableBuffers;
  readonly lifetime: LifetimeBuffers;
  readonly comm: number;
  readonly type: number;
  readonly start: SharedArrayBuffer;
  /** per thread, 16 words apart: requests done (every STEP) */
  readonly progress: SharedArrayBuffer;
  readonly threads: number;
}

interface LoopResult {
  /** ns per request: total time / requests */
  readonly wall: number;
  /** ns per request: the median chunk */
  readonly chunk: number;
  /** ns per request: the median chunk run side by side with the other thread (NaN: none) */
  readonly sideBySide: number;
  /** the share of chunks run side by side */
  readonly overlap: number;
}

/** Requests per timed chunk: long enough for the timer (tens of microseconds), short against a time slice. */
const CHUNK = 2000;
/** A thread publishes how many requests it has done every STEP requests. */
const STEP = 100;

function runLoop(job: Job): LoopResult {
  const lt = createLifetime(job.strategy, new ObjectTable(job.objects, false), job.lifetime, job.row);
  const r = new DevRequest(REQ_KIND.SEND);
  const go = new Int32Array(job.start);
  Atomics.add(go, 1, 1);
  while (Atomics.load(go, 0) === 0) {
    // spin until every thread is ready, so that they contend from the first iteration
  }
  const progress = new Int32Array(job.progress);
  const others = (): number => {
    let n = 0;
    for (let t = 0; t < job.threads; t++) if (t !== job.row) n += Atomics.load(progress, t * 16);
    return n;
  };
  const total = Math.max(1, Math.floor(job.loops / CHUNK));
  const overlapped: number[] = [];
  const all = new Float64Array(total);
  const start = process.hrtime.bigint();
  for (let k = 0; k < total; k++) {
    const before = others();
    const t0 = process.hrtime.bigint();
    for (let j = 0; j < CHUNK; j += STEP) {
      for (let i = 0; i < STEP; i++) {
        lt.acquire(r, job.comm, job.type, 0);
        lt.releaseRequest(r);
      }
      Atomics.store(progress, job.row * 16, k * CHUNK + j + STEP);
    }
    const ns = Number(process.hrtime.bigint() - t0) / CHUNK;
    all[k] = ns;
    const theirs = (others() - before) / (job.threads - 1);
    if (job.threads === 1 || (theirs >= CHUNK / 2 && theirs <= 2 * CHUNK)) overlapped.push(ns);
  }
  const wall = Number(process.hrtime.bigint() - start) / (total * CHUNK);
  overlapped.sort((a, b) => a - b);
  all.sort();
  return { wall, chunk: all[total >> 1]!, sideBySide: overlapped.length === 0 ? NaN : overlapped[overlapped.length >> 1]!, overlap: overlapped.length / total };
}

if (!isMainThread) {
  parentPort!.postMessage(runLoop(workerData as Job));
} else {
  const { values } = parseArgs({ options: { loops: { type: 'string', default: '2000000' }, repeat: { type: 'string', default: '5' }, json: { type: 'string' } } });
  const loops = Number(values.loops);
  const repeat = Number(values.repeat);
  const results: { strategy: RefcountStrategy; objects: string; threads: number; wall: number[]; chunk: number[]; sideBySide: number[]; overlap: number[] }[] = [];
  for (const threads of [1, 2]) {
    for (const objects of ['derived', 'predefined'] as const) {
      for (const strategy of ['naive', 'predefined', 'gc'] as const) results.push({ strategy, objects, threads, wall: [], chunk: [], sideBySide: [], overlap: [] });
    }
  }
  for (let rep = 0; rep < repeat; rep++) {
    for (const res of results) {
      const table = ObjectTable.allocateBuffers(64, 1 << 16);
      const lifetime = allocateLifetimeBuffers(4, 64);
      const objects = new ObjectTable(table, true);
      const owner = createLifetime(res.strategy, objects, lifetime, 3);
      const comm = res.objects === 'derived' ? owner.create(OBJECT_KIND.COMM, [32, 0], null, 'bench') : objects.create(OBJECT_KIND.COMM, true, [0, 0], null, 'bench');
      const type = res.objects === 'derived' ? owner.create(OBJECT_KIND.DATATYPE, [], null, 'bench') : objects.create(OBJECT_KIND.DATATYPE, true, [], null, 'bench');
      const start = new SharedArrayBuffer(8);
      const progress = new SharedArrayBuffer(res.threads * 64);
      const ws = Array.from({ length: res.threads }, (_, row) => new Worker(...workerArgs(new URL(import.meta.url), {
        workerData: { strategy: res.strategy, row, loops, objects: table, lifetime, comm, type, start, progress, threads: res.threads } satisfies Job,
      })));
      const go = new Int32Array(start);
      while (Atomics.load(go, 1) < res.threads) await new Promise((r) => setTimeout(r, 1));
      Atomics.store(go, 0, 1);
      const got = await Promise.all(ws.map((w) => new Promise<LoopResult>((resolve, reject) => { w.once('message', resolve); w.once('error', reject); })));
      const mean = (f: (x: LoopResult) => number): number => got.reduce((a, b) => a + f(b), 0) / got.length;
      res.wall.push(mean((x) => x.wall));
      res.chunk.push(mean((x) => x.chunk));
      res.sideBySide.push(mean((x) => x.sideBySide));
      res.overlap.push(mean((x) => x.overlap));
    }
  }
  // NaN (no side-by-side chunk in a repetition) sorts last.
  const med = (xs: number[]): number => [...xs].sort((a, b) => (Number.isNaN(a) ? 1 : Number.isNaN(b) ? -1 : a - b))[xs.length >> 1]!;
  console.log(`ns per request, median of ${repeat} repetitions`);
  console.log('threads  objects     strategy        wall    chunk   side by side (share of chunks)');
  for (const r of results) {
    const side = r.threads === 1 ? '' : `${med(r.sideBySide).toFixed(1).padStart(8)} (${(100 * med(r.overlap)).toFixed(0)}%)`;
    console.log(`${String(r.threads).padEnd(8)} ${r.objects.padEnd(11)} ${r.strategy.padEnd(11)} ${med(r.wall).toFixed(1).padStart(8)} ${med(r.chunk).toFixed(1).padStart(8)}   ${side}`);
  }
  if (values.json !== undefined) {
    const rows = results.map((r) => ({ ...r, median: { wall: med(r.wall), chunk: med(r.chunk), sideBySide: med(r.sideBySide), overlap: med(r.overlap) } }));
    appendFileSync(values.json, JSON.stringify({ bench: 'lifetime-cost', date: new Date().toISOString(), loops, repeat, results: rows }) + '\n');
  }
}
