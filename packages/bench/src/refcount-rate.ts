/**
 * The neighbor message rate of papers/refcount-gc.txt §VI (Figures 4 and 5):
 * N threads per process share ONE communicator, so every request they start
 * references the same communicator (and datatype): that is where the
 * reference-counting strategies differ (--refcount naive | predefined | gc).
 *
 *   mpiexec -n 2 --refcount gc packages/bench/src/refcount-rate.ts --threads 2 --objects derived
 *
 * Thread i of rank 0 pairs with thread i of rank 1 (distinct tags on the shared
 * communicator). Each iteration posts WINDOW zero-byte Irecv and WINDOW Isend
 * and waits for all (the paper: 12, 10 warm-up + 10,000 timed iterations).
 *   --objects predefined   COMM_WORLD and bare Uint8Arrays (a predefined type)
 *   --objects derived      a dup of COMM_WORLD and a committed contiguous(1, BYTE),
 *                          made by the main thread and shared by every thread
 * Rank 0 prints the aggregate rate (messages its threads sent / the longest
 * thread's time) and appends a JSON record with --json. refcount-sweep.ts runs
 * the whole figure. This file is also the threads' body.
 */
import { isMainThread, parentPort } from 'node:worker_threads';
import { parseArgs } from 'node:util';
import * as MPI from '@tsmpi/core';
import { appendJsonRecord, recordHeader } from './report.ts';

interface Plan {
  readonly threads: number;
  readonly objects: 'predefined' | 'derived';
  readonly iterations: number;
  readonly warmup: number;
  readonly window: number;
}

interface ThreadJob {
  readonly plan: Plan;
  readonly index: number;
  readonly comm: MPI.Comm;
  readonly type: MPI.Datatype | null;
}

interface ThreadResult {
  readonly messagesSent: number;
  readonly elapsedSeconds: number;
}

const USAGE = `usage: mpiexec -n 2 --refcount naive|predefined|gc packages/bench/src/refcount-rate.ts [flags]
  --threads N                    threads per process sharing one communicator (default 1)
  --objects predefined|derived   COMM_WORLD + a predefined type, or a dup + a derived type (default predefined)
  --iterations N --warmup N --window N   kernel parameters (10000, 10, 12)
  --json FILE                    append one JSON record
  -h, --help`;

/** One thread's share: WINDOW receives and sends per iteration with its peer thread, tag = its index. */
async function runThread(job: ThreadJob): Promise<ThreadResult> {
  const { plan, index, comm, type } = job;
  const peer = 1 - comm.rank;
  const recvBufs = Array.from({ length: plan.window }, () => new Uint8Array(0));
  const sendBuf = new Uint8Array(0);
  // A derived type travels as [buffer, 0 items, type]: the request references the type.
  const recvSpecs: MPI.BufSpec[] = recvBufs.map((b) => (type === null ? b : [b, 0, type]));
  const sendSpec: MPI.BufSpec = type === null ? sendBuf : [sendBuf, 0, type];
  const reqs: MPI.Request<void>[] = new Array(2 * plan.window);
  const iteration = async (): Promise<void> => {
    for (let i = 0; i < plan.window; i++) reqs[i] = comm.Irecv(recvSpecs[i]!, peer, index);
    for (let i = 0; i < plan.window; i++) reqs[plan.window + i] = comm.Isend(sendSpec, peer, index);
    await MPI.Request.waitall(reqs);
  };
  for (let it = 0; it < plan.warmup; it++) await iteration();
  await comm.sendrecv(0, peer, 1_000_000 + index, peer, 1_000_000 + index);
  const start = MPI.wtime();
  for (let it = 0; it < plan.iterations; it++) await iteration();
  const elapsedSeconds = MPI.wtime() - start;
  return { messagesSent: plan.window * plan.iterations, elapsedSeconds };
}

if (!isMainThread) {
  await MPI.init();
  parentPort!.postMessage(await runThread(MPI.workerData as ThreadJob));
} else {
  const { values } = parseArgs({
    options: {
      threads: { type: 'string', default: '1' },
      objects: { type: 'string', default: 'predefined' },
      iterations: { type: 'string', default: '10000' },
      warmup: { type: 'string', default: '10' },
      window: { type: 'string', default: '12' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const plan: Plan = {
    threads: Number(values.threads),
    objects: values.objects === 'derived' ? 'derived' : 'predefined',
    iterations: Number(values.iterations),
    warmup: Number(values.warmup),
    window: Number(values.window),
  };
  if (!(plan.threads >= 1 && plan.threads <= 32) || values.objects !== plan.objects) {
    console.error(`refcount-rate: --threads must be 1..32 and --objects predefined or derived\n${USAGE}`);
    process.exit(2);
  }
  await MPI.init({ threadLevel: 'multiple' });
  const world = MPI.COMM_WORLD;
  if (world.size !== 2) {
    if (world.rank === 0) console.error(`refcount-rate: needs 2 processes (mpiexec -n 2), got ${world.size}`);
    await MPI.finalize();
    process.exit(2);
  }
  const comm = plan.objects === 'derived' ? await world.dup() : world;
  const type = plan.objects === 'derived' ? MPI.Datatype.contiguous(1, MPI.BYTE).commit() : null;
  const workers = Array.from({ length: plan.threads }, (_, index) => new MPI.Worker(new URL(import.meta.url), { workerData: { plan, index, comm, type } }));
  const results = await Promise.all(workers.map((w) => new Promise<ThreadResult>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  })));
  await world.barrier();
  if (world.rank === 0) {
    const messages = results.reduce((s, r) => s + r.messagesSent, 0);
    const seconds = Math.max(...results.map((r) => r.elapsedSeconds));
    const rate = messages / seconds / 1e6;
    const cfg = MPI.config();
    console.log(`refcount-rate: ${rate.toFixed(4)} M messages/s aggregate (refcount ${cfg.refcount}, objects ${plan.objects}, threads ${plan.threads}, progress ${cfg.progress})`);
    if (values.json !== undefined) appendJsonRecord(values.json, { ...recordHeader(), bench: 'refcount-rate', ...plan, config: cfg, rateMps: rate });
  }
  if (comm !== world) comm.free();
  type?.free();
  await MPI.finalize();
}
