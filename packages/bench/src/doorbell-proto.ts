/**
 * ADR 0023's doorbell prototype (docs/adr/0023-receive-claims.md, "A direction not measured";
 * issue 16): can a worker thread read its own senders' frames fast, and still have them drained by
 * the process's engine (its main thread) while it computes? Plain Node, no tsmpi code.
 *
 *   npx tsx packages/bench/src/doorbell-proto.ts [--variant socket|doorbell] [--wait loop|poll] [--window W]
 *       [--batch F] [--windows N] [--warmup N] [--compute-ms MS] [--flood-frames N] [--tail N]
 *       [--watch-ms MS] [--read-bytes B] [--help]
 *
 * Two processes. This one is the receiver: its main thread plays the engine, one worker thread the
 * claimant (a thread holding a receive claim). It forks itself as the sender, which listens on two
 * Unix sockets in a fresh temporary directory: `data` (frames one way, acks back) and `bell` (the
 * doorbell). The claimant connects to them. Traffic imitates msgrate-threads.ts: the sender writes
 * windows of W frames (a 32-byte header + 8 payload bytes each, as tsmpi's frames), F frames per
 * write call (tsmpi writes what a turn queued in one call: default F = W), then waits for the
 * claimant's one ack frame per window (sent back on the data socket, in both variants).
 *
 * Variants:
 * - socket: the claimant's event loop reads the data socket (`onread` into one reused buffer), as
 *   tsmpi's claim route reads its socket today. Only the claimant can read it.
 * - doorbell: libuv never reads the data socket (it is connected paused). Every read of it is an
 *   `fs.readSync` on its descriptor under a lock word (Atomics on a SharedArrayBuffer), into a read
 *   buffer that lives in that shared memory, together with the parser's state (the bytes of a
 *   partial frame stay at the front of the buffer, their count in a shared word): whichever thread
 *   holds the lock continues the stream. The claimant reads while it runs. The engine reads when
 *   the claimant's turn counter (a word it bumps every time it runs) has not moved for --watch-ms,
 *   and queues the frames it parsed in a shared ring (standing in for tsmpi's shared match queues),
 *   which the claimant empties before it reads the socket again. A read that returns less than it
 *   asked for is taken as "drained", so a drain costs an EAGAIN exception only when nothing at all
 *   was waiting.
 *   --wait loop: the claimant waits in its event loop, woken by the doorbell: the sender writes one
 *   byte on `bell` after each write call on `data` (once those bytes are in the kernel), unless an
 *   earlier byte is still queued in its process (a byte already waiting wakes the claimant anyway).
 *   The bytes carry nothing: the claimant, woken, drains the data socket, so nobody else ever needs
 *   to read the bell. --wait poll: the claimant keeps a setImmediate turn queued and drains the
 *   data socket with readSync every turn; no doorbell. --wait poll-bell: turns queued as with poll
 *   (libuv polls the bell without sleeping, as tsmpi's blocking calls poll), and the data socket is
 *   read only when the bell rang, as with loop.
 *   The socket variant's --wait poll keeps a setImmediate turn queued too (libuv then polls without
 *   sleeping, as tsmpi's blocking calls do), --wait loop lets it sleep in epoll.
 *
 * Phases, in window numbers: --warmup windows, then --windows timed ones (the rate: frames / time
 * on the sender, from sending the first timed window to the last timed ack; CPU per frame of the
 * claimant thread, of the engine thread and of each whole process over the same span). Then, with
 * --compute-ms > 0, the progress check: the claimant acks one more window and then computes (a busy
 * loop, never returning to its event loop) for --compute-ms; the sender, on that ack, floods
 * --flood-frames frames without waiting for acks (pausing on its socket's backpressure), then sends
 * --tail more windows as before. The check prints how many flood frames the engine parsed while the
 * claimant computed, when the flood was all in the kernel, how often a thread took the stream over
 * in the middle of a frame, and whether the claimant saw every frame exactly once and in order
 * (frames carry a sequence number, and the payload repeats it).
 *
 * --stress tests the shared parser only: its holders hand the lock over in the middle of frames
 * thousands of times per run, and the stream line must still say INTACT; its rate and its
 * progress line's timing mean nothing (the engine then reads one --read-bytes per turn).
 *
 * Linux only (`_handle.fd` and /proc for thread CPU). `_handle` is not public Node API.
 * One file over 600 lines on purpose: a prototype asked for as one script, to be thrown away; a
 * build in the device would split it (the shared stream and its lock, the engine's watch, the
 * doorbell sender) and reuse shm/'s lock.
 */
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { processCpuNs, taskCpuNs } from './thread-cpu.ts';

// --- options ----------------------------------------------------------------------------------

type Variant = 'socket' | 'doorbell';
type WaitMode = 'loop' | 'poll' | 'poll-bell';

interface Options {
  readonly variant: Variant;
  readonly wait: WaitMode;
  readonly window: number;
  readonly batch: number;
  readonly windows: number;
  readonly warmup: number;
  readonly computeMs: number;
  readonly floodFrames: number;
  readonly tail: number;
  readonly watchMs: number;
  readonly readBytes: number;
  readonly stress: boolean;
}

const HELP = `doorbell-proto.ts: ADR 0023's doorbell prototype (see the file's header comment)
  --variant socket|doorbell  who may read the claimant's data socket (default doorbell)
  --wait loop|poll|poll-bell claimant waits in its event loop / polls every turn / doorbell: turns
                             queued as with poll, the data socket read only when the bell rang (default loop)
  --window W                 frames per window, one ack each (default 12)
  --batch F                  frames per sender write call (default W)
  --windows N                timed windows (default 50000)
  --warmup N                 untimed windows first (default 5000)
  --compute-ms MS            progress check: claimant computes this long (default 2000; 0: no check)
  --flood-frames N           frames the sender sends meanwhile without waiting (default 240000)
  --tail N                   windows after the flood (default 1000)
  --watch-ms MS              engine's takeover delay, doorbell only (default 2)
  --read-bytes B             bytes per readSync (doorbell) (default 65536)
  --stress                   doorbell: the engine reads at every turn whatever the claimant does, and
                             each thread gives the lock up after one read (an integrity test, not a rate)`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      variant: { type: 'string', default: 'doorbell' },
      wait: { type: 'string', default: 'loop' },
      window: { type: 'string', default: '12' },
      batch: { type: 'string' },
      windows: { type: 'string', default: '50000' },
      warmup: { type: 'string', default: '5000' },
      'compute-ms': { type: 'string', default: '2000' },
      'flood-frames': { type: 'string', default: '240000' },
      tail: { type: 'string', default: '1000' },
      'watch-ms': { type: 'string', default: '2' },
      'read-bytes': { type: 'string', default: '65536' },
      stress: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help === true) return 'help';
  const int = (name: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got ${v}`);
    return n;
  };
  const variant = values.variant;
  const wait = values.wait;
  if (variant !== 'socket' && variant !== 'doorbell') throw new Error(`--variant must be socket or doorbell, got ${variant}`);
  if (wait !== 'loop' && wait !== 'poll' && wait !== 'poll-bell') throw new Error(`--wait must be loop, poll or poll-bell, got ${wait}`);
  if (wait === 'poll-bell' && variant !== 'doorbell') throw new Error('--wait poll-bell needs --variant doorbell');
  const window = int('window', values.window, 1);
  return {
    variant,
    wait,
    window,
    batch: Math.min(window, int('batch', values.batch ?? String(window), 1)),
    windows: int('windows', values.windows, 1),
    warmup: int('warmup', values.warmup, 1),
    computeMs: int('compute-ms', values['compute-ms'], 0),
    floodFrames: int('flood-frames', values['flood-frames'], 1),
    tail: int('tail', values.tail, 1),
    watchMs: int('watch-ms', values['watch-ms'], 1),
    readBytes: int('read-bytes', values['read-bytes'], FRAME_BYTES),
    stress: values.stress === true,
  };
}

/** Window numbers of the phases (the same arithmetic on both sides). */
interface Plan {
  /** first timed window */
  readonly timedFirst: number;
  /** last timed window */
  readonly timedLast: number;
  /** the window whose ack starts the claimant's computing (-1: no progress check) */
  readonly computeWindow: number;
  /** last window of the flood (-1: none) */
  readonly floodLast: number;
  /** last window of the run */
  readonly last: number;
}

function planOf(o: Options): Plan {
  const timedFirst = o.warmup;
  const timedLast = o.warmup + o.windows - 1;
  if (o.computeMs === 0) return { timedFirst, timedLast, computeWindow: -1, floodLast: -1, last: timedLast };
  const computeWindow = timedLast + 1;
  const floodLast = computeWindow + Math.ceil(o.floodFrames / o.window);
  return { timedFirst, timedLast, computeWindow, floodLast, last: floodLast + o.tail };
}

// --- frames -----------------------------------------------------------------------------------

/** A tsmpi frame header's size; then the payload. Header words (u32 LE): payload bytes, kind, seq, window. */
const HEADER_BYTES = 32;
const PAYLOAD_BYTES = 8;
const FRAME_BYTES = HEADER_BYTES + PAYLOAD_BYTES;
const KIND_DATA = 1;
const KIND_ACK = 2;

/** Writes data frame `seq` (of window `seq / W`) at `off`: its payload repeats seq and its complement. */
function putDataFrame(b: Buffer, off: number, seq: number, window: number): void {
  b.fill(0, off, off + HEADER_BYTES);
  b.writeUInt32LE(PAYLOAD_BYTES, off);
  b.writeUInt32LE(KIND_DATA, off + 4);
  b.writeUInt32LE(seq, off + 8);
  b.writeUInt32LE(window, off + 12);
  b.writeUInt32LE(seq, off + HEADER_BYTES);
  b.writeUInt32LE(~seq >>> 0, off + HEADER_BYTES + 4);
}

function putAckFrame(b: Buffer, off: number, window: number): void {
  b.fill(0, off, off + FRAME_BYTES);
  b.writeUInt32LE(PAYLOAD_BYTES, off);
  b.writeUInt32LE(KIND_ACK, off + 4);
  b.writeUInt32LE(window, off + 12);
}

/** Whether the data frame at `off` is well formed: kind, payload size, and the payload's copy of seq. */
function isIntactDataFrame(b: Buffer, off: number): boolean {
  const seq = b.readUInt32LE(off + 8);
  return b.readUInt32LE(off) === PAYLOAD_BYTES && b.readUInt32LE(off + 4) === KIND_DATA
    && b.readUInt32LE(off + HEADER_BYTES) === seq && b.readUInt32LE(off + HEADER_BYTES + 4) === (~seq >>> 0);
}

/** Absolute milliseconds, comparable between the two processes (same machine). */
function nowAbsMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The calling thread's kernel id (/proc/thread-self links to PID/task/TID). */
function ownTid(): number {
  return Number(path.basename(fs.readlinkSync('/proc/thread-self')));
}

// --- shared state of the doorbell variant -----------------------------------------------------

/** Int32 words at the front of the shared page; the ring and the read buffer follow. */
const W_LOCK = 0; // 0 free, 1 claimant, 2 engine
const W_TURN = 1; // claimant's turn counter
const W_CARRY = 2; // bytes of a partial frame at the front of the read buffer
const W_FD = 3; // the data socket's descriptor
const W_STOP = 4; // 1: the claimant is done, nobody reads any more
const W_RING_HEAD = 5; // frames the claimant took from the ring
const W_RING_TAIL = 6; // frames the engine put in the ring
const W_LAST_HOLDER = 7;
const W_PARTIAL_HANDOVERS = 8; // lock taken by the other thread while a partial frame was carried
const W_READS = 9; // + who: readSync calls that returned bytes
const W_EMPTY_READS = 11; // + who: readSync calls that threw EAGAIN
const W_BYTES = 13; // + who: bytes read (low 31 bits wrap; only differences over short spans are used)
const W_ENGINE_FRAMES = 15; // frames the engine parsed
const W_CORRUPT = 16; // frames the engine found malformed
const W_ENGINE_TAKEOVERS = 17; // engine checks that found the turn counter still and read
const WORDS = 32;
const WHO_CLAIMANT = 0;
const WHO_ENGINE = 1;
/** Ring slots: seq, window, intact (0/1). */
const RING_INTS = 3;
/** Room before the read buffer's new bytes for a carried partial frame. */
const CARRY_ROOM = 256;

/** Views of the shared page (each thread builds its own over the same memory). */
interface Shared {
  readonly words: Int32Array;
  readonly ring: Int32Array;
  readonly ringFrames: number;
  readonly bytes: Buffer;
  readonly readBytes: number;
}

function sharedPage(o: Options, plan: Plan): SharedArrayBuffer {
  const ringFrames = (plan.last + 2) * o.window + 1024;
  return new SharedArrayBuffer(WORDS * 4 + ringFrames * RING_INTS * 4 + CARRY_ROOM + o.readBytes);
}

function sharedViews(sab: SharedArrayBuffer, o: Options): Shared {
  const ringBytes = sab.byteLength - WORDS * 4 - CARRY_ROOM - o.readBytes;
  const ringFrames = ringBytes / (RING_INTS * 4);
  return {
    words: new Int32Array(sab, 0, WORDS),
    ring: new Int32Array(sab, WORDS * 4, ringFrames * RING_INTS),
    ringFrames,
    bytes: Buffer.from(sab, WORDS * 4 + ringBytes, CARRY_ROOM + o.readBytes),
    readBytes: o.readBytes,
  };
}

function takeLockBy(s: Shared, who: number): void {
  const w = s.words;
  if (w[W_LAST_HOLDER] !== who && w[W_CARRY]! > 0) w[W_PARTIAL_HANDOVERS]!++;
  w[W_LAST_HOLDER] = who;
}

function unlock(s: Shared): void {
  Atomics.store(s.words, W_LOCK, 0);
  Atomics.notify(s.words, W_LOCK);
}

/**
 * Reads the data socket until a read comes back short (drained) or throws EAGAIN (nothing at all),
 * or `maxReads` reads are done, parsing whole frames as it goes: the claimant consumes them, the
 * engine queues them in the ring. The caller holds the lock. Returns the bytes read, and leaves
 * in pumpDrained whether the socket was found drained.
 */
let pumpDrained = false;
function pumpSocket(s: Shared, who: number, maxReads: number): number {
  const w = s.words;
  const fd = w[W_FD]!;
  const b = s.bytes;
  let total = 0;
  pumpDrained = false;
  for (let reads = 0; reads < maxReads; reads++) {
    const carry = w[W_CARRY]!;
    // The engine stops while the ring could not take a whole read's frames (backpressure to the sender).
    if (who === WHO_ENGINE && s.ringFrames - (w[W_RING_TAIL]! - w[W_RING_HEAD]!) < (carry + s.readBytes) / FRAME_BYTES + 1) break;
    let n: number;
    // An empty read is an EAGAIN exception; without a stack trace it costs 2.5 us instead of 3.4
    // (Node 20, this machine, 2026-11-27 02:23 UTC, load 2.5, 3 x 200,000 calls).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      n = fs.readSync(fd, b, carry, s.readBytes, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      w[W_EMPTY_READS + who]!++;
      pumpDrained = true;
      break;
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    if (n === 0) {
      pumpDrained = true; // the sender closed
      break;
    }
    w[W_READS + who]!++;
    w[W_BYTES + who] = (w[W_BYTES + who]! + n) & 0x7fffffff;
    total += n;
    const end = carry + n;
    let off = 0;
    while (end - off >= HEADER_BYTES) {
      const size = HEADER_BYTES + b.readUInt32LE(off);
      if (end - off < size) break;
      if (who === WHO_ENGINE) queueInRing(s, b, off);
      else consumeFrame(b.readUInt32LE(off + 8), b.readUInt32LE(off + 12), isIntactDataFrame(b, off));
      off += size;
    }
    const rest = end - off;
    if (rest > 0 && off > 0) b.copyWithin(0, off, end);
    w[W_CARRY] = rest;
    if (n < s.readBytes) {
      pumpDrained = true;
      break;
    }
  }
  return total;
}

function queueInRing(s: Shared, b: Buffer, off: number): void {
  const w = s.words;
  const tail = w[W_RING_TAIL]!;
  const i = (tail % s.ringFrames) * RING_INTS;
  const intact = isIntactDataFrame(b, off);
  s.ring[i] = b.readUInt32LE(off + 8);
  s.ring[i + 1] = b.readUInt32LE(off + 12);
  s.ring[i + 2] = intact ? 1 : 0;
  if (!intact) w[W_CORRUPT]!++;
  w[W_RING_TAIL] = tail + 1;
  w[W_ENGINE_FRAMES]!++;
}

// --- the claimant (worker thread) -------------------------------------------------------------

interface ClaimantBoot {
  readonly role: 'claimant';
  readonly options: Options;
  readonly dir: string;
  readonly sab: SharedArrayBuffer | null;
  readonly enginePid: number;
}

/** What the claimant reports when the run is over. */
interface ClaimantReport {
  readonly claimantCpuNs: number;
  readonly engineCpuNs: number;
  readonly processCpuNs: number;
  readonly engineFramesTimed: number;
  readonly readsTimed: number;
  readonly emptyReadsTimed: number;
  readonly bellEventsTimed: number;
  readonly lockWaits: number;
  readonly computeStartMs: number;
  readonly computeEndMs: number;
  readonly engineFramesDuringCompute: number;
  readonly framesSeen: number;
  readonly framesFromEngine: number;
  readonly outOfOrder: number;
  readonly brokenFrames: number;
  readonly partialHandovers: number;
  readonly engineTakeovers: number;
  readonly engineCorrupt: number;
}

// Module-level claimant state: the frame consumer and the handlers reach it without closures.
let cOpts: Options;
let cPlan: Plan;
let cShared: Shared | null = null;
let cData: net.Socket;
let cExpectSeq = 0;
let cFramesSeen = 0;
let cFramesFromEngine = 0;
let cOutOfOrder = 0;
let cBroken = 0;
/** acks owed, written once per read or drain */
let cAcks: number[] = [];
let cComputeDue = false;
let cDone = false;
let cBellEvents = 0;
let cLockWaits = 0;
let cReads = 0;
let cEmptyReads = 0;
let cEnginePid = 0;
let cTid = 0;
/** counters at the first timed window and at the last */
let cMarkStart: number[] = [];
let cMarkEnd: number[] = [];
let cComputeStartMs = 0;
let cComputeEndMs = 0;
let cEngineFramesDuringCompute = 0;
/** the busy loop's result, kept so that the loop is not optimized away */
let cComputeSink = 0;
/** the socket variant's read buffer (every read lands here) and its partial frame between reads */
const cReadBuffer = Buffer.alloc(64 * 1024);
const cCarry = Buffer.alloc(CARRY_ROOM);
let cCarryLen = 0;

function counters(): number[] {
  const w = cShared?.words;
  return [
    taskCpuNs(cTid), taskCpuNs(cEnginePid), processCpuNs(),
    w === undefined ? 0 : w[W_ENGINE_FRAMES]!,
    w === undefined ? cReads : w[W_READS]! + w[W_READS + 1]!,
    w === undefined ? cEmptyReads : w[W_EMPTY_READS]! + w[W_EMPTY_READS + 1]!,
    cBellEvents,
  ];
}

/** One data frame reaches the claimant (from the socket or the engine's ring): check it, count its window. */
function consumeFrame(seq: number, window: number, intact: boolean): void {
  cFramesSeen++;
  if (!intact || window !== Math.floor(seq / cOpts.window)) cBroken++;
  if (seq !== cExpectSeq) cOutOfOrder++;
  cExpectSeq = seq + 1;
  if ((seq + 1) % cOpts.window !== 0) return;
  cAcks.push(window);
  if (window === cPlan.timedFirst - 1) cMarkStart = counters();
  if (window === cPlan.timedLast) cMarkEnd = counters();
  if (window === cPlan.computeWindow) cComputeDue = true;
  if (window === cPlan.last) cDone = true;
}

function flushAcks(): void {
  const n = cAcks.length;
  if (n === 0) return;
  const b = Buffer.allocUnsafe(n * FRAME_BYTES);
  for (let i = 0; i < n; i++) putAckFrame(b, i * FRAME_BYTES, cAcks[i]!);
  cAcks = [];
  cData.write(b);
}

/** After a read or drain: acks out, then the computing or the end the frames asked for. */
function afterConsuming(): void {
  flushAcks();
  if (cComputeDue) {
    cComputeDue = false;
    const w = cShared?.words;
    const before = w === undefined ? 0 : Atomics.load(w, W_ENGINE_FRAMES);
    cComputeStartMs = nowAbsMs();
    const until = performance.now() + cOpts.computeMs;
    while (performance.now() < until) cComputeSink = (cComputeSink * 31 + 7) | 0;
    cComputeEndMs = nowAbsMs();
    cEngineFramesDuringCompute = (w === undefined ? 0 : Atomics.load(w, W_ENGINE_FRAMES)) - before;
  }
  if (cDone) finishClaimant();
}

/** Doorbell variant: take the lock (waiting out an engine drain), empty the engine's ring, then read the socket. */
function drainShared(): void {
  const s = cShared!;
  const w = s.words;
  Atomics.add(w, W_TURN, 1);
  for (;;) {
    const held = Atomics.compareExchange(w, W_LOCK, 0, 1);
    if (held === 0) break;
    cLockWaits++;
    Atomics.wait(w, W_LOCK, held, 1);
  }
  takeLockBy(s, WHO_CLAIMANT);
  if (w[W_STOP] === 0) {
    let head = w[W_RING_HEAD]!;
    const tail = w[W_RING_TAIL]!;
    while (head < tail) {
      const i = (head % s.ringFrames) * RING_INTS;
      cFramesFromEngine++;
      consumeFrame(s.ring[i]!, s.ring[i + 1]!, s.ring[i + 2] === 1);
      head++;
    }
    w[W_RING_HEAD] = head;
    // The computing window's frames are the last the sender sends before its ack: nothing follows them yet.
    if (!cComputeDue && !cDone) {
      pumpSocket(s, WHO_CLAIMANT, cOpts.stress ? 1 : Infinity);
      // Stopped before the socket was drained (--stress): no doorbell will say so, so come back.
      if (!pumpDrained && !cDrainQueued) {
        cDrainQueued = true;
        setImmediate(drainQueued);
      }
    }
  }
  unlock(s);
  afterConsuming();
}

let cDrainQueued = false;
function drainQueued(): void {
  cDrainQueued = false;
  if (!cDone) drainShared();
}

function onBellRead(_nread: number, _buf: Uint8Array): boolean {
  cBellEvents++;
  if (!cDone) drainShared();
  return true;
}

/** Socket variant: the claimant's event loop read `nread` bytes of the data socket into `buf`. */
function onDataRead(nread: number, _buf: Uint8Array): boolean {
  const buf = cReadBuffer;
  cReads++;
  Atomics.add(cTurnWords, 0, 1);
  let off = 0;
  if (cCarryLen > 0) {
    // Complete the carried frame first (its size is in its header once 4 bytes are in).
    while (off < nread) {
      cCarry[cCarryLen++] = buf[off++]!;
      if (cCarryLen >= HEADER_BYTES && cCarryLen === HEADER_BYTES + cCarry.readUInt32LE(0)) {
        consumeFrame(cCarry.readUInt32LE(8), cCarry.readUInt32LE(12), isIntactDataFrame(cCarry, 0));
        cCarryLen = 0;
        break;
      }
    }
  }
  while (cCarryLen === 0 && nread - off >= HEADER_BYTES) {
    const size = HEADER_BYTES + buf.readUInt32LE(off);
    if (nread - off < size) break;
    consumeFrame(buf.readUInt32LE(off + 8), buf.readUInt32LE(off + 12), isIntactDataFrame(buf, off));
    off += size;
  }
  if (cCarryLen === 0 && off < nread) {
    buf.copy(cCarry, 0, off, nread);
    cCarryLen = nread - off;
  }
  afterConsuming();
  return true;
}

/** The socket variant's stand-in turn counter (nobody reads it: no engine takeover there). */
const cTurnWords = new Int32Array(1);

function pollTurn(): void {
  if (cDone) return;
  if (cShared === null) Atomics.add(cTurnWords, 0, 1);
  else if (cOpts.wait === 'poll') drainShared();
  else Atomics.add(cShared.words, W_TURN, 1); // poll-bell: the bell's handler drains
  if (!cDone) setImmediate(pollTurn);
}

function finishClaimant(): void {
  const w = cShared?.words;
  if (w !== undefined) {
    // Under the lock, so that the engine never reads the descriptor while it closes.
    while (Atomics.compareExchange(w, W_LOCK, 0, 1) !== 0) Atomics.wait(w, W_LOCK, 2, 1);
    w[W_STOP] = 1;
    unlock(cShared!);
  }
  const s = cMarkStart;
  const e = cMarkEnd;
  const report: ClaimantReport = {
    claimantCpuNs: e[0]! - s[0]!,
    engineCpuNs: e[1]! - s[1]!,
    processCpuNs: e[2]! - s[2]!,
    engineFramesTimed: e[3]! - s[3]!,
    readsTimed: e[4]! - s[4]!,
    emptyReadsTimed: e[5]! - s[5]!,
    bellEventsTimed: e[6]! - s[6]!,
    lockWaits: cLockWaits,
    computeStartMs: cComputeStartMs,
    computeEndMs: cComputeEndMs,
    engineFramesDuringCompute: cEngineFramesDuringCompute,
    framesSeen: cFramesSeen,
    framesFromEngine: cFramesFromEngine,
    outOfOrder: cOutOfOrder,
    brokenFrames: cBroken,
    partialHandovers: w === undefined ? 0 : w[W_PARTIAL_HANDOVERS]!,
    engineTakeovers: w === undefined ? 0 : w[W_ENGINE_TAKEOVERS]!,
    engineCorrupt: w === undefined ? 0 : w[W_CORRUPT]!,
  };
  parentPort!.postMessage({ type: 'done', report });
}

async function claimantMain(boot: ClaimantBoot): Promise<void> {
  cOpts = boot.options;
  cPlan = planOf(cOpts);
  cEnginePid = boot.enginePid;
  cTid = ownTid();
  cShared = boot.sab === null ? null : sharedViews(boot.sab, cOpts);
  const dataPath = path.join(boot.dir, 'data');
  if (cShared === null) {
    // Socket variant: the event loop reads into one reused buffer, as tsmpi's transport does.
    cData = net.connect({ path: dataPath, onread: { buffer: cReadBuffer, callback: onDataRead } });
  } else {
    // Doorbell variant: connected paused, so libuv never reads it; only fs.readSync under the lock does.
    cData = net.connect({ path: dataPath });
    cData.pause();
  }
  await new Promise<void>((resolve, reject) => { cData.once('connect', resolve); cData.once('error', reject); });
  if (cShared !== null) {
    Atomics.store(cShared.words, W_FD, (cData as unknown as { _handle: { fd: number } })._handle.fd);
    if (cOpts.wait !== 'poll') {
      const bell = net.connect({ path: path.join(boot.dir, 'bell'), onread: { buffer: Buffer.alloc(4096), callback: onBellRead } });
      await new Promise<void>((resolve, reject) => { bell.once('connect', resolve); bell.once('error', reject); });
    }
  }
  if (cOpts.wait !== 'loop') setImmediate(pollTurn);
  parentPort!.postMessage({ type: 'ready' });
}

// --- the engine (the receiver's main thread) --------------------------------------------------

/**
 * Every --watch-ms, reads the data socket if the claimant's turn counter has not moved since the
 * last look (and the claimant does not hold the lock); while that finds bytes and the counter
 * stays still, looks again at the next turn instead of waiting.
 */
class Engine {
  readonly #s: Shared;
  readonly #watchMs: number;
  readonly #stress: boolean;
  #lastTurn = -1;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  readonly #lookBound = (): void => this.#look();

  constructor(s: Shared, watchMs: number, stress: boolean) {
    this.#s = s;
    this.#watchMs = watchMs;
    this.#stress = stress;
  }

  start(): void {
    this.#timer = setTimeout(this.#lookBound, this.#watchMs);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
  }

  #look(): void {
    if (this.#stopped) return;
    const w = this.#s.words;
    const turn = Atomics.load(w, W_TURN);
    let read = 0;
    if ((this.#stress || turn === this.#lastTurn) && Atomics.compareExchange(w, W_LOCK, 0, 2) === 0) {
      takeLockBy(this.#s, WHO_ENGINE);
      if (w[W_STOP] === 0) {
        w[W_ENGINE_TAKEOVERS]!++;
        read = pumpSocket(this.#s, WHO_ENGINE, this.#stress ? 1 : Infinity);
      }
      unlock(this.#s);
    }
    this.#lastTurn = turn;
    if (read > 0 || this.#stress) setImmediate(this.#lookBound);
    else this.#timer = setTimeout(this.#lookBound, this.#watchMs);
  }
}

// --- the sender (a forked process) ------------------------------------------------------------

interface SenderReport {
  readonly timedMs: number;
  readonly cpuNs: number;
  readonly floodInKernelMs: number;
  readonly rings: number;
  readonly ringsSkipped: number;
}

let sOpts: Options;
let sPlan: Plan;
let sData: net.Socket;
let sBell: net.Socket | null = null;
let sNext = 0;
let sFlooding = false;
let sAcked = -1;
let sAckCarry = Buffer.alloc(0);
let sT0 = 0;
let sCpu0 = 0;
let sTimedMs = 0;
let sCpuNs = 0;
let sFloodInKernelMs = 0;
let sRings = 0;
let sRingsSkipped = 0;
/** a doorbell byte is owed once the data socket's queued bytes reach the kernel */
let sRingOwed = false;
const ONE_BYTE = Buffer.from([1]);

function ring(): void {
  if (sBell!.writableLength === 0) {
    sBell!.write(ONE_BYTE);
    sRings++;
  } else {
    sRingsSkipped++;
  }
}

function ringWhenFlushed(): void {
  if (sData.writableLength > 0) {
    setImmediate(ringWhenFlushed);
    return;
  }
  sRingOwed = false;
  ring();
}

/** Writes window `win`'s frames, --batch per write call; returns write()'s backpressure answer. */
function sendWindow(win: number): boolean {
  const W = sOpts.window;
  let ok = true;
  for (let first = 0; first < W; first += sOpts.batch) {
    const k = Math.min(sOpts.batch, W - first);
    const b = Buffer.allocUnsafe(k * FRAME_BYTES);
    for (let i = 0; i < k; i++) putDataFrame(b, i * FRAME_BYTES, win * W + first + i, win);
    ok = sData.write(b) && ok;
    if (sBell !== null) {
      // Ring only once these bytes are in the kernel: a claimant woken earlier could miss them.
      if (sData.writableLength === 0) ring();
      else if (!sRingOwed) {
        sRingOwed = true;
        setImmediate(ringWhenFlushed);
      }
    }
  }
  return ok;
}

/** Records when the flood's last bytes left this process's queue for the kernel. */
function noteFloodInKernel(): void {
  if (sData.writableLength > 0) setImmediate(noteFloodInKernel);
  else sFloodInKernelMs = nowAbsMs();
}

function flood(): void {
  while (sNext <= sPlan.floodLast) {
    const win = sNext++;
    const ok = sendWindow(win);
    if (win === sPlan.floodLast) {
      setImmediate(noteFloodInKernel);
      break;
    }
    if (!ok) {
      sData.once('drain', flood);
      return;
    }
  }
  sFlooding = false;
  if (sAcked === sNext - 1 && sNext <= sPlan.last) sendWindow(sNext++);
}

function onAck(win: number): void {
  sAcked = win;
  if (win === sPlan.timedFirst - 1) {
    sT0 = performance.now();
    sCpu0 = processCpuNs();
  }
  if (win === sPlan.timedLast) {
    sTimedMs = performance.now() - sT0;
    sCpuNs = processCpuNs() - sCpu0;
  }
  if (win === sPlan.last) {
    const report: SenderReport = { timedMs: sTimedMs, cpuNs: sCpuNs, floodInKernelMs: sFloodInKernelMs, rings: sRings, ringsSkipped: sRingsSkipped };
    process.send!({ type: 'done', report });
    return;
  }
  if (sFlooding) return;
  if (win === sPlan.computeWindow) {
    sFlooding = true;
    flood();
    return;
  }
  if (win === sNext - 1) sendWindow(sNext++);
}

function onAckBytes(d: Buffer): void {
  const b = sAckCarry.length > 0 ? Buffer.concat([sAckCarry, d]) : d;
  let off = 0;
  while (b.length - off >= FRAME_BYTES) {
    if (b.readUInt32LE(off + 4) === KIND_ACK) onAck(b.readUInt32LE(off + 12));
    off += FRAME_BYTES;
  }
  sAckCarry = off < b.length ? Buffer.from(b.subarray(off)) : Buffer.alloc(0);
}

async function senderMain(o: Options, dir: string): Promise<void> {
  sOpts = o;
  sPlan = planOf(o);
  const needBell = o.variant === 'doorbell' && o.wait !== 'poll';
  const accept = (name: string): Promise<net.Socket> => new Promise((resolve, reject) => {
    const server = net.createServer({ noDelay: true }, (socket) => {
      server.close();
      resolve(socket);
    });
    server.once('error', reject);
    server.listen(path.join(dir, name));
  });
  const dataP = accept('data');
  const bellP = needBell ? accept('bell') : null;
  const startP = new Promise<void>((resolve) => process.once('message', () => resolve()));
  process.send!({ type: 'listening' });
  sData = await dataP;
  sData.on('data', onAckBytes);
  if (bellP !== null) sBell = await bellP;
  await startP;
  sendWindow(sNext++);
}

// --- the receiver's main thread: set-up and report ---------------------------------------------

function claimantThread(boot: ClaimantBoot): Worker {
  // Node 20 does not load a worker's .ts entry through tsx: register it first (as thread-hop.ts does).
  const code = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((api) => { api.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  return new Worker(code, { eval: true, workerData: boot });
}

function waitFor<T>(emitter: ChildProcess | Worker, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { type: string }): void => {
      if (m.type !== type) return;
      emitter.off('message', onMessage);
      resolve(m as T);
    };
    emitter.on('message', onMessage);
    emitter.once('error', reject);
  });
}

async function receiverMain(o: Options): Promise<void> {
  const plan = planOf(o);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doorbell-'));
  const sender = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--sender-dir', dir], { execArgv: process.execArgv });
  try {
    await waitFor(sender, 'listening');
    const sab = o.variant === 'doorbell' ? sharedPage(o, plan) : null;
    const claimant = claimantThread({ role: 'claimant', options: o, dir, sab, enginePid: process.pid });
    await waitFor(claimant, 'ready');
    const engine = sab === null ? null : new Engine(sharedViews(sab, o), o.watchMs, o.stress);
    const claimantDone = waitFor<{ report: ClaimantReport }>(claimant, 'done');
    const senderDone = waitFor<{ report: SenderReport }>(sender, 'done');
    engine?.start();
    sender.send({ type: 'start' });
    const c = (await claimantDone).report;
    const s = (await senderDone).report;
    engine?.stop();
    await claimant.terminate();
    printReport(o, plan, c, s);
  } finally {
    sender.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function printReport(o: Options, plan: Plan, c: ClaimantReport, s: SenderReport): void {
  const frames = o.windows * o.window;
  const perFrame = (ns: number): string => (ns / frames).toFixed(0);
  console.log(
    `doorbell-proto variant=${o.variant} wait=${o.wait} W=${o.window} batch=${o.batch} windows=${o.windows} ` +
    `rate=${(frames / s.timedMs / 1000).toFixed(3)} Mmsg/s us_per_msg=${((s.timedMs * 1000) / frames).toFixed(3)} ` +
    `cpu_ns_per_msg claimant=${perFrame(c.claimantCpuNs)} engine=${perFrame(c.engineCpuNs)} ` +
    `receiver_process=${perFrame(c.processCpuNs)} sender_process=${perFrame(s.cpuNs)} ` +
    `reads_per_window=${(c.readsTimed / o.windows).toFixed(2)} eagain_per_window=${(c.emptyReadsTimed / o.windows).toFixed(2)} ` +
    `bells_per_window=${(c.bellEventsTimed / o.windows).toFixed(2)} engine_frames_timed=${c.engineFramesTimed}`,
  );
  const expected = (plan.last + 1) * o.window;
  const intact = c.framesSeen === expected && c.outOfOrder === 0 && c.brokenFrames === 0 && c.engineCorrupt === 0;
  console.log(
    `stream: ${c.framesSeen} of ${expected} frames seen by the claimant, ${c.framesFromEngine} via the engine's ring, ` +
    `out of order ${c.outOfOrder}, broken ${c.brokenFrames + c.engineCorrupt}, ` +
    `takeovers by the engine ${c.engineTakeovers}, lock handovers mid-frame ${c.partialHandovers}, claimant lock waits ${c.lockWaits}, ` +
    `doorbell bytes ${s.rings} (skipped ${s.ringsSkipped}): ${intact ? 'INTACT' : 'BROKEN'}`,
  );
  if (o.computeMs === 0) return;
  const floodFrames = (plan.floodLast - plan.computeWindow) * o.window;
  const inKernelAfter = s.floodInKernelMs - c.computeStartMs;
  const computedMs = c.computeEndMs - c.computeStartMs;
  const drained = c.engineFramesDuringCompute >= floodFrames && inKernelAfter < computedMs;
  console.log(
    `progress: claimant computed ${computedMs.toFixed(0)} ms; the engine parsed ${c.engineFramesDuringCompute} of the ` +
    `${floodFrames} flood frames meanwhile; the flood was all in the kernel ${inKernelAfter.toFixed(0)} ms after the computing began: ` +
    `${drained && intact ? 'PASS (drained while the claimant computed, stream intact)' : 'FAIL (not drained while the claimant computed' + (intact ? ')' : ', stream broken)')}`,
  );
}

// --- entry ------------------------------------------------------------------------------------

if (!isMainThread && (workerData as ClaimantBoot | null)?.role === 'claimant') {
  await claimantMain(workerData as ClaimantBoot);
} else if (isMainThread) {
  const argv = process.argv.slice(2);
  const dirAt = argv.indexOf('--sender-dir');
  const own = dirAt >= 0 ? [...argv.slice(0, dirAt), ...argv.slice(dirAt + 2)] : argv;
  const parsed = parseOptions(own);
  if (parsed === 'help') console.log(HELP);
  else if (dirAt >= 0) await senderMain(parsed, argv[dirAt + 1]!);
  else await receiverMain(parsed);
}
