/**
 * A model of the lean common-case message path proposed in
 * docs/adr/0020-lean-common-path.md, run as the neighbour-rate kernel of
 * msgrate-curve.ts (a window of 12 receives, then 12 sends, then waitall) in
 * blocks, with msgrate-curve's per-block CPU split (main thread / other
 * threads, thread-cpu.ts). It is not tsmpi: two forked processes, one loopback
 * socket, no launcher. It keeps what the real path must do per message (a
 * request object, an argument check, a 32-byte header written and parsed
 * field by field, matching by source, context and tag against the posted and
 * unexpected queues in order, one write per batch at the end of the
 * microtask, completion counted into one promise per waitall) and drops what
 * the ADR moves off the common path (handle tables, lifetime references,
 * locks, the device/transport call chain). Its first block says how far a
 * path of this size can bring the 121 us of 4.16; the gap to raw-node.ts is
 * what the matching and request layer itself costs.
 *
 *   npx tsx packages/bench/src/lean-model.ts [--blocks 3] [--block 1000] [--window 12] [--raw]
 *
 * --raw runs raw-node.ts's kernel in the same harness instead: each iteration
 * writes one batch of `window` 32-byte frames and waits until the peer's batch
 * has arrived (no requests, no matching): the floor of Node's socket path.
 */
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { frameCounter } from './raw-frames.ts';
import { threadCpu } from './thread-cpu.ts';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '3' },
    block: { type: 'string', default: '1000' },
    window: { type: 'string', default: '12' },
    peer: { type: 'string' },
    raw: { type: 'boolean', default: false },
  },
});
const blocks = Number(values.blocks);
const per = Number(values.block);
const window = Number(values.window);
/** --raw: no requests and no matching, only the batch written and the peer's frames counted (raw-node.ts's kernel). */
const raw = values.raw === true;
if (![blocks, per, window].every((n) => Number.isInteger(n) && n > 0)) {
  console.error('lean-model: --blocks, --block and --window must be positive integers');
  process.exit(2);
}

const HEADER = 32;
const ANY = -1;

/** One request of the lean path: a receive's target and status, or a completed eager send. */
class LeanRequest {
  done = false;
  next: LeanRequest | null = null;
  tag = 0;
  count = 0;
  buf: Uint8Array;
  constructor(buf: Uint8Array, tag: number, done: boolean) {
    this.buf = buf;
    this.tag = tag;
    this.done = done;
  }
}

/** A frame that arrived before its receive: its tag and a copy of its payload. */
interface Unexpected {
  tag: number;
  payload: Uint8Array;
  next: Unexpected | null;
}

/** Everything the lean path keeps per (peer, context): the socket, the batch, the two queues. */
class Lane {
  readonly out = Buffer.allocUnsafe(64 * 1024);
  outLen = 0;
  flushQueued = false;
  postedHead: LeanRequest | null = null;
  postedTail: LeanRequest | null = null;
  unexpHead: Unexpected | null = null;
  unexpTail: Unexpected | null = null;
  carry: Buffer | null = null;
  /** Receives not yet complete that the current waitall counts, and its resolver. */
  waiting = 0;
  wake: (() => void) | null = null;
  readonly sock: net.Socket;
  readonly me: number;
  readonly context: number;
  constructor(sock: net.Socket, me: number, context: number) {
    this.sock = sock;
    this.me = me;
    this.context = context;
  }
}

function flush(lane: Lane): void {
  lane.flushQueued = false;
  lane.sock.write(Buffer.from(lane.out.subarray(0, lane.outLen)));
  lane.outLen = 0;
}

/** MPI_Isend of a contiguous byte buffer on the lean path: header and payload go into the batch; eager, so complete. */
function isend(lane: Lane, buf: Uint8Array, tag: number): LeanRequest {
  if (!Number.isInteger(tag) || tag < 0 || tag > 0x7fffffff) throw new RangeError(`Isend: tag ${tag} is invalid: expected 0..2147483647`);
  const o = lane.outLen;
  const b = lane.out;
  const n = buf.length;
  b[o] = 1; // kind: eager
  b[o + 1] = 0;
  b[o + 2] = lane.context;
  b[o + 3] = lane.context >>> 8;
  b[o + 4] = lane.me; b[o + 5] = lane.me >>> 8; b[o + 6] = lane.me >>> 16; b[o + 7] = lane.me >>> 24;
  b[o + 12] = tag; b[o + 13] = tag >>> 8; b[o + 14] = tag >>> 16; b[o + 15] = tag >>> 24;
  b[o + 28] = n; b[o + 29] = n >>> 8; b[o + 30] = n >>> 16; b[o + 31] = n >>> 24;
  if (n > 0) b.set(buf, o + HEADER);
  lane.outLen = o + HEADER + n;
  if (!lane.flushQueued) {
    lane.flushQueued = true;
    queueMicrotask(() => flush(lane));
  }
  return new LeanRequest(buf, tag, true);
}

/** MPI_Irecv from one known source on the lean path: the oldest unexpected match, else the posted queue. */
function irecv(lane: Lane, buf: Uint8Array, tag: number): LeanRequest {
  if (tag !== ANY && (!Number.isInteger(tag) || tag < 0)) throw new RangeError(`Irecv: tag ${tag} is invalid`);
  const req = new LeanRequest(buf, tag, false);
  let prev: Unexpected | null = null;
  for (let u = lane.unexpHead; u !== null; prev = u, u = u.next) {
    if (tag === ANY || u.tag === tag) {
      if (prev === null) lane.unexpHead = u.next; else prev.next = u.next;
      if (lane.unexpTail === u) lane.unexpTail = prev;
      deliver(req, u.tag, u.payload);
      return req;
    }
  }
  if (lane.postedTail === null) lane.postedHead = req; else lane.postedTail.next = req;
  lane.postedTail = req;
  return req;
}

function deliver(req: LeanRequest, tag: number, payload: Uint8Array): void {
  if (payload.length > req.buf.length) throw new RangeError('message truncated'); // the general path would set the status error
  req.buf.set(payload);
  req.tag = tag;
  req.count = payload.length;
  req.done = true;
}

/** A frame arrived: the oldest posted receive it matches, else the unexpected queue. */
function arrive(lane: Lane, data: Buffer, at: number): void {
  const tag = (data[at + 12]! | (data[at + 13]! << 8) | (data[at + 14]! << 16) | (data[at + 15]! << 24));
  const n = (data[at + 28]! | (data[at + 29]! << 8) | (data[at + 30]! << 16)) + data[at + 31]! * 0x1000000;
  const payload = data.subarray(at + HEADER, at + HEADER + n);
  let prev: LeanRequest | null = null;
  for (let r = lane.postedHead; r !== null; prev = r, r = r.next) {
    if (r.tag === ANY || r.tag === tag) {
      if (prev === null) lane.postedHead = r.next; else prev.next = r.next;
      if (lane.postedTail === r) lane.postedTail = prev;
      deliver(r, tag, payload);
      if (--lane.waiting === 0 && lane.wake !== null) {
        const wake = lane.wake;
        lane.wake = null;
        wake();
      }
      return;
    }
  }
  const u: Unexpected = { tag, payload: Uint8Array.prototype.slice.call(payload), next: null };
  if (lane.unexpTail === null) lane.unexpHead = u; else lane.unexpTail.next = u;
  lane.unexpTail = u;
}

/** Bytes from the socket: whole frames go to `arrive`, a partial one waits in `carry`. */
function onData(lane: Lane, chunk: Buffer): void {
  const data = lane.carry === null ? chunk : Buffer.concat([lane.carry, chunk]);
  let at = 0;
  while (data.length - at >= HEADER) {
    const n = (data[at + 28]! | (data[at + 29]! << 8) | (data[at + 30]! << 16)) + data[at + 31]! * 0x1000000;
    if (data.length - at < HEADER + n) break;
    arrive(lane, data, at);
    at += HEADER + n;
  }
  lane.carry = at === data.length ? null : data.subarray(at);
}

/** MPI_Waitall on the lean path: resolves once every request is done (sends are done at once). */
function waitall(lane: Lane, reqs: readonly LeanRequest[]): Promise<void> {
  let pending = 0;
  for (let i = 0; i < reqs.length; i++) if (!reqs[i]!.done) pending++;
  if (pending === 0) return Promise.resolve();
  lane.waiting = pending;
  return new Promise((resolve) => {
    lane.wake = resolve;
  });
}

/** The benchmark's loop, as msgrate-curve.ts; rank 0 prints one line per block. */
async function run(sock: net.Socket, rank: number): Promise<void> {
  sock.setNoDelay(true);
  const lane = new Lane(sock, rank, 0);
  // --raw: the peer's frames are only counted; a whole window wakes the waiting iteration.
  const batch = Buffer.alloc(window * HEADER);
  let arrived = 0;
  let rawWake: (() => void) | null = null;
  if (raw) {
    sock.on('data', frameCounter(window, () => {
      if (rawWake !== null) {
        const wake = rawWake;
        rawWake = null;
        wake();
      } else {
        arrived++;
      }
    }, HEADER));
  } else {
    sock.on('data', (chunk: Buffer) => onData(lane, chunk));
  }
  const rawIteration = (): Promise<void> => {
    sock.write(batch);
    if (arrived > 0) {
      arrived--;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      rawWake = resolve;
    });
  };
  const recv = Array.from({ length: window }, () => new Uint8Array(0));
  const send = new Uint8Array(0);
  const reqs: LeanRequest[] = [];
  const lines: string[] = [];
  for (let b = 0; b < blocks; b++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const k0 = threadCpu();
    for (let it = 0; raw && it < per; it++) await rawIteration();
    for (let it = 0; !raw && it < per; it++) {
      for (let i = 0; i < window; i++) reqs[i] = irecv(lane, recv[i]!, 0);
      for (let i = 0; i < window; i++) reqs[window + i] = isend(lane, send, 0);
      await waitall(lane, reqs);
    }
    const t1 = performance.now();
    const c = process.cpuUsage(c0);
    const k1 = threadCpu();
    lines.push(`${(b + 1) * per}\t${(((window * per) / (t1 - t0)) * 1000 / 1e6).toFixed(3)} M/s\tcpu ${((c.user + c.system) / per).toFixed(1)} us/it` +
      `\tmain thread ${((k1.mainNs - k0.mainNs) / 1000 / per).toFixed(1)} other threads ${((k1.otherNs - k0.otherNs) / 1000 / per).toFixed(1)} us/it`);
  }
  if (rank === 0) console.log(`lean-model${raw ? ' --raw' : ''} (rank 0)\n${lines.join('\n')}`);
  sock.end();
}

if (values.peer !== undefined) {
  const sock = net.connect(Number(values.peer), '127.0.0.1');
  sock.on('connect', () => void run(sock, 1));
} else {
  const server = net.createServer((sock) => {
    server.close();
    void run(sock, 0);
  });
  server.listen(0, '127.0.0.1', () => {
    const port = (server.address() as net.AddressInfo).port;
    fork(fileURLToPath(import.meta.url), ['--blocks', String(blocks), '--block', String(per), '--window', String(window), '--peer', String(port), ...(raw ? ['--raw'] : [])], { execArgv: process.execArgv });
  });
}
