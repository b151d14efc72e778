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
}

function runLoop(job: Job): number {
  const lt = createLifetime(job.strategy, new ObjectTable(job.objects, false), job.lifetime, job.row);
  const r = new DevRequest(REQ_KIND.SEND);
  const go = new Int32Array(job.start);
  Atomics.add(go, 1, 1);
  while (Atomics.load(go, 0) === 0) {
    // spin until every thread is ready, so that they contend from the first iteration
  }
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < job.loops; i++) {
    lt.acquire(r, job.comm, job.type, 0);
    lt.releaseRequest(r);
  }
  return Number(process.hrtime.bigint() - t0) / job.loops;
}

if (!isMainThread) {
  parentPort!.postMessage(runLoop(workerData as Job));
} else {
  const { values } = parseArgs({ options: { loops: { type: 'string', default: '2000000' }, repeat: { type: 'string', default: '5' }, json: { type: 'string' } } });
  const loops = Number(values.loops);
  const repeat = Number(values.repeat);
  const results: { strategy: RefcountStrategy; objects: string; threads: number; nsPerRequest: number[] }[] = [];
  for (const threads of [1, 2]) {
    for (const objects of ['derived', 'predefined'] as const) {
      for (const strategy of ['naive', 'predefined', 'gc'] as const) results.push({ strategy, objects, threads, nsPerRequest: [] });
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
      const ws = Array.from({ length: res.threads }, (_, row) => new Worker(...workerArgs(new URL(import.meta.url), {
        workerData: { strategy: res.strategy, row, loops, objects: table, lifetime, comm, type, start } satisfies Job,
      })));
      const go = new Int32Array(start);
      while (Atomics.load(go, 1) < res.threads) await new Promise((r) => setTimeout(r, 1));
      Atomics.store(go, 0, 1);
      const ns = await Promise.all(ws.map((w) => new Promise<number>((resolve, reject) => { w.once('message', resolve); w.once('error', reject); })));
      res.nsPerRequest.push(ns.reduce((a, b) => a + b, 0) / ns.length);
    }
  }
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  console.log('threads  objects     strategy    ns per request (median of ' + repeat + ')');
  for (const r of results) console.log(`${String(r.threads).padEnd(8)} ${r.objects.padEnd(11)} ${r.strategy.padEnd(11)} ${med(r.nsPerRequest).toFixed(1)}`);
  if (values.json !== undefined) appendFileSync(values.json, JSON.stringify({ bench: 'lifetime-cost', date: new Date().toISOString(), loops, repeat, results: results.map((r) => ({ ...r, median: med(r.nsPerRequest) })) }) + '\n');
}
