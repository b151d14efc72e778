// The data sieving plan (sieve.ts) against a naive per-piece reference: for random run lists
// (forward, backward, touching, longer than the buffer), random buffer sizes and files that end
// anywhere, the extents partition the runs in order, respect the buffer, are maximal, and reading
// or writing through them gives the bytes that one access per run gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gatherPieces, piecesBytes, planSieve, scatterPieces } from './sieve.ts';
import { LARGE_PIECE_BYTES } from './two-phase.ts';
import type { Runs } from './view-map.ts';

/** Runs: each a (gap, length) from the end of the one before; a negative gap goes backwards. */
const runsArb = fc.array(fc.tuple(fc.integer({ min: -40, max: 40 }), fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 25 }).map((steps): Runs => {
  const runs: Runs = { offsets: [], lengths: [] };
  let end = 0;
  for (const [gap, len] of steps) {
    const o = Math.max(0, end + gap);
    runs.offsets.push(o);
    runs.lengths.push(len);
    end = o + len;
  }
  return runs;
});

function span(runs: Runs): number {
  return Math.max(...runs.offsets.map((o, i) => o + runs.lengths[i]!));
}

/** The reference read: one pread per run, stopping at the first run the file cuts short. */
function naiveRead(file: Uint8Array, runs: Runs, area: Uint8Array): number {
  let at = 0;
  for (let i = 0; i < runs.offsets.length; i++) {
    const o = runs.offsets[i]!;
    const got = Math.max(0, Math.min(runs.lengths[i]!, file.length - o));
    area.set(file.subarray(o, o + got), at);
    at += got;
    if (got < runs.lengths[i]!) break;
  }
  return at;
}

/** A read through the plan, as file-access.ts does it (one pread per extent, or per lone run). */
function sievedRead(file: Uint8Array, runs: Runs, bufferSize: number, area: Uint8Array): number {
  let at = 0;
  for (const x of planSieve(runs, bufferSize)) {
    const extent = new Uint8Array(x.length);
    const got = Math.max(0, Math.min(x.length, file.length - x.offset));
    extent.set(file.subarray(x.offset, x.offset + got));
    const copied = gatherPieces(x, runs, extent, got, area, at);
    at += copied;
    if (copied < piecesBytes(x, runs)) break;
  }
  return at;
}

/** The file as bytes written at `offset` leave it (a write past the end fills the gap with zeros). */
function pwrite(file: Uint8Array, bytes: Uint8Array, offset: number): Uint8Array {
  const out = new Uint8Array(Math.max(file.length, offset + bytes.length));
  out.set(file);
  out.set(bytes, offset);
  return out;
}

function naiveWrite(file: Uint8Array, runs: Runs, data: Uint8Array): Uint8Array {
  let at = 0;
  for (let i = 0; i < runs.offsets.length; i++) {
    file = pwrite(file, data.subarray(at, at + runs.lengths[i]!), runs.offsets[i]!);
    at += runs.lengths[i]!;
  }
  return file;
}

/** A write through the plan: read the extent (zeros past the end), patch the pieces in, write it back. */
function sievedWrite(file: Uint8Array, runs: Runs, bufferSize: number, data: Uint8Array): Uint8Array {
  let at = 0;
  for (const x of planSieve(runs, bufferSize)) {
    const extent = new Uint8Array(x.length);
    extent.set(file.subarray(x.offset, Math.min(file.length, x.offset + x.length)));
    at += scatterPieces(x, runs, data, at, extent);
    file = pwrite(file, extent, x.offset);
  }
  return file;
}

const bytesOf = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

describe('data sieving plan', () => {
  it('groups forward runs within the buffer; a backward or oversized run starts a new extent', () => {
    const runs: Runs = { offsets: [0, 10, 20, 5, 100], lengths: [4, 4, 4, 2, 50] };
    expect(planSieve(runs, 16)).toEqual([
      { offset: 0, length: 14, first: 0, end: 2 },
      { offset: 20, length: 4, first: 2, end: 3 },
      { offset: 5, length: 2, first: 3, end: 4 },
      { offset: 100, length: 50, first: 4, end: 5 },
    ]);
  });

  it('a run of LARGE_PIECE_BYTES or more is an extent by itself: sieving it would only read the holes too', () => {
    const L = LARGE_PIECE_BYTES;
    // a 3-D array's 2 x 2 x 1 block: runs of 4 L with holes of 4 L between them, in a 4 MiB read buffer
    const runs: Runs = { offsets: [0, 8 * L, 16 * L, 16 * L + 4 * L + 10, 20 * L + 20], lengths: [4 * L, 4 * L, 4 * L, 4, L] };
    expect(planSieve(runs, 4 * 1024 * 1024)).toEqual([
      { offset: 0, length: 4 * L, first: 0, end: 1 },
      { offset: 8 * L, length: 4 * L, first: 1, end: 2 },
      { offset: 16 * L, length: 4 * L, first: 2, end: 3 },
      { offset: 20 * L + 10, length: 4, first: 3, end: 4 },
      { offset: 20 * L + 20, length: L, first: 4, end: 5 },
    ]);
    // small runs still group around them
    expect(planSieve({ offsets: [0, 10, 20], lengths: [4, 4, L - 1] }, 4 * L).map((x) => [x.first, x.end])).toEqual([[0, 3]]);
  });

  it('extents partition the runs in order, cover them, fit the buffer and are maximal', () => {
    fc.assert(fc.property(runsArb, fc.integer({ min: 1, max: 200 }), (runs, bufferSize) => {
      const plan = planSieve(runs, bufferSize);
      let next = 0;
      for (const x of plan) {
        expect(x.first).toBe(next);
        expect(x.end).toBeGreaterThan(x.first);
        next = x.end;
        if (x.end - x.first > 1) expect(x.length).toBeLessThanOrEqual(bufferSize);
        expect(x.offset).toBe(runs.offsets[x.first]);
        expect(x.offset + x.length).toBe(runs.offsets[x.end - 1]! + runs.lengths[x.end - 1]!);
        for (let k = x.first + 1; k < x.end; k++) expect(runs.offsets[k]).toBeGreaterThanOrEqual(runs.offsets[k - 1]! + runs.lengths[k - 1]!);
        // Maximal: the run after the extent goes backwards or would not fit.
        if (x.end < runs.offsets.length) {
          const o = runs.offsets[x.end]!;
          const fits = o >= x.offset + x.length && o + runs.lengths[x.end]! - x.offset <= bufferSize;
          expect(fits).toBe(false);
        }
      }
      expect(next).toBe(runs.offsets.length);
    }));
  });

  it('a sieved read gives the bytes and the count of one read per run, wherever the file ends', () => {
    fc.assert(fc.property(runsArb, fc.integer({ min: 1, max: 200 }), fc.nat(), fc.nat(255), (runs, bufferSize, cut, seed) => {
      const file = bytesOf(cut % (span(runs) + 10), seed);
      const total = runs.lengths.reduce((a, b) => a + b, 0);
      const want = new Uint8Array(total);
      const got = new Uint8Array(total);
      expect(sievedRead(file, runs, bufferSize, got)).toBe(naiveRead(file, runs, want));
      expect(got).toEqual(want);
    }));
  });

  it('a sieved write (read-modify-write of each extent) leaves the file one write per run leaves', () => {
    // Writable views do not overlap (MPI 4.0 14.3): runs made disjoint by taking each byte once.
    fc.assert(fc.property(runsArb, fc.integer({ min: 1, max: 200 }), fc.nat(), fc.nat(255), (raw, bufferSize, size, seed) => {
      const taken = new Set<number>();
      const runs: Runs = { offsets: [], lengths: [] };
      raw.offsets.forEach((o, i) => {
        for (let b = o; b < o + raw.lengths[i]!; b++) if (taken.has(b)) return;
        for (let b = o; b < o + raw.lengths[i]!; b++) taken.add(b);
        runs.offsets.push(o);
        runs.lengths.push(raw.lengths[i]!);
      });
      const file = bytesOf(size % (span(raw) + 10), seed);
      const data = bytesOf(runs.lengths.reduce((a, b) => a + b, 0), seed + 101);
      expect(sievedWrite(file, runs, bufferSize, data)).toEqual(naiveWrite(file, runs, data));
    }));
  });
});
