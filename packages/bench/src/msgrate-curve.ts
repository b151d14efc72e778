/**
 * How the neighbor message rate evolves over one run: the kernel of
 * neighbor-rate.ts (window of Irecv then Isend, then waitall) timed in blocks,
 * each printed with its rate and this process's CPU time per iteration (all
 * its threads: V8's compiler and GC threads included). Issue 15 used it to
 * find where the first ~20,000 iterations go (docs/notebook/performance-2026-11.md 4.11).
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/msgrate-curve.ts [--blocks 20] [--block 500] [--window 12]
 *
 * CPU per iteration is a steadier measure than the rate on a loaded machine:
 * with `--wait block` it counts work done, not time spent waiting for a core.
 * Rank 0 prints one line per block: iterations so far, elapsed ms, M msgs/s in
 * the block, CPU us per iteration in the block.
 *
 * --counters adds, per block and per message (window messages each way per
 * iteration), what the kernel and the event loop did for rank 0 (Linux only):
 * user and system CPU separately, read and write system calls and bytes per
 * call (/proc/self/io: the socket reads and writes libuv makes), voluntary and
 * involuntary context switches summed over the process's threads
 * (/proc/self/task/N/status: a voluntary switch is a sleep, hence a wake-up),
 * event-loop turns (a check-phase hook: one count per loop iteration), and the
 * time on a core of the main thread apart from the other threads (V8's compiler
 * and GC helpers: thread-cpu.ts).
 * docs/notebook/performance-2026-11.md 4.16 used it to find what the first 1,000 iterations pay for.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as MPI from '@tsmpi/core';
import { isLeadProcess } from './lead-rank.ts';
import { exchangeWindow } from './neighbor-rate.ts';
import { threadCpu } from './thread-cpu.ts';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '20' },
    block: { type: 'string', default: '500' },
    window: { type: 'string', default: '12' },
    counters: { type: 'boolean', default: false },
    prewarm: { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h' },
  },
});
const blocks = Number(values.blocks);
const per = Number(values.block);
const window = Number(values.window);
const withCounters = values.counters === true;
const prewarm = Number(values.prewarm);

/** Kernel counters of this process that --counters reports per block. */
interface KernelCounts {
  readonly syscr: number;
  readonly syscw: number;
  readonly rchar: number;
  readonly wchar: number;
  readonly voluntary: number;
  readonly involuntary: number;
  /** Nanoseconds on a core of the main thread, and of all other threads (thread-cpu.ts). */
  readonly mainNs: number;
  readonly otherNs: number;
}

function kernelCounts(): KernelCounts {
  const io = new Map<string, number>();
  for (const line of readFileSync('/proc/self/io', 'utf8').split('\n')) {
    const [k, v] = line.split(':');
    if (k !== undefined && v !== undefined) io.set(k, Number(v));
  }
  let voluntary = 0;
  let involuntary = 0;
  for (const task of readdirSync('/proc/self/task')) {
    let status: string;
    try {
      status = readFileSync(`/proc/self/task/${task}/status`, 'utf8');
    } catch {
      continue; // the thread exited between the listing and the read
    }
    voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return { syscr: io.get('syscr') ?? 0, syscw: io.get('syscw') ?? 0, rchar: io.get('rchar') ?? 0, wchar: io.get('wchar') ?? 0, voluntary, involuntary, ...threadCpu() };
}

/** Event-loop turns: a setImmediate re-armed in every check phase counts one per loop iteration. */
let loopTurns = 0;
let countingTurns = false;
function countTurn(): void {
  loopTurns++;
  if (countingTurns) setImmediate(countTurn).unref();
}
/**
 * One block: `per` iterations of msgrate.ts's kernel (neighbor-rate.ts), in functions of their own as
 * there. Written inline in the block loop, the kernel was compiled with the per-block measuring code
 * around it, which had not run yet: TurboFan's code for the loop, which inlines Isend, Irecv and
 * waitall, was thrown away at the first block's end (insufficient type feedback) and again at the
 * second's, and compiled anew each time, 17-48 ms of compiler thread per compile
 * (docs/adr/0020-lean-common-path.md section 8).
 */
async function runBlock(comm: MPI.Comm, peer: number, per: number, recv: Uint8Array[], send: Uint8Array, reqs: MPI.Request<void>[]): Promise<void> {
  for (let it = 0; it < per; it++) await exchangeWindow(comm, peer, 0, recv, send, reqs);
}

/**
 * --prewarm N: N iterations of the same exchange (tag 1) before the timed blocks, from a function of
 * their own, so that the timed kernel's own functions stay cold as a program's would: what a
 * warm-up of tsmpi's hot paths at init could buy and what it costs (docs/adr/0020-lean-common-path.md section 8).
 */
async function prewarmExchange(comm: MPI.Comm, peer: number, iterations: number): Promise<void> {
  const recvBufs = Array.from({ length: window }, () => new Uint8Array(0));
  const sendBuf = new Uint8Array(0);
  const pending: MPI.Request<void>[] = [];
  for (let it = 0; it < iterations; it++) {
    for (let i = 0; i < window; i++) pending[i] = comm.Irecv(recvBufs[i]!, peer, 1);
    for (let i = 0; i < window; i++) pending[window + i] = comm.Isend(sendBuf, peer, 1);
    await MPI.Request.waitall(pending);
  }
}

if (values.help === true || ![blocks, per, window].every((n) => Number.isInteger(n) && n > 0) || !(Number.isInteger(prewarm) && prewarm >= 0)) {
  if (isLeadProcess()) console.error('usage: mpiexec -n 2 packages/bench/src/msgrate-curve.ts [--blocks N] [--block ITERATIONS] [--window N] [--prewarm ITERATIONS] (positive integers; prewarm 0 or more)');
  process.exitCode = values.help === true ? 0 : 2;
} else {
  await MPI.init();
  const comm = MPI.COMM_WORLD;
  if (comm.size !== 2) {
    if (comm.rank === 0) console.error(`msgrate-curve: needs exactly 2 processes (got ${comm.size})`);
    process.exitCode = 2;
  } else {
    const peer = 1 - comm.rank;
    const recv = Array.from({ length: window }, () => new Uint8Array(0));
    const send = new Uint8Array(0);
    const reqs: MPI.Request<void>[] = [];
    const lines: string[] = [];
    // Start-up as the blocks' CPU counts it (all threads of this process), then the prewarm's share.
    const initCpu = process.cpuUsage();
    const initWallMs = performance.now();
    let prewarmLine = '';
    if (prewarm > 0) {
      const w0 = MPI.wtime();
      const c0 = process.cpuUsage();
      await prewarmExchange(comm, peer, prewarm);
      const c = process.cpuUsage(c0);
      prewarmLine = `\nprewarm ${prewarm} iterations: ${((MPI.wtime() - w0) * 1000).toFixed(1)} ms wall, ${((c.user + c.system) / 1000).toFixed(1)} ms cpu`;
    }
    await comm.barrier();
    if (withCounters) {
      countingTurns = true;
      setImmediate(countTurn).unref();
      process.stdout.write(`### rank ${comm.rank} blocks begin at ${process.hrtime.bigint() / 1000n} us\n`);
    }
    const t0 = MPI.wtime();
    for (let b = 0; b < blocks; b++) {
      const start = MPI.wtime();
      const k0 = withCounters ? kernelCounts() : null;
      const turns0 = loopTurns;
      const cpu0 = process.cpuUsage();
      await runBlock(comm, peer, per, recv, send, reqs);
      const end = MPI.wtime();
      const cpu = process.cpuUsage(cpu0);
      // Formatting waits until the end: no string work inside the timed blocks.
      let line = `${(b + 1) * per}\t${((end - t0) * 1000).toFixed(0)} ms\t${((window * per) / (end - start) / 1e6).toFixed(3)} M/s\tcpu ${((cpu.user + cpu.system) / per).toFixed(1)} us/it`;
      if (k0 !== null) {
        const k1 = kernelCounts();
        const msgs = window * per; // messages this rank sends (and as many it receives) in the block
        const reads = k1.syscr - k0.syscr;
        const writes = k1.syscw - k0.syscw;
        line += `\tuser ${(cpu.user / per).toFixed(1)} sys ${(cpu.system / per).toFixed(1)} us/it` +
          `\tmain thread ${((k1.mainNs - k0.mainNs) / 1000 / per).toFixed(1)} other threads ${((k1.otherNs - k0.otherNs) / 1000 / per).toFixed(1)} us/it` +
          `\treads/msg ${(reads / msgs).toFixed(3)} B/read ${(reads > 0 ? (k1.rchar - k0.rchar) / reads : 0).toFixed(0)}` +
          `\twrites/msg ${(writes / msgs).toFixed(3)} B/write ${(writes > 0 ? (k1.wchar - k0.wchar) / writes : 0).toFixed(0)}` +
          `\tvcsw/msg ${((k1.voluntary - k0.voluntary) / msgs).toFixed(3)} ivcsw/msg ${((k1.involuntary - k0.involuntary) / msgs).toFixed(3)}` +
          `\tturns/msg ${((loopTurns - turns0) / msgs).toFixed(3)}`;
      }
      lines.push(line);
      // A mark between blocks for V8's --trace-* output (TSMPI_RANK_NODE_FLAGS), which is written as it happens;
      // the time is on the clock of --cpu-prof's sample timestamps (monotonic microseconds).
      if (withCounters) process.stdout.write(`### rank ${comm.rank} end of block ${b + 1} at ${process.hrtime.bigint() / 1000n} us\n`);
    }
    countingTurns = false;
    if (comm.rank === 0) {
      console.log(`start-up to the end of init: ${initWallMs.toFixed(0)} ms wall, ${((initCpu.user + initCpu.system) / 1000).toFixed(0)} ms cpu${prewarmLine}`);
      console.log(`iterations\telapsed\trate\tcpu per iteration (rank 0)\n${lines.join('\n')}`);
    }
  }
  await MPI.finalize();
}
