/**
 * The neighbor message rate of papers/refcount-gc.txt §VI (Figures 4 and 5):
 * N threads per process share ONE communicator, so every request they start
 * references the same communicator (and datatype): that is where the
 * reference-counting strategies differ (--refcount naive | predefined | gc).
 *
 *   mpiexec -n 2 --refcount gc packages/bench/src/refcount-rate.ts --threads 2 --objects derived
 *   mpiexec -n 1 --endpoints 2 --refcount gc packages/bench/src/refcount-rate.ts --threads 2 --peer self --objects derived
 *
 * Each iteration posts WINDOW zero-byte Irecv and WINDOW Isend to the thread's
 * neighbor and waits for all (the paper: 12, 10 warm-up + 10,000 timed iterations).
 * Who the neighbor is (--peer):
 *   remote  thread i of rank 0 pairs with thread i of rank 1 (distinct tags on the
 *           shared communicator): every message crosses TCP, and a worker thread's
 *           message also crosses to the thread that hosts the channel.
 *   self    every thread is its own neighbor (one process, `--endpoints N`, thread i
 *           attached to endpoint i): messages take the local path and complete in
 *           the thread that started them, so the threads share nothing but the
 *           communicator and datatype records, which is what the paper's benchmark
 *           isolates by giving each thread its own neighbor node and network path.
 *           It measures the per-request work of the library, reference work included.
 * The objects (--objects):
 *   predefined   COMM_WORLD (remote) or COMM_CLIQUE (self), and bare Uint8Arrays
 *   derived      a dup of that communicator and a committed contiguous(1, BYTE), whose
 *                records every thread shares: made by the main thread (remote), or
 *                by thread 0 and revived in the others (self: a dup over endpoints
 *                gives each endpoint its own record, so the others use thread 0's)
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
  readonly peer: 'remote' | 'self';
  readonly objects: 'predefined' | 'derived';
  readonly iterations: number;
  readonly warmup: number;
  readonly window: number;
}

interface ThreadJob {
  readonly plan: Plan;
  readonly index: number;
  /** remote: the shared objects; self: null (thread 0 makes them, the others get them by message) */
  readonly comm: MPI.Comm | null;
  readonly type: MPI.Datatype | null;
}

interface ThreadResult {
  readonly messagesSent: number;
  readonly elapsedSeconds: number;
}

const USAGE = `usage: mpiexec -n 2 --refcount naive|predefined|gc packages/bench/src/refcount-rate.ts [flags]
       mpiexec -n 1 --endpoints N --refcount naive|predefined|gc packages/bench/src/refcount-rate.ts --peer self --threads N [flags]
  --threads N                    threads per process sharing one communicator (default 1)
  --peer remote|self             neighbor: thread i of the other rank (-n 2), or the thread itself
                                 (-n 1 --endpoints N: the local path, nothing shared but the objects)
  --objects predefined|derived   COMM_WORLD + a predefined type, or a dup + a derived type (default predefined)
  --iterations N --warmup N --window N   kernel parameters (10000, 10, 12)
  --json FILE                    append one JSON record
  -h, --help`;

/** self mode: the records every thread uses, and the thread's own dup (freed at the end). */
interface SharedObjects {
  readonly comm: MPI.Comm;
  readonly type: MPI.Datatype | null;
  readonly own: MPI.Comm | null;
}

/** One thread's share: WINDOW receives and sends per iteration with its peer thread, tag = its index. */
async function runThread(plan: Plan, index: number, comm: MPI.Comm, type: MPI.Datatype | null): Promise<ThreadResult> {
  const peer = plan.peer === 'self' ? comm.rank : 1 - comm.rank;
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

/**
 * self mode, in thread `index` (attached to endpoint `index`): the shared objects. Every thread
 * takes part in the dup of COMM_CLIQUE; thread 0's communicator and datatype go to the others
 * through the main thread, so that all of them reference the same records.
 */
async function sharedObjects(plan: Plan, index: number): Promise<SharedObjects> {
  if (plan.objects === 'predefined') return { comm: MPI.COMM_CLIQUE, type: null, own: null };
  // Listen first: thread 0's message may come before this thread's dup resolves.
  const got = new Promise<{ comm: MPI.Comm; type: MPI.Datatype }>((resolve) => {
    parentPort!.once('message', (m: { shared: unknown }) => resolve(MPI.revive(m.shared) as { comm: MPI.Comm; type: MPI.Datatype }));
  });
  const own = await MPI.COMM_CLIQUE.dup();
  if (index === 0) parentPort!.postMessage({ shared: MPI.dehydrate({ comm: own, type: MPI.Datatype.contiguous(1, MPI.BYTE).commit() }) });
  const { comm, type } = await got;
  // Only thread 0's records are used; the others' own dups stay idle until the end.
  return { comm, type, own: index === 0 ? null : own };
}

if (!isMainThread) {
  await MPI.init();
  const job = MPI.workerData as ThreadJob;
  if (job.plan.peer === 'self') {
    MPI.threadAttach(job.index);
    const objs = await sharedObjects(job.plan, job.index);
    const result = await runThread(job.plan, job.index, objs.comm, objs.type);
    await MPI.COMM_CLIQUE.barrier(); // no thread frees a shared object while another still uses it
    if (objs.own !== null) objs.own.free();
    else if (job.plan.objects === 'derived') {
      objs.comm.free();
      objs.type?.free();
    }
    parentPort!.postMessage(result);
  } else {
    parentPort!.postMessage(await runThread(job.plan, job.index, job.comm!, job.type));
  }
} else {
  const { values } = parseArgs({
    options: {
      threads: { type: 'string', default: '1' },
      peer: { type: 'string', default: 'remote' },
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
    peer: values.peer === 'self' ? 'self' : 'remote',
    objects: values.objects === 'derived' ? 'derived' : 'predefined',
    iterations: Number(values.iterations),
    warmup: Number(values.warmup),
    window: Number(values.window),
  };
  if (!(plan.threads >= 1 && plan.threads <= 32) || values.objects !== plan.objects || values.peer !== plan.peer) {
    console.error(`refcount-rate: --threads must be 1..32, --peer remote or self, --objects predefined or derived\n${USAGE}`);
    process.exit(2);
  }
  await MPI.init({ threadLevel: 'multiple' });
  const world = MPI.COMM_WORLD;
  if (plan.peer === 'self' && MPI.COMM_CLIQUE.size !== plan.threads) {
    if (world.rank === 0) console.error(`refcount-rate: --peer self needs one endpoint per thread: mpiexec --endpoints ${plan.threads} (got ${MPI.COMM_CLIQUE.size})`);
    await MPI.finalize();
    process.exit(2);
  }
  if (plan.peer === 'remote' && world.size !== 2) {
    if (world.rank === 0) console.error(`refcount-rate: needs 2 processes (mpiexec -n 2), got ${world.size}`);
    await MPI.finalize();
    process.exit(2);
  }
  const remote = plan.peer === 'remote';
  const comm = remote && plan.objects === 'derived' ? await world.dup() : remote ? world : null;
  const type = remote && plan.objects === 'derived' ? MPI.Datatype.contiguous(1, MPI.BYTE).commit() : null;
  const workers = Array.from({ length: plan.threads }, (_, index) => new MPI.Worker(new URL(import.meta.url), { workerData: { plan, index, comm, type } }));
  const results = await Promise.all(workers.map((w) => new Promise<ThreadResult>((resolve, reject) => {
    w.on('message', (m: ThreadResult | { shared: unknown }) => {
      // self mode: thread 0's shared objects go to every thread (itself included)
      if ('shared' in m) for (const o of workers) o.postMessage(m);
      else resolve(m);
    });
    w.once('error', reject);
  })));
  await world.barrier();
  if (world.rank === 0) {
    const messages = results.reduce((s, r) => s + r.messagesSent, 0);
    const seconds = Math.max(...results.map((r) => r.elapsedSeconds));
    const rate = messages / seconds / 1e6;
    const cfg = MPI.config();
    console.log(`refcount-rate: ${rate.toFixed(4)} M messages/s aggregate (refcount ${cfg.refcount}, peer ${plan.peer}, objects ${plan.objects}, threads ${plan.threads}, progress ${cfg.progress})`);
    if (values.json !== undefined) appendJsonRecord(values.json, { ...recordHeader(), bench: 'refcount-rate', ...plan, config: cfg, rateMps: rate });
  }
  if (comm !== null && comm !== world) comm.free();
  type?.free();
  await MPI.finalize();
}
