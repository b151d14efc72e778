/**
 * Multithreaded neighbor message rate (papers/multichannel-parallel-queues.txt
 * §4, Figure 1): N threads per process, each running the neighbor-rate kernel
 * with its own peer, aggregated per process.
 *
 *   layout 'pair'       2 processes; thread i of rank 0 <-> thread i of rank 1 (tag i)
 *   layout 'endpoints'  the same with one endpoint per thread (papers/endpoints-proposal.txt:
 *                       mpiexec --endpoints N; thread i attaches to endpoint i and talks to
 *                       endpoint i of the peer over COMM_ENDPOINTS, as if it were a process)
 *   layout 'paper'      N + 1 processes; thread i of the root (rank 0) <-> process i + 1
 *   --thread-level single  no worker thread; with 2K processes, rank r <-> rank r + K: the
 *                       "K single-threaded processes per side" point the endpoints layout
 *                       is measured against (K = 1: the paper's "0 threads" point)
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/msgrate-threads.ts --threads 2 --layout pair
 *   pnpm exec mpiexec -n 2 --endpoints 2 packages/bench/src/msgrate-threads.ts --threads 2 --layout endpoints
 *   pnpm exec mpiexec -n 5 packages/bench/src/msgrate-threads.ts --threads 4 --layout paper
 *   pnpm exec mpiexec -n 2 packages/bench/src/msgrate-threads.ts --thread-level single       # the paper's "0 threads" point
 *   pnpm exec mpiexec -n 4 packages/bench/src/msgrate-threads.ts --thread-level single       # two processes per side
 *
 * Channels, matching and progress are mpiexec options (--channels, --matching,
 * --progress). Each thread uses its own tag (so thread i only matches thread i),
 * or, with --endpoints N, its own endpoint over COMM_ENDPOINTS. Rank 0 prints
 * the aggregate: total messages the threads (or processes) of one side sent /
 * the longest one's time, and each thread's (or process's) own CPU per message over its timed
 * iterations, the channel engines' excluded
 * (/proc/thread-self: what a loaded machine does not inflate as it does wall time;
 * a message counts once where it is sent and once where it is received).
 * This file is also the threads' body.
 */
import { isMainThread, parentPort } from 'node:worker_threads';
import { parseArgs } from 'node:util';
import * as MPI from '@tsmpi/core';
import { runNeighborRate, type NeighborRateResult } from './neighbor-rate.ts';
import { appendJsonRecord, recordHeader } from './report.ts';
import { readFileSync } from 'node:fs';
import { exchangeWindow } from './neighbor-rate.ts';
import { ownThreadCpuNs, processCpuNs } from './thread-cpu.ts';

interface Plan {
  readonly threads: number;
  readonly layout: 'pair' | 'paper' | 'endpoints';
  readonly single: boolean;
  readonly iterations: number;
  readonly warmup: number;
  readonly window: number;
  /** iterations per timed block for --block (0: one timed run, no blocks) */
  readonly block: number;
}

/** One block of --block: its wall time, the thread's own CPU and sleeps, and the whole process's CPU. */
interface Block {
  readonly seconds: number;
  readonly threadCpuNs: number;
  /** the thread's voluntary context switches: each is a sleep, so a wake-up by another thread or the kernel */
  readonly sleeps: number;
  readonly processCpuNs: number;
}

/** One thread's result: the kernel's, and the thread's own CPU over the timed iterations (null without procfs). */
interface ThreadResult extends NeighborRateResult {
  readonly cpuNs: number | null;
  readonly blocks: readonly Block[];
}

/** This thread's voluntary context switches (/proc/thread-self/status); 0 without procfs. */
function ownSleeps(): number {
  try {
    return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync('/proc/thread-self/status', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The timed iterations of runNeighborRate cut into blocks of plan.block, each measured on its own (the tier-up curve of a thread). */
async function runBlocks(comm: MPI.Comm, peer: number, tag: number, plan: Plan, sync: () => Promise<void>): Promise<Block[]> {
  const recvBufs = Array.from({ length: plan.window }, () => new Uint8Array(0));
  const sendBuf = new Uint8Array(0);
  const reqs: MPI.Request<void>[] = [];
  for (let it = 0; it < plan.warmup; it++) await exchangeWindow(comm, peer, tag, recvBufs, sendBuf, reqs);
  await sync();
  const blocks: Block[] = [];
  for (let done = 0; done < plan.iterations; done += plan.block) {
    const t0 = MPI.wtime();
    const c0 = ownThreadCpuNs() ?? 0;
    const s0 = ownSleeps();
    const p0 = processCpuNs();
    const n = Math.min(plan.block, plan.iterations - done);
    for (let it = 0; it < n; it++) await exchangeWindow(comm, peer, tag, recvBufs, sendBuf, reqs);
    blocks.push({ seconds: MPI.wtime() - t0, threadCpuNs: (ownThreadCpuNs() ?? 0) - c0, sleeps: ownSleeps() - s0, processCpuNs: processCpuNs() - p0 });
  }
  return blocks;
}

interface ThreadJob {
  readonly plan: Plan;
  readonly index: number;
}

const USAGE = `usage: mpiexec -n P [--channels C --matching M --progress P --endpoints N] packages/bench/src/msgrate-threads.ts [flags]
  --threads N          threads per process (default 1)
  --layout pair|endpoints|paper  pair: 2 processes, thread i <-> thread i; endpoints: the same, one endpoint
                       per thread (mpiexec --endpoints N); paper: N+1 processes, root thread i <-> process i+1
  --thread-level single|multiple   single: no worker thread, MPI_THREAD_SINGLE (the paper's "0 threads" point;
                       with 2K processes, rank r <-> rank r + K)
  --iterations N --warmup N --window N   kernel parameters (10000, 10, 12)
  --block N            time the iterations in blocks of N: rank 0 prints, per block, the aggregate rate and per
                       message its threads' own CPU, their sleeps (wake-ups) and the process's CPU (engines and V8 too)
  --json FILE          append one JSON record
  -h, --help`;

/** Runs one thread's share: its peer, its tag or endpoint, a pairwise sync. */
async function runThread(plan: Plan, index: number): Promise<ThreadResult> {
  const world = MPI.COMM_WORLD;
  const useEndpoints = !plan.single && MPI.config().endpoints === plan.threads && plan.layout !== 'paper';
  let comm: MPI.Comm = world;
  let peer: number;
  let tag = index;
  if (useEndpoints) {
    MPI.threadAttach(index);
    comm = MPI.COMM_ENDPOINTS;
    const J = plan.threads;
    peer = (1 - Math.floor(comm.rank / J)) * J + index;
    tag = 0;
  } else if (plan.single) {
    peer = (world.rank + world.size / 2) % world.size;
  } else if (plan.layout === 'pair') {
    peer = 1 - world.rank;
  } else {
    peer = world.rank === 0 ? index + 1 : 0;
    tag = world.rank === 0 ? index : world.rank - 1;
  }
  const syncTag = 1_000_000 + tag;
  let cpuAtStart: number | null = null;
  if (plan.block > 0) {
    const blocks = await runBlocks(comm, peer, tag, plan, async () => { await comm.sendrecv(0, peer, syncTag, peer, syncTag); });
    const elapsedSeconds = blocks.reduce((s, b) => s + b.seconds, 0);
    const messagesSent = plan.window * plan.iterations;
    return { messagesSent, elapsedSeconds, messagesPerSecond: messagesSent / elapsedSeconds, cpuNs: blocks.reduce((s, b) => s + b.threadCpuNs, 0), blocks };
  }
  const result = await runNeighborRate(comm, peer, {
    iterations: plan.iterations,
    warmup: plan.warmup,
    window: plan.window,
    sizeBytes: 0,
    tag,
    sync: async () => {
      await comm.sendrecv(0, peer, syncTag, peer, syncTag);
      cpuAtStart = ownThreadCpuNs();
    },
  });
  const cpuAtEnd = ownThreadCpuNs();
  return { ...result, cpuNs: cpuAtStart === null || cpuAtEnd === null ? null : cpuAtEnd - cpuAtStart, blocks: [] };
}

/** Rank 0's per-block lines of --block: the aggregate rate, then per message (sent or received) each thread's CPU and sleeps, and the process's CPU over the slowest thread's block. */
function printBlocks(results: readonly ThreadResult[], plan: Plan): void {
  const count = Math.max(0, ...results.map((r) => r.blocks.length));
  for (let b = 0; b < count; b++) {
    const mine = results.map((r) => r.blocks[b]!);
    const perThread = Math.min(plan.block, plan.iterations - b * plan.block) * plan.window;
    const seconds = Math.max(...mine.map((x) => x.seconds));
    const cpu = mine.map((x) => (x.threadCpuNs / 1e3 / (2 * perThread)).toFixed(2)).join(' ');
    const sleeps = mine.map((x) => (x.sleeps / (2 * perThread)).toFixed(2)).join(' ');
    const proc = Math.max(...mine.map((x) => x.processCpuNs)) / 1e3 / (2 * perThread * mine.length);
    console.log(`block ${b + 1} (to ${Math.min((b + 1) * plan.block, plan.iterations)}): ${(perThread * mine.length / seconds / 1e6).toFixed(3)} M/s, thread cpu ${cpu} µs/msg, sleeps ${sleeps} /msg, process cpu ${proc.toFixed(2)} µs/msg`);
  }
}

if (!isMainThread) {
  await MPI.init();
  const { plan, index } = MPI.workerData as ThreadJob;
  parentPort!.postMessage(await runThread(plan, index));
} else {
  const { values } = parseArgs({
    options: {
      threads: { type: 'string', default: '1' },
      layout: { type: 'string', default: 'pair' },
      'thread-level': { type: 'string', default: 'multiple' },
      iterations: { type: 'string', default: '10000' },
      warmup: { type: 'string', default: '10' },
      window: { type: 'string', default: '12' },
      block: { type: 'string', default: '0' },
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
    layout: values.layout === 'paper' ? 'paper' : values.layout === 'endpoints' ? 'endpoints' : 'pair',
    single: values['thread-level'] === 'single',
    iterations: Number(values.iterations),
    warmup: Number(values.warmup),
    window: Number(values.window),
    block: Number(values.block),
  };
  if (plan.single && plan.threads !== 1) {
    console.error('msgrate-threads: --thread-level single runs the main thread only: use --threads 1');
    process.exit(2);
  }
  await MPI.init({ threadLevel: plan.single ? 'single' : 'multiple' });
  const world = MPI.COMM_WORLD;
  const want = plan.layout === 'paper' ? plan.threads + 1 : 2;
  const sizeOk = plan.single && plan.layout !== 'paper' ? world.size >= 2 && world.size % 2 === 0 : world.size === want;
  if (!sizeOk) {
    if (world.rank === 0) console.error(`msgrate-threads: layout ${plan.layout} with ${plan.threads} threads needs ${plan.single ? 'an even number of' : want} processes (mpiexec -n ${want}), got ${world.size}`);
    await MPI.finalize();
    process.exit(2);
  }
  if (plan.layout === 'endpoints' && !plan.single && MPI.config().endpoints !== plan.threads) {
    if (world.rank === 0) console.error(`msgrate-threads: layout endpoints runs one endpoint per thread: use mpiexec --endpoints ${plan.threads} (got --endpoints ${MPI.config().endpoints})`);
    await MPI.finalize();
    process.exit(2);
  }
  // Threads per process: every process of 'pair', the root of 'paper'; peers of 'paper' run one.
  const mine = plan.layout !== 'paper' || world.rank === 0 ? plan.threads : 1;
  let results: ThreadResult[];
  if (plan.single) {
    results = [await runThread(plan, 0)];
  } else {
    const workers = Array.from({ length: mine }, (_, index) => new MPI.Worker(new URL(import.meta.url), { workerData: { plan, index: world.rank === 0 || plan.layout !== 'paper' ? index : 0 } }));
    results = await Promise.all(workers.map((w) => new Promise<ThreadResult>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    })));
  }
  await world.barrier();
  let messages = results.reduce((s, r) => s + r.messagesSent, 0);
  let seconds = Math.max(...results.map((r) => r.elapsedSeconds));
  if (plan.single && world.size > 2) {
    // K single-threaded processes per side: the first K ranks are one side.
    const side = world.rank < world.size / 2 ? 1 : 0;
    messages = await world.allreduce(messages * side, MPI.SUM);
    seconds = await world.allreduce(seconds * side, MPI.MAX);
  }
  if (world.rank === 0) {
    const rate = messages / seconds / 1e6;
    // Each thread sends and receives messagesSent: its CPU over twice that many.
    const cpuUs = results.flatMap((r) => (r.cpuNs === null ? [] : [r.cpuNs / 1e3 / (2 * r.messagesSent)]));
    const cfg = MPI.config();
    const threadsLabel = plan.single ? `0 (single, ${world.size / 2} per side)` : String(plan.threads);
    console.log(`msgrate-threads: ${rate.toFixed(3)} M messages/s aggregate (layout ${plan.layout}, threads ${threadsLabel}, channels ${cfg.channels}, matching ${cfg.matching}, progress ${cfg.progress}, endpoints ${cfg.endpoints})`);
    if (cpuUs.length > 0) console.log(`msgrate-threads cpu: per message sent or received, rank 0's threads (not its channel engines): ${cpuUs.map((us) => us.toFixed(2)).join(' ')} µs`);
    printBlocks(results, plan);
    if (values.json !== undefined) {
      appendJsonRecord(values.json, { ...recordHeader(), bench: 'msgrate-threads', ...plan, config: cfg, rateMps: rate, perThread: results.map((r) => r.messagesPerSecond / 1e6), cpuUsPerMessage: cpuUs });
    }
  }
  await MPI.finalize();
}
