/**
 * Raw Node.js sockets doing the benchmarks' patterns, with no MPI at all: the
 * ceiling that tsmpi's TCP path is measured against (docs/PERFORMANCE.md).
 *
 *   npx tsx packages/bench/reference/raw-node.ts [msgrate|pingpong] [--iterations N] [--warmup N] [--size BYTES] [--unix]
 *   npx tsx packages/bench/reference/raw-node.ts msgrate --threads N | --pairs N [--unix] [--iterations N] [--warmup N]
 *   npx tsx packages/bench/reference/raw-node.ts allreduce [--np P] [--size BYTES[,BYTES...]] [--iterations N] [--warmup N] [--block N]
 *                                                    [--recv data|onread] [--unix] [--poll]
 *   npx tsx packages/bench/reference/raw-node.ts neighbor-alltoall [--size BYTES] [--iterations N] [--warmup N] [--block N] [--unix] [--poll]
 *   npx tsx packages/bench/reference/raw-node.ts put --call put-lock|put-fence [--size BYTES] [--iterations N] [--warmup N] [--unix] [--poll]
 *
 * msgrate: two processes, one loopback socket; each iteration both sides write
 * 12 frames of 32 bytes (the size of a tsmpi header) in one write and wait for
 * the peer's 12 (both sides send first, as Isend/Irecv/waitall does). pingpong: one 32-byte frame back and forth; mean round trip (the timed loop's time / iterations), then the
 * median, p99 and min round trip, in the words compare.sh parses (no CPU figure: the peer is a child process).
 * --warmup N (msgrate and pingpong): untimed iterations first, as msgrate.ts (default 10) and pingpong.ts
 * (default 100) do, so that compare.sh runs both at the same lengths. --size B (pingpong): B payload bytes
 * after each 32-byte frame, like a tsmpi message of B bytes (default 0).
 *
 * msgrate --threads N: two processes, N worker threads each, thread i of one
 * paired with thread i of the other over a socket of their own; --pairs N: N
 * pairs of single-threaded processes; both print the aggregate rate
 * (raw-node-pairs.ts).
 *
 * --unix: the processes talk over Unix-domain sockets (files in a fresh
 * temporary directory, removed at the end) instead of TCP loopback, the socket
 * kind tsmpi's same-host ranks use (docs/adr/0012-same-host-unix-sockets.md);
 * the printed line then says "unix".
 *
 * allreduce: the floor for MPI_Allreduce(SUM of FLOAT64) among P processes
 * (--np, a power of two, default 4; this one, rank 0, forks ranks 1 to P - 1), to compare with allreduce.ts. The ranks
 * form a full mesh of loopback sockets (the fork IPC channel only carries the
 * listening addresses at set-up) and run the algorithms MPI libraries use for a
 * power-of-two process count: recursive doubling below 64 KiB, Rabenseifner
 * (reduce-scatter by recursive halving, then allgather by recursive doubling)
 * from 64 KiB up. Defaults: sizes 8 and 8388608 bytes; 1000 timed calls
 * (sizes of 64 KiB and more run max(10, N * 64 KiB / size)); 2000 warm-up calls
 * below 64 KiB, 5 above (a --warmup W runs W below 64 KiB and max(2, min(W, calls))
 * above, as allreduce.ts does). Rank 0 times the loop of calls and each call, and prints
 * the mean per call (the loop's time / calls), in microseconds (and size / mean in MB/s
 * from 64 KiB up), the median, p99 and min per-call times and, as
 * allreduce.ts and allreduce.c do, the CPU time (user + system) per timed call
 * summed over the 4 processes, in the words compare.sh parses; then one call
 * with input rank + 1 + (i % 7) is checked element by element.
 *
 * --block N (allreduce, neighbor-alltoall): rank 0 also prints the mean per call of each block of N timed
 * calls and the median of those means.
 *
 * neighbor-alltoall: the floor for MPI_Neighbor_alltoall of BYTES (default 1024) to each neighbour on
 * a periodic 2 x 2 Cartesian grid of 4 processes (collective.ts --call neighbor-alltoall), run like
 * allreduce (same mesh, loop, defaults and result words); each call is one exchange of two blocks with
 * each of the rank's two peers (neighborAlltoall below).
 *
 * put --call put-lock|put-fence: the floor for put.ts between 2 processes, run like allreduce (same mesh,
 * result words and check) with put.ts's defaults (1000 epochs, 50 warm-up; SIZE 8 for put-lock, 1 MiB for
 * put-fence), the frames tsmpi sends (docs/adr/0045). put-lock: rank 0 sends one request frame (32-byte
 * header, 8-byte displacement, SIZE bytes) and rank 1, once it has the whole frame, answers with one
 * frame of one status byte: one round trip per epoch. put-fence: rank 0 sends a 32-byte header and SIZE
 * bytes, then a 32-byte notice behind them, and rank 1 sends its own notice at once, as a fence of two
 * members does (win-origin.ts noticeExchange): an epoch ends for rank 0 with rank 1's notice, for rank 1
 * with the data and the notice behind it. Rank 1 receives into its "window" with a copy (Node's 'data'
 * reads; tsmpi's transport reads a large Put straight into the window).
 *
 * --poll (allreduce, neighbor-alltoall, put; pingpong: both sides for the whole exchange): each call waits the way tsmpi's blocking calls do at their
 * defaults (packages/core/src/api/wait-poll.ts and poll-policy.ts) instead of
 * sleeping in epoll: while a call is in progress a setImmediate turn stays
 * queued, so libuv checks the sockets without sleeping, and each turn calls
 * sched_yield (core's own, packages/core/src/util/sched-yield.ts), in every turn
 * when the 4 processes outnumber the cores (where, as in tsmpi, calls of 512 KiB
 * or more sleep instead), else after the first 10 turns of a call. That is the floor for tsmpi's way of waiting; without --poll, the floor
 * for Node's own. The printed line then ends in "poll".
 *
 * --recv picks how allreduce receives, to tell how much Node's per-read Buffer
 * costs. data (the default): one socket per pair of ranks, used both ways, read
 * with socket.on('data') (a fresh Buffer per read). onread: Node takes the
 * `onread: { buffer, callback }` option (reads into one reused buffer) only on
 * net.connect's sockets, not on a server's accepted ones, so every pair has two
 * sockets: each rank connects to every other rank and reads only from the
 * sockets it connected (one reused 1 MiB buffer per rank), and writes only to
 * the sockets it accepted (identified by the 4-byte hello the connector sends
 * first). The callback copies each read into the posted receive, or into a
 * growable holding buffer when nothing is posted yet. The printed line ends in
 * "recv data" or "recv onread".
 */
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pairsMain } from './raw-node-pairs.ts';
import { FRAME, WINDOW, frameCounter } from './raw-frames.ts';
import { mean, median, summarizeCalls } from '../src/stats.ts';

const MODES = ['pingpong', 'allreduce', 'neighbor-alltoall', 'put'] as const;
const mode = (MODES as readonly string[]).includes(process.argv[2] ?? '') ? (process.argv[2] as (typeof MODES)[number]) : 'msgrate';
/** allreduce, neighbor-alltoall and put: the modes that fork their ranks and share allreduceMain. */
const collective = mode === 'allreduce' || mode === 'neighbor-alltoall' || mode === 'put';
const itIdx = process.argv.indexOf('--iterations');
/** allreduce only: how the ranks receive (see the top comment). */
type RecvMode = 'data' | 'onread';
const iterations = itIdx > 0 ? Number(process.argv[itIdx + 1]) : mode === 'msgrate' ? 10_000 : mode === 'pingpong' ? 20_000 : 1000;
/** msgrate and pingpong: untimed iterations first, with the defaults of msgrate.ts and pingpong.ts. */
const p2pWarmup = process.argv.includes('--warmup') ? Number(process.argv[process.argv.indexOf('--warmup') + 1]) : mode === 'pingpong' ? 100 : 10;
/** pingpong: payload bytes after each frame (a tsmpi message of that size); msgrate sends bare frames. */
const p2pPayload = mode === 'pingpong' && process.argv.includes('--size') ? Number(process.argv[process.argv.indexOf('--size') + 1]) : 0;
/** pingpong --poll: both sides keep their event loop turning for the whole exchange, as tsmpi's blocking calls wait. */
const pingpongPolls = mode === 'pingpong' && process.argv.includes('--poll');
if (!collective && (![iterations, p2pWarmup, p2pPayload].every((n) => Number.isInteger(n) && n >= 0) || iterations === 0)) {
  console.error('raw-node: --iterations must be a positive integer, --warmup and --size non-negative integers');
  process.exit(2);
}

/** Processes in allreduce mode (--np, default 4); the algorithms below need a power of two. neighbor-alltoall: 4; put: 2. */
const npArg = flag('np');
const P = npArg !== undefined ? Number(npArg) : mode === 'put' ? 2 : 4;
if (mode === 'allreduce' && !(Number.isInteger(P) && P >= 2 && P <= 64 && (P & (P - 1)) === 0)) {
  console.error(`raw-node: --np must be a power of two from 2 to 64 (got '${npArg}')`);
  process.exit(2);
}
if (mode === 'neighbor-alltoall' && P !== 4) {
  console.error(`raw-node: neighbor-alltoall runs the periodic 2 x 2 grid, --np 4 (got '${npArg}')`);
  process.exit(2);
}
type PutCall = 'put-lock' | 'put-fence';
const callArg = mode === 'put' ? flag('call') : undefined;
if (mode === 'put' && (P !== 2 || (callArg !== 'put-lock' && callArg !== 'put-fence'))) {
  console.error(`raw-node: put runs --call put-lock or put-fence on 2 processes (got --call '${callArg ?? ''}', --np ${P})`);
  process.exit(2);
}
/** put: put.ts's call (--call); undefined in the other modes. */
const putCall = callArg as PutCall | undefined;
/** Below this many bytes: recursive doubling; from here up: Rabenseifner (as in MPICH and Open MPI). */
const LARGE_BYTES = 64 * 1024;

/**
 * Byte-counted receives from one peer. Messages in each direction arrive in
 * order and every step's length is known, so a receive is "the next N bytes".
 */
interface Receiver {
  /** Resolves once the next `target.length` bytes from the peer are in `target`. */
  recv(target: Uint8Array): Promise<void>;
}

/**
 * --recv data: plain `socket.on('data')`, copying each chunk into the posted
 * (preallocated, reused) buffer. A 'data' chunk is a fresh Buffer, so bytes
 * that arrive before their receive is posted (a peer already in its next step
 * or call) are kept by reference and copied once the receive is posted.
 */
class Inbox implements Receiver {
  private readonly early: Buffer[] = [];
  private target: Uint8Array | null = null;
  private filled = 0;
  private done: (() => void) | null = null;

  constructor(socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => this.push(chunk));
  }

  /** Resolves once the next `target.length` bytes from the peer are in `target`. */
  recv(target: Uint8Array): Promise<void> {
    if (this.target !== null) throw new Error('a receive is already posted on this socket');
    let filled = 0;
    while (this.early.length > 0 && filled < target.length) {
      const chunk = this.early[0]!;
      const take = Math.min(chunk.length, target.length - filled);
      target.set(chunk.subarray(0, take), filled);
      filled += take;
      if (take === chunk.length) this.early.shift();
      else this.early[0] = chunk.subarray(take);
    }
    if (filled === target.length) return Promise.resolve();
    this.target = target;
    this.filled = filled;
    return new Promise((resolve) => {
      this.done = resolve;
    });
  }

  private push(chunk: Buffer): void {
    const target = this.target;
    if (target === null) {
      this.early.push(chunk);
      return;
    }
    const take = Math.min(chunk.length, target.length - this.filled);
    target.set(take === chunk.length ? chunk : chunk.subarray(0, take), this.filled);
    this.filled += take;
    if (take < chunk.length) this.early.push(chunk.subarray(take));
    if (this.filled === target.length) {
      const done = this.done!;
      this.target = null;
      this.done = null;
      done();
    }
  }
}

/**
 * --recv onread: fed by a `net.connect` socket's `onread` callback, whose buffer
 * is reused for the next read, so `push` consumes each read synchronously: into
 * the posted receive, or (nothing posted yet, or bytes beyond it) by copying into
 * a holding buffer, allocated once and grown on demand. While a receive is posted
 * the holding buffer is empty (`recv` drains it first), so order is kept.
 */
class ReadInbox implements Receiver {
  private held = Buffer.allocUnsafe(64 * 1024);
  /** The held bytes are held[heldStart, heldEnd). */
  private heldStart = 0;
  private heldEnd = 0;
  private target: Uint8Array | null = null;
  private filled = 0;
  private done: (() => void) | null = null;

  recv(target: Uint8Array): Promise<void> {
    if (this.target !== null) throw new Error('a receive is already posted on this socket');
    const filled = Math.min(this.heldEnd - this.heldStart, target.length);
    if (filled > 0) {
      target.set(this.held.subarray(this.heldStart, this.heldStart + filled), 0);
      this.heldStart += filled;
      if (this.heldStart === this.heldEnd) this.heldStart = this.heldEnd = 0;
    }
    if (filled === target.length) return Promise.resolve();
    this.target = target;
    this.filled = filled;
    return new Promise((resolve) => {
      this.done = resolve;
    });
  }

  /** Takes bytes [0, nread) of the onread buffer; they are not looked at again after this returns. */
  push(nread: number, buf: Uint8Array): void {
    const target = this.target;
    let take = 0;
    if (target !== null) {
      take = Math.min(nread, target.length - this.filled);
      target.set(take === buf.length ? buf : buf.subarray(0, take), this.filled);
      this.filled += take;
      if (this.filled === target.length) {
        const done = this.done!;
        this.target = null;
        this.done = null;
        done();
      }
    }
    if (take < nread) this.hold(buf.subarray(take, nread));
  }

  private hold(bytes: Uint8Array): void {
    const count = this.heldEnd - this.heldStart;
    if (this.heldEnd + bytes.length > this.held.length) {
      if (count + bytes.length <= this.held.length) {
        this.held.copyWithin(0, this.heldStart, this.heldEnd);
      } else {
        const grown = Buffer.allocUnsafe(Math.max(2 * this.held.length, count + bytes.length));
        this.held.copy(grown, 0, this.heldStart, this.heldEnd);
        this.held = grown;
      }
      this.heldStart = 0;
      this.heldEnd = count;
    }
    this.held.set(bytes, this.heldEnd);
    this.heldEnd += bytes.length;
  }
}

/**
 * A rank's connections, an entry for every peer other than itself (none at `rank`):
 * `socks[peer]` is written to, `inboxes[peer]` receives. `all` lists every socket,
 * to close: with --recv data `socks` alone, with onread also the sockets read from.
 */
interface Mesh {
  readonly rank: number;
  readonly socks: net.Socket[];
  readonly inboxes: Receiver[];
  readonly all: net.Socket[];
}

/** Where a rank listens: a TCP port on 127.0.0.1, or (--unix) a Unix-domain socket path. */
type Address = number | string;

/** Resolves when the whole of `data` has been handed to the kernel, so its memory may be reused (as MPI's send completion). */
function send(sock: net.Socket, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    sock.write(data, (err) => (err ? reject(err) : resolve()));
  });
}

/** Elements [lo, hi) of `a` as bytes, without copying. */
function bytes(a: Float64Array, lo: number, hi: number): Buffer {
  return Buffer.from(a.buffer, a.byteOffset + lo * 8, (hi - lo) * 8);
}

/** out[i] = lower-rank value + higher-rank value over [lo, hi), the same order on both ranks of a pair. */
function addInto(out: Float64Array, theirs: Float64Array, lo: number, hi: number, mineIsLower: boolean): void {
  if (mineIsLower) for (let i = lo; i < hi; i++) out[i] = out[i]! + theirs[i]!;
  else for (let i = lo; i < hi; i++) out[i] = theirs[i]! + out[i]!;
}

/** One exchange with `peer`: send `outgoing`, receive into `incoming`, wait for both. */
function exchange(mesh: Mesh, peer: number, outgoing: Buffer, incoming: Buffer): Promise<unknown> {
  return Promise.all([send(mesh.socks[peer]!, outgoing), mesh.inboxes[peer]!.recv(incoming)]);
}

/**
 * --poll: keeps the event loop turning while a call waits, yielding the core in
 * each turn, as tsmpi's blocking calls do at their defaults (wait-poll.ts: one
 * setImmediate turn queued at a time; poll-policy.ts: with more processes than
 * cores every turn yields, else the first `spinTurns` turns of a call do not).
 * tsmpi also stops polling waitPollMs after a call began; a benchmark's calls
 * are far shorter than that, so this one polls until the call ends. As in
 * tsmpi, bulk traffic sleeps where processes outnumber cores (wait-poll.ts:
 * messages of BULK_BYTES or more; docs/adr/0006).
 */
class WaitPoller {
  private inCall = false;
  /** Whether a turn is queued; never more than one. */
  private queued = false;
  private turns = 0;
  private readonly yieldCore: () => unknown;
  /** Turns of a call that do not yield. */
  private readonly spinTurns: number;
  /** Whether calls of BULK_BYTES or more sleep instead (more processes than cores). */
  readonly bulkSleeps: boolean;

  constructor(yieldCore: () => unknown, oversubscribed: boolean) {
    this.yieldCore = yieldCore;
    // poll-policy.ts: yield in every turn when oversubscribed, else after waitSpinTurns' default, 10.
    this.spinTurns = oversubscribed ? 0 : 10;
    this.bulkSleeps = oversubscribed;
  }

  /** A call begins: poll until `end`. */
  begin(): void {
    this.inCall = true;
    this.turns = 0;
    if (!this.queued) {
      this.queued = true;
      setImmediate(this.turn);
    }
  }

  /** The call ended: the next turn is the last. */
  end(): void {
    this.inCall = false;
  }

  private readonly turn = (): void => {
    if (!this.inCall) {
      this.queued = false;
      return;
    }
    if (++this.turns > this.spinTurns) this.yieldCore();
    setImmediate(this.turn);
  };
}

/** A WaitPoller for `processes` processes on this machine (--poll). */
async function loadPoller(processes: number): Promise<WaitPoller> {
  // Core's own sched_yield, loaded by path: core does not export it, and this benchmark runs from the repository.
  const source = new URL('../../core/src/util/sched-yield.ts', import.meta.url).href;
  const { schedYield } = (await import(source)) as { schedYield: () => (() => number) | null };
  const yieldCore = schedYield();
  if (yieldCore === null) fail('--poll needs sched_yield, which this Node does not offer (node:wasi)');
  return new WaitPoller(yieldCore, processes > os.availableParallelism());
}

/** Set by --poll (allreduceMain): each allreduce call polls while it waits; null: calls sleep in epoll. */
let poller: WaitPoller | null = null;
/** tsmpi's threshold of bulk traffic (BULK_BYTES in packages/core/src/api/wait-poll.ts). */
const BULK_BYTES = 512 * 1024;

/** MPI_Allreduce(send, out, n, MPI_DOUBLE, MPI_SUM) over the mesh, waiting as --poll says. */
function allreduce(mesh: Mesh, send: Float64Array, out: Float64Array, tmp: Float64Array): Promise<void> {
  return waited(send.length * 8, () => allreduceSteps(mesh, send, out, tmp));
}

/** Runs one call's exchanges of `callBytes`, polling while they wait when --poll says so. */
async function waited(callBytes: number, steps: () => Promise<void>): Promise<void> {
  if (poller === null || (poller.bulkSleeps && callBytes >= BULK_BYTES)) return steps();
  poller.begin();
  try {
    await steps();
  } finally {
    poller.end();
  }
}

/**
 * MPI_Neighbor_alltoall of n doubles per neighbour on a periodic 2 x 2 Cartesian grid (collective.ts's
 * neighbor-alltoall at 4 processes). A rank's neighbours, in MPI's order (each dimension's -1 then +1),
 * are rank ^ 2 twice and rank ^ 1 twice, so a call is one exchange of two blocks with each of two peers.
 */
function neighborAlltoall(mesh: Mesh, send: Float64Array, recv: Float64Array, n: number): Promise<void> {
  const { rank } = mesh;
  return waited(send.length * 8, async () => {
    await Promise.all([
      exchange(mesh, rank ^ 2, bytes(send, 0, 2 * n), bytes(recv, 0, 2 * n)),
      exchange(mesh, rank ^ 1, bytes(send, 2 * n, 4 * n), bytes(recv, 2 * n, 4 * n)),
    ]);
  });
}

/** A put.ts epoch's frames on one rank (put mode): what it sends and where it receives (see the top comment). */
interface PutFrames {
  readonly call: PutCall;
  readonly out: Buffer;
  readonly into: Buffer;
}

/** The frames of `call`'s epoch of `size` bytes on `rank`: rank 0's data goes out, rank 1's window takes it in. */
function putFrames(call: PutCall, rank: number, size: number): PutFrames {
  // put-lock: a header, the displacement and the data; answered by a header and a status byte.
  // put-fence: a header and the data, then a notice (a header); the other way, a notice alone.
  const data = call === 'put-lock' ? 32 + 8 + size : 32 + size + 32;
  const answer = call === 'put-lock' ? 32 + 1 : 32;
  return rank === 0 ? { call, out: Buffer.alloc(data, 7), into: Buffer.alloc(answer) } : { call, out: Buffer.alloc(answer, 1), into: Buffer.alloc(data) };
}

/** One epoch of put.ts's call between ranks 0 and 1 (put mode): put-fence is one exchange, put-lock a request then its answer. */
function putEpoch(mesh: Mesh, f: PutFrames): Promise<void> {
  const peer = 1 - mesh.rank;
  return waited(f.out.length + f.into.length, async () => {
    if (f.call === 'put-fence' || mesh.rank === 0) {
      await exchange(mesh, peer, f.out, f.into);
      return;
    }
    await mesh.inboxes[peer]!.recv(f.into);
    await send(mesh.socks[peer]!, f.out);
  });
}

/** The exchanges and sums of one allreduce; `tmp` (n elements) receives the peers' partial sums. */
async function allreduceSteps(mesh: Mesh, send: Float64Array, out: Float64Array, tmp: Float64Array): Promise<void> {
  const { rank } = mesh;
  const n = send.length;
  out.set(send);
  if (n * 8 < LARGE_BYTES) {
    // Recursive doubling: swap the whole vector with rank ^ 1, then rank ^ 2.
    for (let mask = 1; mask < P; mask <<= 1) {
      const peer = rank ^ mask;
      await exchange(mesh, peer, bytes(out, 0, n), bytes(tmp, 0, n));
      addInto(out, tmp, 0, n, rank < peer);
    }
    return;
  }
  // Rabenseifner. Reduce-scatter by recursive halving: at each step keep one half of
  // the current range (the lower rank keeps the lower half), send the other, and add
  // the peer's copy of the kept half. Each rank ends owning the sum of a quarter.
  const steps: { peer: number; keepLo: number; keepHi: number; giveLo: number; giveHi: number }[] = [];
  let lo = 0;
  let hi = n;
  for (let mask = 1; mask < P; mask <<= 1) {
    const peer = rank ^ mask;
    const mid = lo + Math.floor((hi - lo) / 2);
    const [keepLo, keepHi, giveLo, giveHi] = rank < peer ? [lo, mid, mid, hi] : [mid, hi, lo, mid];
    await exchange(mesh, peer, bytes(out, giveLo, giveHi), bytes(tmp, keepLo, keepHi));
    addInto(out, tmp, keepLo, keepHi, rank < peer);
    steps.push({ peer, keepLo, keepHi, giveLo, giveHi });
    lo = keepLo;
    hi = keepHi;
  }
  // Allgather by recursive doubling, the steps in reverse: send the (now complete) range
  // kept at that step, receive the peer's straight into place.
  for (let s = steps.length - 1; s >= 0; s--) {
    const { peer, keepLo, keepHi, giveLo, giveHi } = steps[s]!;
    await exchange(mesh, peer, bytes(out, keepLo, keepHi), bytes(out, giveLo, giveHi));
  }
}

/** Prints `message` and ends this rank with status 1 (the others follow: see allreduceMain). */
function fail(message: string): never {
  console.error(`raw-node ${mode}: ${message}`);
  process.exit(1);
}

/**
 * Builds the full mesh: every rank listens on an ephemeral port (with --unix, on
 * socketDir/rank-R), rank 0 gathers the
 * addresses over the fork IPC channel and sends the list to all, then rank i connects to
 * each j < i (--recv data) or to every j != i (onread), sending its rank as a 4-byte
 * hello. Resolves once all of this rank's sockets exist (P - 1 with data, 2 (P - 1)
 * with onread: the connected ones read, the accepted ones written to).
 */
async function connectMesh(
  rank: number, children: readonly ChildProcess[], recvMode: RecvMode, socketDir: string | null,
): Promise<{ mesh: Mesh; server: net.Server }> {
  const socks: net.Socket[] = [];
  const inboxes: Receiver[] = [];
  const all: net.Socket[] = [];
  const onError = (err: Error): never => fail(`rank ${rank}: ${err.message}`);
  const toAccept = recvMode === 'onread' ? P - 1 : P - 1 - rank;
  let accepted = 0;
  let allAccepted!: () => void;
  const acceptedAll = new Promise<void>((resolve) => {
    allAccepted = resolve;
  });
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('error', onError);
    all.push(s);
    const hello = Buffer.alloc(4);
    const identified = (): void => {
      const peer = hello.readUInt32LE(0);
      socks[peer] = s;
      if (++accepted === toAccept) allAccepted();
    };
    if (recvMode === 'data') {
      const inbox = new Inbox(s);
      void inbox.recv(hello).then(() => {
        inboxes[hello.readUInt32LE(0)] = inbox;
        identified();
      });
      return;
    }
    // onread: only the hello comes this way; this rank writes on this socket and reads elsewhere.
    let got = 0;
    s.on('data', (chunk: Buffer) => {
      if (got + chunk.length > hello.length) fail(`rank ${rank}: unexpected data on an accepted socket`);
      hello.set(chunk, got);
      got += chunk.length;
      if (got === hello.length) identified();
    });
  });
  // Listen for the children's addresses before anything else can run, so no message is missed.
  // An address is a TCP port on 127.0.0.1 or (--unix) a socket path.
  const childAddresses = children.map(
    (c) => new Promise<Address>((resolve) => c.once('message', (m) => resolve((m as { address: Address }).address))),
  );
  const addressList = rank === 0 ? null : new Promise<Address[]>((resolve) => process.once('message', (m) => resolve((m as { addresses: Address[] }).addresses)));
  let myAddress: Address;
  if (socketDir === null) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    myAddress = (server.address() as net.AddressInfo).port;
  } else {
    myAddress = path.join(socketDir, `rank-${rank}`);
    await new Promise<void>((resolve) => server.listen(myAddress, resolve));
  }
  let addresses: Address[];
  if (addressList === null) {
    addresses = [myAddress, ...(await Promise.all(childAddresses))];
    for (const c of children) c.send({ addresses });
  } else {
    process.send!({ address: myAddress });
    addresses = await addressList;
  }
  const where = (peer: number): { port: number; host: string } | { path: string } => {
    const a = addresses[peer]!;
    return typeof a === 'number' ? { port: a, host: '127.0.0.1' } : { path: a };
  };
  // onread: one reused buffer for all of this rank's reads; safe to share, as every callback consumes its bytes before returning.
  const readBuffer = recvMode === 'onread' ? Buffer.allocUnsafe(1024 * 1024) : null;
  for (let peer = 0; peer < P; peer++) {
    if (peer === rank || (recvMode === 'data' && peer > rank)) continue;
    let s: net.Socket;
    if (readBuffer === null) {
      s = net.connect(where(peer));
      socks[peer] = s;
      inboxes[peer] = new Inbox(s);
    } else {
      const inbox = new ReadInbox();
      s = net.connect({
        ...where(peer),
        onread: {
          buffer: readBuffer,
          callback: (nread, buf) => {
            inbox.push(nread, buf);
            return true;
          },
        },
      });
      inboxes[peer] = inbox;
    }
    s.setNoDelay(true);
    s.on('error', onError);
    all.push(s);
    const hello = Buffer.alloc(4);
    hello.writeUInt32LE(rank, 0);
    s.write(hello);
  }
  if (toAccept > 0) await acceptedAll;
  return { mesh: { rank, socks, inboxes, all }, server };
}

/**
 * --block N: the mean per call of each whole block of N timed calls, and the median of those means (issue 40's
 * measure: "5 blocks of 400 calls, median block").
 */
function blockLine(samplesSeconds: Float64Array, n: number): string {
  const means: number[] = [];
  for (let from = 0; from + n <= samplesSeconds.length; from += n) means.push(mean(samplesSeconds.subarray(from, from + n)) * 1e6);
  return `blocks of ${n} calls, mean us ${means.map((m) => m.toFixed(2)).join(' ')}; median block ${median(means).toFixed(2)}`;
}

/** The value of `--name`, or undefined. */
function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function allreduceMain(): Promise<void> {
  const rank = Number(flag('rank') ?? 0);
  const defaultSizes = mode === 'allreduce' ? '8,8388608' : putCall === 'put-lock' ? '8' : putCall === 'put-fence' ? '1048576' : '1024';
  const sizes = (flag('size') ?? defaultSizes).split(',').map(Number);
  const recvFlag = flag('recv') ?? 'data';
  if (recvFlag !== 'data' && recvFlag !== 'onread') fail('--recv must be data or onread');
  const recvMode: RecvMode = recvFlag;
  const warmupFlag = flag('warmup');
  const warmupGiven = warmupFlag === undefined ? null : Number(warmupFlag);
  if (sizes.some((s) => !Number.isInteger(s) || s <= 0 || s % 8 !== 0)) fail('--size must be positive multiples of 8 (FLOAT64), comma-separated');
  if (!Number.isInteger(iterations) || iterations < 1) fail('--iterations must be a positive integer');
  if (warmupGiven !== null && (!Number.isInteger(warmupGiven) || warmupGiven < 0)) fail('--warmup must be a non-negative integer');
  const polls = process.argv.includes('--poll');
  const blockCalls = Number(flag('block') ?? 0);
  if (!Number.isInteger(blockCalls) || blockCalls < 0) fail('--block must be a non-negative integer');
  if (polls) poller = await loadPoller(P);

  let finished = false;
  const children: ChildProcess[] = [];
  // --unix: rank 0 makes the directory of the ranks' sockets, tells the others (--socket-dir), and removes it at exit.
  let socketDir = flag('socket-dir') ?? null;
  if (rank === 0 && process.argv.includes('--unix')) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'raw-node-'));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    socketDir = dir;
  }
  if (rank === 0) {
    const passOn = [...process.argv.slice(2), ...(socketDir === null ? [] : ['--socket-dir', socketDir])];
    for (let r = 1; r < P; r++) {
      const child = fork(fileURLToPath(import.meta.url), [...passOn, '--rank', String(r)], { execArgv: process.execArgv });
      // A rank that fails takes the run down; exiting closes the IPC channels, which ends the other children.
      child.on('exit', (code, signal) => {
        if (code !== 0) fail(`rank ${r} exited with ${code ?? signal}`);
      });
      children.push(child);
    }
  } else {
    // No orphans: when rank 0 goes away (or finishes), so does this rank.
    process.on('disconnect', () => {
      if (!finished) process.exit(1);
    });
  }
  const { mesh, server } = await connectMesh(rank, children, recvMode, socketDir);

  const one = [new Float64Array(1), new Float64Array(1), new Float64Array(1)] as const;
  for (const sizeBytes of sizes) {
    const n = sizeBytes / 8;
    const large = sizeBytes >= LARGE_BYTES;
    // put: put.ts's epochs, whatever the size; the collectives scale large sizes' calls down as allreduce.ts does.
    const calls = mode === 'put' ? iterations : large ? Math.max(10, Math.round((iterations * LARGE_BYTES) / sizeBytes)) : iterations;
    const warmup = mode === 'put' ? (warmupGiven ?? 50) : warmupGiven === null ? (large ? 5 : 2000) : large ? Math.max(2, Math.min(warmupGiven, calls)) : warmupGiven;
    const input = new Float64Array(n);
    const fillInput = (): void => {
      for (let i = 0; i < n; i++) input[i] = rank + 1 + (i % 7);
    };
    fillInput();
    const out = new Float64Array(n);
    const tmp = new Float64Array(n);
    // neighbor-alltoall: n doubles to each of the 4 neighbours, each block filled with this rank + 1.
    const blocks = mode === 'neighbor-alltoall' ? new Float64Array(4 * n).fill(rank + 1) : null;
    const blocksIn = blocks === null ? null : new Float64Array(4 * n);
    const frames = putCall === undefined ? null : putFrames(putCall, rank, sizeBytes);
    const call = frames !== null ? () => putEpoch(mesh, frames)
      : blocks === null ? () => allreduce(mesh, input, out, tmp) : () => neighborAlltoall(mesh, blocks, blocksIn!, n);
    for (let i = 0; i < warmup; i++) await call();
    await allreduce(mesh, ...one); // a barrier: no rank gets past it before all have reached it
    const samples = new Float64Array(calls);
    const cpuBefore = process.cpuUsage();
    const loopStart = performance.now();
    for (let i = 0; i < calls; i++) {
      const start = performance.now();
      await call();
      samples[i] = (performance.now() - start) / 1000;
    }
    const loopSeconds = (performance.now() - loopStart) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    // This process's CPU milliseconds per timed call, summed over the ranks by one more allreduce (as allreduce.ts does).
    one[0][0] = (cpu.user + cpu.system) / 1000 / calls;
    await allreduce(mesh, ...one);
    const cpuMillisPerCall = one[1][0]!;
    fillInput();
    out.fill(0);
    await allreduce(mesh, input, out, tmp);
    for (let i = 0; i < n; i++) {
      const expected = (P * (P + 1)) / 2 + P * (i % 7);
      if (out[i] !== expected) fail(`mismatch on rank ${rank} at element ${i} of ${n}: ${out[i]}, expected ${expected}`);
    }
    for (let i = 0; blocksIn !== null && i < 4 * n; i++) {
      const expected = (i < 2 * n ? rank ^ 2 : rank ^ 1) + 1;
      if (blocksIn[i] !== expected) fail(`neighbour block mismatch on rank ${rank} at element ${i}: ${blocksIn[i]}, expected ${expected}`);
    }
    // put: rank 1's window ends in rank 0's 7s; rank 0's answer is rank 1's 1s.
    if (frames !== null && frames.into[frames.into.length - 1] !== (rank === 0 ? 1 : 7)) fail(`rank ${rank} did not receive the peer's bytes`);
    if (rank === 0) {
      const f = summarizeCalls(samples, loopSeconds);
      const bandwidth = large ? `, ${(sizeBytes / f.meanMicros).toFixed(1)} MB/s` : '';
      console.log(
        `raw-node ${putCall ?? mode}: ${sizeBytes}-byte mean ${f.meanMicros.toFixed(2)} us${bandwidth} ` +
          `(median ${f.medianMicros.toFixed(2)}, p99 ${f.p99Micros.toFixed(2)}, min ${f.minMicros.toFixed(2)}; cpu ${cpuMillisPerCall.toFixed(3)} ms per call over all ranks; ` +
          `${calls} calls, ${P} processes, recv ${recvMode}, ${socketDir === null ? 'tcp' : 'unix'}${polls ? ', poll' : ''})`,
      );
      if (blockCalls > 0) console.log(`raw-node ${mode}: ${blockLine(samples, blockCalls)}`);
    }
  }

  finished = true;
  for (const s of mesh.all) s.end();
  server.close();
  if (rank === 0) {
    await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((resolve) => c.once('exit', resolve)))));
  } else {
    process.disconnect();
  }
}

const pairsFlag = mode === 'msgrate' ? (process.argv.includes('--threads') ? 'threads' : process.argv.includes('--pairs') ? 'pairs' : null) : null;
if (pairsFlag !== null) {
  const pairs = Number(flag(pairsFlag));
  if (!Number.isInteger(pairs) || pairs < 1 || pairs > 64) {
    console.error(`raw-node: --${pairsFlag} must be an integer from 1 to 64`);
    process.exit(2);
  }
  pairsMain({ pairs, threads: pairsFlag === 'threads', unix: process.argv.includes('--unix'), iterations, warmup: p2pWarmup }).catch((err: unknown) => {
    console.error(`raw-node msgrate: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
} else if (collective) {
  allreduceMain().catch((err: unknown) => {
    console.error(`raw-node ${mode}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
} else if (process.argv.includes('--peer')) {
  const where = process.argv[process.argv.indexOf('--peer') + 1]!;
  // A number is a TCP port on loopback; anything else is a Unix-domain socket path (--unix).
  const s = /^[0-9]+$/.test(where) ? net.connect(Number(where), '127.0.0.1') : net.connect(where);
  s.setNoDelay(true);
  const batch = Buffer.alloc(mode === 'msgrate' ? WINDOW * FRAME : FRAME + p2pPayload);
  s.on('data', frameCounter(mode === 'msgrate' ? WINDOW : 1, () => s.write(batch), FRAME + p2pPayload));
  s.on('error', () => process.exit(0));
  if (pingpongPolls) void loadPoller(2).then((p) => p.begin());
  // msgrate: like MPI's Isend/Irecv/waitall, both sides send their batch without waiting for the peer's.
  if (mode === 'msgrate') s.on('connect', () => s.write(batch));
} else {
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    if (pingpongPolls) void loadPoller(2).then((p) => { p.begin(); s.once('close', () => p.end()); });
    const batch = Buffer.alloc(mode === 'msgrate' ? WINDOW * FRAME : FRAME + p2pPayload);
    const times: number[] = [];
    let done = -p2pWarmup;
    let t0 = performance.now();
    let tIter = t0;
    s.on('data', frameCounter(mode === 'msgrate' ? WINDOW : 1, () => {
      const now = performance.now();
      if (mode === 'pingpong' && done >= 0) times.push(now - tIter);
      if (++done === 0) t0 = performance.now();
      if (done === iterations) {
        if (mode === 'msgrate') {
          console.log(`raw-node msgrate: ${((WINDOW * iterations) / ((now - t0) / 1000) / 1e6).toFixed(3)} M messages/s (${WINDOW} x ${iterations} iterations, one write per batch, ${unixDir === null ? 'tcp' : 'unix'})`);
        } else {
          const f = summarizeCalls(times.map((ms) => ms / 1000), (now - t0) / 1000);
          console.log(
            `raw-node pingpong: round trip mean ${f.meanMicros.toFixed(2)} us (median ${f.medianMicros.toFixed(2)}, p99 ${f.p99Micros.toFixed(2)}, min ${f.minMicros.toFixed(2)}; ` +
              `${iterations} iterations, ${p2pPayload}-byte payload, ${unixDir === null ? 'tcp' : 'unix'}${pingpongPolls ? ', poll' : ''})`,
          );
        }
        s.destroy();
        server.close();
        if (unixDir !== null) fs.rmSync(unixDir, { recursive: true, force: true });
        child.kill();
        return;
      }
      tIter = performance.now();
      s.write(batch);
    }, FRAME + p2pPayload));
    t0 = performance.now();
    tIter = t0;
    s.write(batch);
  });
  let child: ReturnType<typeof fork>;
  const unixDir = process.argv.includes('--unix') ? fs.mkdtempSync(path.join(os.tmpdir(), 'raw-node-')) : null;
  const startPeer = (where: string): void => {
    child = fork(fileURLToPath(import.meta.url), [mode, '--peer', where, '--size', String(p2pPayload), ...(pingpongPolls ? ['--poll'] : [])], { execArgv: process.execArgv });
  };
  if (unixDir === null) {
    server.listen(0, '127.0.0.1', () => startPeer(String((server.address() as net.AddressInfo).port)));
  } else {
    const socketPath = path.join(unixDir, 's');
    server.listen(socketPath, () => startPeer(socketPath));
  }
}
