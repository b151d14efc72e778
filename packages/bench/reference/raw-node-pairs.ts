/**
 * raw-node.ts msgrate with N pairs at once, with no MPI at all: whether Node
 * lets threads that own their sockets run as fast as processes (the floor
 * under "an endpoint performs like a process", docs/adr/0019, issue 16).
 *
 *   npx tsx packages/bench/reference/raw-node.ts msgrate --threads N [--unix] [--iterations N] [--warmup N]
 *   npx tsx packages/bench/reference/raw-node.ts msgrate --pairs N [--unix] [--iterations N] [--warmup N]
 *
 * --threads N: two processes with N worker_threads each; thread i of one and
 * thread i of the other run raw-node.ts's msgrate kernel (12 frames of 32
 * bytes each way per iteration, one write per batch, both sides write first)
 * over a socket of their own (Unix-domain with --unix, else TCP loopback).
 * The threads share nothing: each has its own socket, event loop and timer.
 * --pairs N: the same kernel in 2N single-threaded processes, N independent
 * pairs: N plain Node programs per side, what the threads are measured against.
 *
 * Every kernel connects first and then waits for one start signal sent to all
 * (so the pairs run at the same time), runs --warmup untimed iterations
 * (default 10, as raw-node.ts) and --iterations timed ones (default 10,000).
 * The invoking process only coordinates (it idles while the kernels run).
 * Printed: the aggregate rate (N x 12 x iterations / the slowest pair's time),
 * the slowest and fastest pair's own rate, and the CPU time of the side
 * processes from the start signal until they are stopped (after the last
 * pair's end), per message (both directions, warm-up included): load changes
 * it less than the rate.
 * Setup messages cross threads and processes; the timed loop never does.
 */
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { FRAME, WINDOW, frameCounter } from './raw-frames.ts';

const SELF = fileURLToPath(import.meta.url);
const SIDE_FLAG = '--raw-node-side';

/** What the coordinator asks for. */
export interface PairsPlan {
  /** kernels (pairs) in the run */
  readonly pairs: number;
  /** true: one process per side, a worker thread per kernel; false: a process per kernel */
  readonly threads: boolean;
  readonly unix: boolean;
  readonly iterations: number;
  readonly warmup: number;
}

/** One kernel's part: which side of pair `index`, and where the server side listens (a Unix path, or '' for a TCP port of its choice). */
interface KernelSpec {
  readonly side: 'server' | 'client';
  readonly index: number;
  readonly where: string;
  readonly iterations: number;
  readonly warmup: number;
}

/** Kernel -> side process -> coordinator. */
type Report =
  | { readonly type: 'listening'; readonly index: number; readonly where: string }
  | { readonly type: 'ready'; readonly index: number }
  | { readonly type: 'done'; readonly index: number; readonly ms: number }
  | { readonly type: 'cpu'; readonly us: number };

/** Coordinator -> side process -> kernel. */
type Command = { readonly type: 'go' } | { readonly type: 'stop' };

/**
 * Runs one side of one pair on this thread: listens or connects, reports, and on go() runs the
 * kernel; the server side times it and reports 'done'. Returns go and stop.
 */
function startKernel(spec: KernelSpec, report: (r: Report) => void): { go(): void; stop(): void } {
  const batch = Buffer.alloc(WINDOW * FRAME);
  let sock: net.Socket | null = null;
  let server: net.Server | null = null;
  /** The server side once it has timed its iterations: the client's end (it is stopped first) is no error then. */
  let isFinished = false;
  const fail = (err: Error): void => {
    if (isFinished) return;
    console.error(`raw-node pairs: ${spec.side} ${spec.index}: ${err.message}`);
    process.exit(1);
  };
  const attach = (s: net.Socket): void => {
    sock = s;
    s.setNoDelay(true);
    s.on('error', fail);
    let done = -spec.warmup;
    let t0 = performance.now();
    s.on('data', frameCounter(WINDOW, () => {
      if (spec.side === 'server') {
        if (++done === 0) t0 = performance.now();
        if (done === spec.iterations) {
          isFinished = true;
          report({ type: 'done', index: spec.index, ms: performance.now() - t0 });
          return;
        }
      }
      s.write(batch);
    }));
    report({ type: 'ready', index: spec.index });
  };
  if (spec.side === 'server') {
    server = net.createServer((s) => {
      server!.close();
      attach(s);
    });
    server.on('error', fail);
    const listening = (): void => {
      const a = server!.address();
      report({ type: 'listening', index: spec.index, where: typeof a === 'string' ? a : String(a!.port) });
    };
    if (spec.where === '') server.listen(0, '127.0.0.1', listening);
    else server.listen(spec.where, listening);
  } else {
    const s = /^[0-9]+$/.test(spec.where) ? net.connect(Number(spec.where), '127.0.0.1') : net.connect(spec.where);
    s.on('error', fail);
    s.once('connect', () => attach(s));
  }
  return {
    go: () => sock!.write(batch),
    stop: () => {
      sock?.destroy();
      server?.close();
    },
  };
}

/** A worker thread running this file's kernel: Node 20 does not load a worker's .ts entry through tsx, so register it first. */
function kernelThread(spec: KernelSpec): Worker {
  const code = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((api) => { api.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  return new Worker(code, { eval: true, workerData: { rawNodeKernel: spec } });
}

/** A side process: runs its kernels (in worker threads, or one on its main thread) and relays reports and commands. */
function sideMain(specs: readonly KernelSpec[], useThreads: boolean): void {
  const onReport = (r: Report): void => {
    process.send!(r);
  };
  let cpuAtGo: NodeJS.CpuUsage | null = null;
  let isStopping = false;
  const kernels: { go(): void; stop(): void }[] = [];
  if (useThreads) {
    for (const spec of specs) {
      const w = kernelThread(spec);
      w.on('message', (r: Report) => onReport(r));
      w.on('error', (err) => {
        console.error(`raw-node pairs: thread ${spec.index}: ${err.message}`);
        process.exit(1);
      });
      w.on('exit', (code) => {
        if (!isStopping) {
          console.error(`raw-node pairs: thread ${spec.index} ended (exit code ${code})`);
          process.exit(1);
        }
      });
      kernels.push({ go: () => w.postMessage({ type: 'go' }), stop: () => void w.terminate() });
    }
  } else {
    for (const spec of specs) kernels.push(startKernel(spec, onReport));
  }
  process.on('message', (c: Command) => {
    if (c.type === 'go') {
      cpuAtGo = process.cpuUsage();
      for (const k of kernels) k.go();
      return;
    }
    // Stopped once every pair is done: the time after its kernels ended idles and costs next to no CPU.
    const cpu = process.cpuUsage(cpuAtGo ?? undefined);
    isStopping = true;
    for (const k of kernels) k.stop();
    process.send!({ type: 'cpu', us: cpu.user + cpu.system } satisfies Report, () => process.exit(0));
  });
  // No orphans: a side whose coordinator is gone ends.
  process.on('disconnect', () => process.exit(0));
}

/** Kernel specs from the side process's command line: --raw-node-side SIDE ITERATIONS WARMUP THREADS(0|1) INDEX=WHERE... */
function parseSide(argv: readonly string[]): { specs: KernelSpec[]; useThreads: boolean } {
  const at = argv.indexOf(SIDE_FLAG);
  const [side, iterations, warmup, threads, ...kernels] = argv.slice(at + 1);
  const specs = kernels.map((k) => {
    const eq = k.indexOf('=');
    return { side: side as 'server' | 'client', index: Number(k.slice(0, eq)), where: k.slice(eq + 1), iterations: Number(iterations), warmup: Number(warmup) };
  });
  return { specs, useThreads: threads === '1' };
}

/** Forks a side process for `kernels` (index=where). */
function forkSide(plan: PairsPlan, side: 'server' | 'client', kernels: readonly string[]): ChildProcess {
  const child = fork(SELF, [SIDE_FLAG, side, String(plan.iterations), String(plan.warmup), plan.threads ? '1' : '0', ...kernels], { execArgv: process.execArgv });
  child.on('exit', (code, signal) => {
    if (code !== 0) {
      console.error(`raw-node pairs: a ${side} process exited with ${code ?? signal}`);
      process.exit(1);
    }
  });
  return child;
}

/** The coordinator: starts the sides, starts every kernel at once, prints the aggregate. */
export async function pairsMain(plan: PairsPlan): Promise<void> {
  const N = plan.pairs;
  const unixDir = plan.unix ? fs.mkdtempSync(path.join(os.tmpdir(), 'raw-node-pairs-')) : null;
  const where = (i: number): string => (unixDir === null ? '' : path.join(unixDir, `k${i}`));
  const indices = Array.from({ length: N }, (_, i) => i);
  const groups = plan.threads ? [indices] : indices.map((i) => [i]);
  const listening = new Array<string>(N);
  const ms = new Array<number>(N);
  let cpuUs = 0;
  let cpuReports = 0;
  let listened = 0;
  let ready = 0;
  let done = 0;
  const children: ChildProcess[] = [];
  let resolveListening!: () => void;
  let resolveReady!: () => void;
  let resolveDone!: () => void;
  const allListening = new Promise<void>((r) => (resolveListening = r));
  const allReady = new Promise<void>((r) => (resolveReady = r));
  const allDone = new Promise<void>((r) => (resolveDone = r));
  let resolveCpu!: () => void;
  const allCpu = new Promise<void>((r) => (resolveCpu = r));
  const onReport = (r: Report): void => {
    if (r.type === 'listening') {
      listening[r.index] = r.where;
      if (++listened === N) resolveListening();
    } else if (r.type === 'ready') {
      if (++ready === 2 * N) resolveReady();
    } else if (r.type === 'done') {
      ms[r.index] = r.ms;
      if (++done === N) resolveDone();
    } else {
      cpuUs += r.us;
      if (++cpuReports === children.length) resolveCpu();
    }
  };
  for (const g of groups) {
    const c = forkSide(plan, 'server', g.map((i) => `${i}=${where(i)}`));
    c.on('message', onReport);
    children.push(c);
  }
  await allListening;
  for (const g of groups) {
    const c = forkSide(plan, 'client', g.map((i) => `${i}=${listening[i]}`));
    c.on('message', onReport);
    children.push(c);
  }
  await allReady;
  for (const c of children) c.send({ type: 'go' } satisfies Command);
  await allDone;
  // Clients first: a server that has finished takes its client's end for what it is; a client would not.
  const exited = (c: ChildProcess): Promise<unknown> | null => (c.exitCode !== null ? null : new Promise((resolve) => c.once('exit', resolve)));
  const clients = children.slice(groups.length);
  for (const c of clients) c.send({ type: 'stop' } satisfies Command);
  await Promise.all(clients.map(exited));
  for (const c of children.slice(0, groups.length)) c.send({ type: 'stop' } satisfies Command);
  await allCpu;
  await Promise.all(children.map(exited));
  if (unixDir !== null) fs.rmSync(unixDir, { recursive: true, force: true });
  const perPair = WINDOW * plan.iterations;
  const slowest = Math.max(...ms);
  const fastest = Math.min(...ms);
  const rate = (messages: number, t: number): string => (messages / (t / 1000) / 1e6).toFixed(3);
  const messagesBothWays = 2 * N * WINDOW * (plan.iterations + plan.warmup);
  console.log(
    `raw-node msgrate ${plan.threads ? 'threads' : 'pairs'} ${N}: ${rate(N * perPair, slowest)} M messages/s aggregate ` +
      `(pairs ${rate(perPair, slowest)}-${rate(perPair, fastest)}; CPU ${(cpuUs / messagesBothWays).toFixed(2)} us/message; ` +
      `${WINDOW} x ${plan.iterations} iterations per pair, ${plan.threads ? `2 processes x ${N} threads` : `${2 * N} processes`}, ${plan.unix ? 'unix' : 'tcp'})`,
  );
}

if (!isMainThread && (workerData as { rawNodeKernel?: KernelSpec } | null)?.rawNodeKernel !== undefined) {
  const spec = (workerData as { rawNodeKernel: KernelSpec }).rawNodeKernel;
  const port = parentPort!;
  const k = startKernel(spec, (r) => port.postMessage(r));
  port.on('message', (c: Command) => {
    if (c.type === 'go') k.go();
    else k.stop();
  });
} else if (isMainThread && process.argv.includes(SIDE_FLAG)) {
  const { specs, useThreads } = parseSide(process.argv);
  sideMain(specs, useThreads);
}
