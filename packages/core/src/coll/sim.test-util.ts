/**
 * Test support for coll/ (not exported from index.ts): N simulated ranks whose
 * CollPt2pt endpoints are connected by in-memory FIFO queues, one per
 * (source, dest, tag), plus the reduction ops the tests use.
 *
 * The simulator shakes out ordering bugs deterministically:
 * - delivery is asynchronous: a pump delivers one in-flight message per
 *   event-loop turn (setImmediate), picking the channel with a seeded PRNG,
 *   so messages of different channels arrive in a random but reproducible
 *   order, while each channel stays FIFO (MPI non-overtaking);
 * - the payload is copied at delivery (eager) or at match (messages of at
 *   least `rendezvousBytes`, whose send also resolves only when matched), so
 *   an algorithm that reuses a buffer before its send resolves, or that
 *   awaits a send before posting the receive its peer needs, fails;
 * - received arrays sit at random byte offsets of larger buffers;
 * - a run that stops making progress while receives are pending rejects with
 *   a description (deadlock) instead of hanging;
 * - after a run, leftover messages or receives are reported (message-count
 *   mismatch between sender and receiver).
 *
 * Also: withCallbacks (the step machines' callback entries over the simulator) and grid (a
 * periodic Cartesian neighbourhood), shared by the collectives' tests.
 */
import type { MPIError } from '../util/index.ts';
import { recvInto } from './exchange.ts';
import type { NeighborPlan } from './neighbor-peers.ts';
import type { ByteOp, CollPt2pt, ReceiveIntoTarget } from './pt2pt.ts';

/** mulberry32: a small seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Msg {
  readonly src: Uint8Array;
  data: Uint8Array | null;
  readonly rendezvous: boolean;
  readonly sent: () => void;
}

interface Channel {
  readonly key: string;
  readonly inflight: Msg[];
  readonly arrived: Msg[];
  readonly waiting: Array<(data: Uint8Array) => void>;
}

export interface SimOptions {
  /** PRNG seed (default 1). */
  readonly seed?: number;
  /** Messages of at least this many bytes complete their send only when matched (default 64). */
  readonly rendezvousBytes?: number;
}

/** N ranks connected by in-memory queues. */
export class Sim {
  readonly size: number;
  readonly endpoints: CollPt2pt[];
  messages = 0;
  bytes = 0;
  readonly #random: () => number;
  readonly #rendezvousBytes: number;
  readonly #channels = new Map<string, Channel>();
  readonly #active = new Set<Channel>();
  #pumping = false;

  constructor(size: number, opts: SimOptions = {}) {
    this.size = size;
    this.#random = prng(opts.seed ?? 1);
    this.#rendezvousBytes = opts.rendezvousBytes ?? 64;
    this.endpoints = Array.from({ length: size }, (_, rank) => this.#endpoint(rank));
  }

  #endpoint(rank: number): CollPt2pt {
    const sim = this;
    return {
      rank,
      size: this.size,
      send(dest, tag, data) {
        sim.#check(rank, dest, tag, 'send');
        sim.messages++;
        sim.bytes += data.length;
        return new Promise<void>((resolve) => {
          const ch = sim.#channel(rank, dest, tag);
          ch.inflight.push({ src: data, data: null, rendezvous: data.length >= sim.#rendezvousBytes, sent: resolve });
          sim.#active.add(ch);
          sim.#pump();
        });
      },
      recv(source, tag) {
        sim.#check(rank, source, tag, 'recv');
        return new Promise<Uint8Array>((resolve) => {
          const ch = sim.#channel(source, rank, tag);
          const msg = ch.arrived.shift();
          if (msg !== undefined) resolve(sim.#take(msg));
          else ch.waiting.push(resolve);
        });
      },
    };
  }

  #check(rank: number, peer: number, tag: number, what: string): void {
    if (!Number.isInteger(peer) || peer < 0 || peer >= this.size) throw new Error(`rank ${rank} ${what}: bad peer ${peer}`);
    if (!Number.isInteger(tag) || tag < 0) throw new Error(`rank ${rank} ${what}: bad tag ${tag}`);
  }

  #channel(src: number, dst: number, tag: number): Channel {
    const key = `${src}->${dst}#${tag}`;
    let ch = this.#channels.get(key);
    if (ch === undefined) {
      ch = { key, inflight: [], arrived: [], waiting: [] };
      this.#channels.set(key, ch);
    }
    return ch;
  }

  /** Completes a matched message: copy (if not yet), resolve a rendezvous send, hand out a fresh array at a random offset. */
  #take(msg: Msg): Uint8Array {
    const data = msg.data ?? msg.src.slice();
    if (msg.rendezvous) msg.sent();
    const off = Math.floor(this.#random() * 8);
    const out = new Uint8Array(data.length + off).subarray(off);
    out.set(data);
    return out;
  }

  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    setImmediate(() => this.#deliverOne());
  }

  #deliverOne(): void {
    this.#pumping = false;
    if (this.#active.size === 0) return;
    const chans = [...this.#active];
    const ch = chans[Math.floor(this.#random() * chans.length)]!;
    const msg = ch.inflight.shift()!;
    if (ch.inflight.length === 0) this.#active.delete(ch);
    if (!msg.rendezvous) {
      msg.data = msg.src.slice();
      msg.sent();
    }
    const waiter = ch.waiting.shift();
    if (waiter !== undefined) waiter(this.#take(msg));
    else ch.arrived.push(msg);
    this.#pump();
  }

  /** In-flight, unmatched and pending-receive counts, and a description of what is left. */
  leftovers(): { inflight: number; unmatched: number; waiting: number; detail: string } {
    let inflight = 0;
    let unmatched = 0;
    let waiting = 0;
    const detail: string[] = [];
    for (const ch of this.#channels.values()) {
      inflight += ch.inflight.length;
      unmatched += ch.arrived.length;
      waiting += ch.waiting.length;
      if (ch.arrived.length > 0) detail.push(`${ch.key}: ${ch.arrived.length} unmatched`);
      if (ch.waiting.length > 0) detail.push(`${ch.key}: ${ch.waiting.length} receive(s) waiting`);
    }
    return { inflight, unmatched, waiting, detail: detail.join('; ') };
  }

  /**
   * Runs body on every rank; resolves the per-rank results. Rejects on the
   * first rank's error, on a deadlock, or (with `strict`, default true) when
   * messages or receives are left over at the end.
   */
  async run<T>(body: (pt: CollPt2pt, rank: number) => Promise<T>, strict = true): Promise<T[]> {
    let done = false;
    const watchdog = new Promise<never>((_, reject) => {
      let idle = 0;
      const tick = (): void => {
        if (done) return;
        const left = this.leftovers();
        idle = left.inflight === 0 ? idle + 1 : 0;
        if (idle > 20) {
          reject(new Error(`deadlock: ${left.detail || 'no messages in flight'}`));
          return;
        }
        setImmediate(tick);
      };
      setImmediate(tick);
    });
    try {
      const results = await Promise.race([Promise.all(this.endpoints.map((pt, r) => body(pt, r))), watchdog]);
      if (strict) {
        const left = this.leftovers();
        if (left.inflight + left.unmatched + left.waiting > 0) throw new Error(`leftovers after run: ${left.detail}`);
      }
      return results;
    } finally {
      done = true;
    }
  }
}

// ---------------------------------------------------------------------------
// Reduction ops used by the tests.

/** Int32 wrapping sum (commutative), via DataView so unaligned views work. */
export const SUM_I32: ByteOp = {
  itemBytes: 4,
  commute: true,
  combine(a, b) {
    const va = new DataView(a.buffer, a.byteOffset, a.byteLength);
    const vb = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < a.length; i += 4) vb.setInt32(i, (va.getInt32(i, true) + vb.getInt32(i, true)) | 0, true);
  },
};

/** Modulus of the matrix entries: products of two entries stay exact in doubles. */
export const MOD = 65521;

/** 2x2 matrix product mod MOD on items of four uint32 (row major): inout = in x inout. Not commutative. */
export const MATMUL: ByteOp = {
  itemBytes: 16,
  commute: false,
  combine(a, b) {
    const va = new DataView(a.buffer, a.byteOffset, a.byteLength);
    const vb = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < a.length; i += 16) {
      const [x0, x1, x2, x3] = [0, 4, 8, 12].map((k) => va.getUint32(i + k, true)) as [number, number, number, number];
      const [y0, y1, y2, y3] = [0, 4, 8, 12].map((k) => vb.getUint32(i + k, true)) as [number, number, number, number];
      vb.setUint32(i, (x0 * y0 + x1 * y2) % MOD, true);
      vb.setUint32(i + 4, (x0 * y1 + x1 * y3) % MOD, true);
      vb.setUint32(i + 8, (x2 * y0 + x3 * y2) % MOD, true);
      vb.setUint32(i + 12, (x2 * y1 + x3 * y3) % MOD, true);
    }
  },
};

/** A copy of op that claims commutativity false (to run the rank-order paths with a commutative op). */
export function nonCommutative(op: ByteOp): ByteOp {
  return { ...op, commute: false };
}

/** Deterministic pseudo-random bytes; for MATMUL items, entries below MOD. */
export function randomBytes(n: number, seed: number, op?: ByteOp): Uint8Array {
  const r = prng(seed);
  const out = new Uint8Array(n);
  if (op === MATMUL) {
    const v = new DataView(out.buffer);
    for (let i = 0; i + 4 <= n; i += 4) v.setUint32(i, Math.floor(r() * MOD), true);
  } else {
    for (let i = 0; i < n; i++) out[i] = Math.floor(r() * 256);
  }
  return out;
}

/** Sequential reference: x0 op x1 op ... op x(k-1), applied left to right (rank order). */
export function foldLeft(op: ByteOp, xs: readonly Uint8Array[]): Uint8Array {
  let acc = xs[0]!.slice();
  for (let i = 1; i < xs.length; i++) {
    const next = xs[i]!.slice();
    op.combine(acc, next); // next = acc op next
    acc = next;
  }
  return acc;
}

/**
 * Describes how `actual` differs from `expected` ('' when equal). Tests use
 * `expect(diff(a, b)).toBe('')`: vitest's deep equality walks typed arrays
 * element by element and is far too slow for 10,000-item vectors.
 */
export function diff(actual: Uint8Array | null | undefined, expected: Uint8Array): string {
  if (actual === null || actual === undefined) return `got ${String(actual)}, expected ${expected.length} bytes`;
  if (actual.length !== expected.length) return `length ${actual.length}, expected ${expected.length}`;
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] !== expected[i]) return `byte ${i}: ${actual[i]} !== ${expected[i]}`;
  }
  return '';
}

/**
 * A view with the step machines' callback entries (pt2pt.ts recvThen/sendThen, and recvIntoThen when
 * `into`), as GroupPt2pt has them, over the simulator's promises (always later; the device's reports
 * before the entry returns are the integration tests' part: coll-forms, coll-lean).
 */
export function withCallbacks(pt: CollPt2pt, into = false): CollPt2pt {
  return {
    ...(into ? { recvIntoThen: (s: number, t: number, buf: Uint8Array, target: ReceiveIntoTarget) => { recvInto(pt, s, t, buf, 'test').then((n) => target.receivedInto(n, t, null), (e: MPIError) => target.receivedInto(0, -1, e)); } } : {}),
    rank: pt.rank,
    size: pt.size,
    send: (d, t, b) => pt.send(d, t, b),
    recv: (s, t) => pt.recv(s, t),
    recvThen: (s, t, target) => { pt.recv(s, t).then((b) => target.received(b, t, null), (e) => target.received(null, -1, e)); },
    sendThen: (d, t, b, target) => { pt.send(d, t, b).then(() => target.sent(null), (e) => target.sent(e)); },
  };
}

/** A periodic rows x cols grid (row-major) as cartNeighbors and cartSendOrder give it: rank's neighbourhood. */
export function grid(rows: number, cols: number, rank: number): NeighborPlan {
  const r = Math.floor(rank / cols);
  const c = rank % cols;
  const at = (rr: number, cc: number) => ((rr + rows) % rows) * cols + ((cc + cols) % cols);
  const n = [at(r - 1, c), at(r + 1, c), at(r, c - 1), at(r, c + 1)];
  return { sources: n, destinations: n, sendOrder: [1, 0, 3, 2] };
}
