/**
 * What one hop between two Node threads costs on this machine, with no MPI at
 * all: the floor under tsmpi's `--progress threads` (docs/PERFORMANCE.md §4.4).
 *
 *   npx tsx packages/bench/src/thread-hop.ts [--iterations N]
 *
 * wake: two threads hand a token back and forth through one shared word; the
 * median round trip (two wake-ups) for each way of sleeping: Atomics.waitAsync
 * in both (what tsmpi's threads use: an event loop must keep running),
 * Atomics.wait in both (a blocked thread), MessagePort.
 *
 * msgrate: the raw-node.ts msgrate kernel (two processes, 12 frames of 32 bytes
 * each way per iteration over one loopback socket) twice: 'inline', the main
 * thread owns the socket; 'engine', a worker thread owns it and the main thread
 * asks it to send and is told when the peer's frames are in, through shared
 * words and Atomics.waitAsync (the shape of tsmpi's channel engines, nothing
 * else). The ratio engine / inline bounds what threads progress can keep of
 * inline progress on this machine.
 */
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, isMainThread, workerData, type MessagePort } from 'node:worker_threads';
import { median } from './stats.ts';

const FRAME = 32;
const WINDOW = 12;
const self = fileURLToPath(import.meta.url);
const argv = process.argv.slice(2);
const itIdx = argv.indexOf('--iterations');
const iterations = itIdx >= 0 ? Number(argv[itIdx + 1]) : 10_000;
if (argv.includes('--help') || argv.includes('-h')) {
  console.log('usage: npx tsx packages/bench/src/thread-hop.ts [--iterations N]\n\nRound trip between two Node threads (waitAsync, wait, MessagePort) and the raw-socket message rate with the socket in the main thread vs in a worker thread.');
  process.exit(0);
}

type WaitAsync = (a: Int32Array, i: number, v: number) => { async: boolean; value: Promise<unknown> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
/** Resolves once word `i` no longer holds `v`. */
async function changed(a: Int32Array, i: number, v: number): Promise<void> {
  while (Atomics.load(a, i) === v) {
    const r = waitAsync(a, i, v);
    if (r.async) await r.value;
  }
}
function set(a: Int32Array, i: number, v: number): void {
  Atomics.store(a, i, v);
  Atomics.notify(a, i);
}
const keepAlive = (): NodeJS.Timeout => setInterval(() => {}, 1 << 30);

/** A worker thread running this file: Node 20 does not load a worker's .ts entry through tsx, so register it first. */
function thread(boot: Boot, transferList: MessagePort[] = []): Worker {
  const code = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((api) => { api.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  return new Worker(code, { eval: true, workerData: boot, transferList });
}

// Word layout of the shared page. wake: TOKEN. msgrate engine: SEND (main -> engine: batches to write),
// GOT (engine -> main: the peer's batches in), SENT, PORT (engine -> main: its listening port, then -1 once connected).
const TOKEN = 0;
const SEND = 1;
const GOT = 2;
const PORT = 3;
/** engine -> main: batches written (a side must not exit before its last batch is on the wire) */
const SENT = 4;

interface Boot { role: 'wake-async' | 'wake-sync' | 'wake-port' | 'engine'; words: Int32Array; port?: MessagePort; socketPort?: number; rounds: number }

if (!isMainThread) {
  await threadMain(workerData as Boot);
} else if (argv.includes('--one')) {
  console.log(`rate ${await msgrate(argv.includes('engine') ? 'engine' : 'inline')}`);
  process.exit(0);
} else if (argv.includes('--peer')) {
  await msgratePeer(argv.includes('engine') ? 'engine' : 'inline');
} else {
  await lead();
}

async function lead(): Promise<void> {
  const rounds = Math.min(iterations, 20_000);
  for (const kind of ['wake-async', 'wake-sync', 'wake-port'] as const) {
    const times = await wake(kind, rounds);
    console.log(`thread-hop ${kind}: round trip median ${(median(times) * 1000).toFixed(1)} us (${rounds} round trips, 2 wake-ups each)`);
  }
  const rates = { inline: [] as number[], engine: [] as number[] };
  // Interleaved, so that drift of a shared machine hits both alike.
  for (const mode of ['inline', 'engine', 'inline', 'engine', 'inline', 'engine'] as const) {
    // Each run in a fresh pair of processes: nothing of one run's threads and sockets is left for the next.
    const run = fork(self, ['--one', mode, '--iterations', String(iterations)], { execArgv: process.execArgv, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    let out = '';
    run.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => run.once('exit', r));
    const rate = Number(/^rate (\S+)$/m.exec(out)?.[1] ?? NaN);
    rates[mode].push(rate);
    console.log(`thread-hop msgrate ${mode}: ${rate.toFixed(3)} M messages/s (${WINDOW} x ${iterations} iterations)`);
  }
  console.log(`thread-hop msgrate engine / inline (median of 3 each): ${(median(rates.engine) / median(rates.inline)).toFixed(2)}`);
}

/** Round-trip times (ms) of a token between this thread and a worker. */
async function wake(role: Boot['role'], rounds: number): Promise<number[]> {
  const words = new Int32Array(new SharedArrayBuffer(16));
  const { port1, port2 } = new MessageChannel();
  const w = thread({ role, words, port: port2, rounds }, [port2]);
  await new Promise((r) => w.once('online', r));
  const hold = keepAlive();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    if (role === 'wake-port') {
      const back = new Promise((r) => port1.once('message', r));
      port1.postMessage(i);
      await back;
    } else {
      set(words, TOKEN, 2 * i + 1);
      if (role === 'wake-sync') Atomics.wait(words, TOKEN, 2 * i + 1);
      else await changed(words, TOKEN, 2 * i + 1);
    }
    times.push(performance.now() - t0);
  }
  clearInterval(hold);
  port1.close();
  await w.terminate();
  return times;
}

async function threadMain(boot: Boot): Promise<void> {
  const { words } = boot;
  if (boot.role === 'wake-port') {
    boot.port!.on('message', (m) => boot.port!.postMessage(m));
    return;
  }
  if (boot.role === 'engine') return engine(words, boot.socketPort!);
  const hold = keepAlive();
  for (let i = 0; i < boot.rounds; i++) {
    if (boot.role === 'wake-sync') Atomics.wait(words, TOKEN, 2 * i);
    else await changed(words, TOKEN, 2 * i);
    set(words, TOKEN, 2 * i + 2);
  }
  clearInterval(hold);
}

/** A connected socket: listening (the port goes to `onPort`) or connecting to `port`. */
async function open(port: number | null, onPort: (p: number) => void): Promise<net.Socket> {
  let s: net.Socket;
  if (port === null) {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onPort((server.address() as net.AddressInfo).port);
    s = await new Promise<net.Socket>((r) => server.once('connection', r));
    server.close();
  } else {
    s = net.connect(port, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
  }
  s.setNoDelay(true);
  s.on('error', () => {});
  return s;
}

/** Calls `onBatch` for every whole batch of the peer's frames. */
function batches(s: net.Socket, onBatch: () => void): void {
  let bytes = 0;
  s.on('data', (d) => {
    bytes += d.length;
    while (bytes >= WINDOW * FRAME) {
      bytes -= WINDOW * FRAME;
      onBatch();
    }
  });
}

/** The engine thread: owns the socket, writes a batch per SEND step, counts the peer's batches in GOT. */
async function engine(words: Int32Array, port: number): Promise<void> {
  const s = await open(port === 0 ? null : port, (p) => set(words, PORT, p));
  const batch = Buffer.alloc(WINDOW * FRAME);
  batches(s, () => set(words, GOT, words[GOT]! + 1));
  s.on('close', () => process.exit(0));
  set(words, PORT, -1);
  let sent = 0;
  for (;;) {
    await changed(words, SEND, sent);
    while (sent < Atomics.load(words, SEND)) {
      s.write(batch);
      sent++;
    }
    set(words, SENT, sent);
  }
}

/**
 * One side of the kernel: both sides send their batch, then wait for the peer's, `iterations` times.
 * @param port null: listen (the port goes to `onPort`); else connect to it
 * @returns M messages/s
 */
async function kernel(mode: 'inline' | 'engine', port: number | null, onPort: (p: number) => void): Promise<number> {
  const batch = Buffer.alloc(WINDOW * FRAME);
  if (mode === 'engine') {
    const words = new Int32Array(new SharedArrayBuffer(32));
    const w = thread({ role: 'engine', words, socketPort: port ?? 0, rounds: 0 });
    w.unref();
    const hold = keepAlive();
    await changed(words, PORT, 0);
    if (port === null) {
      onPort(Atomics.load(words, PORT));
      await changed(words, PORT, Atomics.load(words, PORT));
    }
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) {
      set(words, SEND, i + 1);
      await changed(words, GOT, i);
    }
    const rate = (WINDOW * iterations) / ((performance.now() - t0) / 1000) / 1e6;
    for (let sent = Atomics.load(words, SENT); sent < iterations; sent = Atomics.load(words, SENT)) await changed(words, SENT, sent);
    clearInterval(hold);
    return rate;
  }
  const s = await open(port, onPort);
  let got = 0;
  const t0 = performance.now();
  return new Promise((resolve) => {
    batches(s, () => {
      if (++got === iterations) {
        resolve((WINDOW * iterations) / ((performance.now() - t0) / 1000) / 1e6);
        s.destroy();
      } else {
        s.write(batch);
      }
    });
    s.write(batch);
  });
}

/** One msgrate run: a peer process listens, this one connects; both run the kernel in `mode`. */
async function msgrate(mode: 'inline' | 'engine'): Promise<number> {
  const child = fork(self, ['--peer', '0', mode, '--iterations', String(iterations)], { execArgv: process.execArgv });
  const port = await new Promise<number>((r) => child.once('message', (m) => r(m as number)));
  const rate = await kernel(mode, port, () => {});
  child.kill();
  return rate;
}

async function msgratePeer(mode: 'inline' | 'engine'): Promise<void> {
  await kernel(mode, null, (p) => process.send!(p));
  process.exit(0);
}
