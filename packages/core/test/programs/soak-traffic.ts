/**
 * Deterministic traffic for the soak (soak.ts, soak-worker.ts): a seeded
 * PRNG, each round's plan of point-to-point messages, and the byte pattern of
 * every message, so that every rank computes the same plan and a receiver can
 * regenerate exactly what the sender sent.
 *
 * A message's pattern depends on (seed, round, index) only; when it has room
 * its first 12 bytes carry round, index and source, so a message delivered
 * to the wrong receive shows up as a sequence error rather than plain
 * corruption.
 */

/** xorshift32 (Marsaglia): fast, full period 2^32-1 over non-zero states. */
export class Rng {
  #s: number;
  constructor(...seeds: number[]) {
    let h = 0x811c9dc5;
    for (const s of seeds) h = Math.imul(h ^ (s >>> 0), 0x01000193) >>> 0;
    this.#s = h === 0 ? 0x9e3779b9 : h;
  }
  next(): number {
    let x = this.#s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#s = x >>> 0;
    return this.#s;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor((this.next() / 0x1_0000_0000) * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() / 0x1_0000_0000 < p;
  }
}

export const KiB = 1024;
export const MiB = 1024 * 1024;

/**
 * Sizes from 0 B to 4 MiB: most small, some around the default eager limit
 * (64 KiB), a few rendezvous up to exactly 4 MiB.
 */
export function messageSize(rng: Rng): number {
  const r = rng.next() % 100;
  if (r < 35) return rng.int(0, 64);
  if (r < 60) return rng.int(65, 8 * KiB);
  if (r < 80) return rng.int(8 * KiB, 64 * KiB + 64); // straddles the eager limit
  if (r < 96) return rng.int(64 * KiB, MiB);
  if (r < 99) return rng.int(MiB, 4 * MiB);
  return 4 * MiB;
}

/** How the receiver takes a message. */
export const CLASS_WILDCARD = 0; // iprobe/improbe(ANY_SOURCE, ANY_TAG), then Recv / Message.Recv
export const CLASS_SPECIFIC = 1; // Irecv(exact buffer, src, tag) posted before the round's probing
export const CLASS_ANY_SOURCE = 2; // Irecv(exact buffer, ANY_SOURCE, unique tag)

export interface PlannedMessage {
  readonly index: number;
  readonly src: number;
  readonly dst: number;
  readonly size: number;
  readonly tag: number;
  readonly cls: number;
}

export const TAG_WILDCARD_BASE = 1; // 1..1000
export const TAG_SPECIFIC_BASE = 2000;
export const TAG_ANY_SOURCE_BASE = 100_000;
/** A tag no message uses: receives posted on it are cancelled. */
export const TAG_NEVER = 99_999;

/** Every rank computes the same plan for (seed, round). */
export function planRound(seed: number, round: number, size: number, perRank: number): PlannedMessage[] {
  const rng = new Rng(seed, round, 0x504c414e);
  const out: PlannedMessage[] = [];
  for (let index = 0; index < perRank * size; index++) {
    const src = index % size;
    const dst = rng.int(0, size - 1); // self-sends included
    const len = messageSize(rng);
    const c = rng.next() % 4;
    const cls = c < 2 ? CLASS_WILDCARD : c === 2 ? CLASS_SPECIFIC : CLASS_ANY_SOURCE;
    const tag = cls === CLASS_WILDCARD ? TAG_WILDCARD_BASE + rng.int(0, 999) : cls === CLASS_SPECIFIC ? TAG_SPECIFIC_BASE + index : TAG_ANY_SOURCE_BASE + index;
    out.push({ index, src, dst, size: len, tag, cls });
  }
  return out;
}

/** The bytes of message `index` of `round` from `src`. */
export function pattern(seed: number, round: number, index: number, src: number, size: number): Uint8Array {
  const words = new Uint32Array(Math.ceil(size / 4));
  const rng = new Rng(seed, round, index, 0x44415441);
  for (let i = 0; i < words.length; i++) words[i] = rng.next();
  const bytes = new Uint8Array(words.buffer, 0, size);
  if (size >= 12) {
    const dv = new DataView(bytes.buffer, 0, size);
    dv.setUint32(0, round, true);
    dv.setUint32(4, index, true);
    dv.setUint32(8, src, true);
  }
  return bytes;
}

export type Verdict = 'ok' | 'sequence' | 'corrupt';

/** Compares a received message with the pattern it should have. */
export function verify(got: Uint8Array, seed: number, round: number, index: number, src: number, size: number): Verdict {
  if (got.length !== size) return 'corrupt';
  if (size >= 12) {
    const dv = new DataView(got.buffer, got.byteOffset, got.byteLength);
    if (dv.getUint32(0, true) !== round || dv.getUint32(4, true) !== index || dv.getUint32(8, true) !== src) return 'sequence';
  }
  const want = pattern(seed, round, index, src, size);
  return Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want.buffer, want.byteOffset, want.byteLength)) ? 'ok' : 'corrupt';
}
