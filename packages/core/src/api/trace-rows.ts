/**
 * The trace recorder's tables in memory (api/trace-recorder.ts): rows of 32 bytes, in chunks,
 * expanded into the float64 rows of the wire (pmi/trace-format.ts, 56 bytes) only when the trace
 * is handed over. A traced message writes a CALL row and a MSG row at each end; at 56 bytes a row
 * the fresh pages those take were a tenth of the recorder's time per message (and the external
 * memory they add is what sets V8 collecting), so in memory only the start time and the post
 * order are float64; the duration is a float32 of milliseconds (exact to the microsecond up to
 * 16 s, to 0.1% beyond) and the rest are 32-bit integers.
 *
 * CALL row (int32 words): START float64 at words 0-1, DURATION float32 at word 2, NAME 3, COMM 4,
 * PEER 5, TAG 6, BYTES 7 (uint32; UNKNOWN_BYTES: -1 on the wire).
 * MSG row: ORDER float64 at words 0-1, CALL 2, IS_RECV 3, CTX 4, SRC 5, DST 6, TAG 7.
 */
import { TRACE_CALL, TRACE_MSG } from '../pmi/index.ts';

/** int32 words per row */
export const ROW_WORDS = 8;
export const CALL_ROW = { START_F64: 0, DURATION_F32: 2, NAME: 3, COMM: 4, PEER: 5, TAG: 6, BYTES: 7 } as const;
export const MSG_ROW = { ORDER_F64: 0, CALL: 2, IS_RECV: 3, CTX: 4, SRC: 5, DST: 6, TAG: 7 } as const;
/** BYTES of a row whose size is not known (-1 on the wire); a larger count is stored as UNKNOWN_BYTES - 1. */
export const UNKNOWN_BYTES = 0xffff_ffff;

/**
 * Rows per chunk. The tables grow by chunks, neither sized for the setting up front (a sudden
 * external allocation of tens of MB sets V8 marking the heap over and over, and every young object
 * then survives its scavenge: ~1 us more per traced message) nor doubled and copied.
 */
export const CHUNK_ROWS = 4096;

/** One chunk's views of its bytes. */
export interface RowChunk {
  readonly i32: Int32Array;
  readonly u32: Uint32Array;
  readonly f32: Float32Array;
  readonly f64: Float64Array;
}

function newChunk(): RowChunk {
  const buf = new ArrayBuffer(CHUNK_ROWS * ROW_WORDS * 4);
  return { i32: new Int32Array(buf), u32: new Uint32Array(buf), f32: new Float32Array(buf), f64: new Float64Array(buf) };
}

const EMPTY: RowChunk = { i32: new Int32Array(0), u32: new Uint32Array(0), f32: new Float32Array(0), f64: new Float64Array(0) };

/** A table of 32-byte rows in chunks of CHUNK_ROWS. */
export class CompactRows {
  readonly #chunks: RowChunk[] = [];
  /** the chunk rows are added to */
  last: RowChunk = EMPTY;
  /** the int32 word offset of the next row in `last` */
  #next = 0;

  /** Adds a row; returns its int32 word offset in `last` (its float64 index is that / 2). */
  add(): number {
    if (this.#next === this.last.i32.length) {
      this.last = newChunk();
      this.#chunks.push(this.last);
      this.#next = 0;
    }
    const o = this.#next;
    this.#next += ROW_WORDS;
    return o;
  }

  /**
   * Runs the growth path (a chunk filled: make the next one) where V8 records it, before the
   * recorder's wrappers are optimized. A new chunk is made by the first add() of a table, when
   * add() has no feedback vector yet (V8 makes one after a few calls), so the call in it had no
   * feedback when the wrappers that inline add() were optimized, and the first full chunk (4,096
   * rows in) deoptimized them ("Insufficient type feedback for call", --trace-deopt): each was
   * optimized again a few hundred milliseconds later on a loaded machine. One table filled past a
   * chunk here (about 0.3 ms, 256 KiB of garbage once per thread) gives the path its feedback.
   */
  static warmGrowth(): void {
    const t = new CompactRows();
    for (let r = 0; r <= CHUNK_ROWS; r++) t.add();
  }

  /** The chunk of row `row` (its word offset in it: (row % CHUNK_ROWS) * ROW_WORDS). */
  chunkOf(row: number): RowChunk {
    return this.#chunks[Math.floor(row / CHUNK_ROWS)]!;
  }
}

/** The first `rows` CALL rows as the wire's float64 rows (TRACE_CALL). */
export function expandCalls(table: CompactRows, rows: number): Float64Array {
  const W = TRACE_CALL.WORDS;
  const out = new Float64Array(rows * W);
  for (let r = 0; r < rows; r++) {
    const c = table.chunkOf(r);
    const o = (r % CHUNK_ROWS) * ROW_WORDS;
    const w = r * W;
    out[w + TRACE_CALL.START_MS] = c.f64[(o >> 1) + CALL_ROW.START_F64]!;
    out[w + TRACE_CALL.DURATION_MS] = c.f32[o + CALL_ROW.DURATION_F32]!;
    out[w + TRACE_CALL.NAME] = c.i32[o + CALL_ROW.NAME]!;
    out[w + TRACE_CALL.COMM] = c.i32[o + CALL_ROW.COMM]!;
    out[w + TRACE_CALL.PEER] = c.i32[o + CALL_ROW.PEER]!;
    out[w + TRACE_CALL.TAG] = c.i32[o + CALL_ROW.TAG]!;
    const bytes = c.u32[o + CALL_ROW.BYTES]!;
    out[w + TRACE_CALL.BYTES] = bytes === UNKNOWN_BYTES ? -1 : bytes;
  }
  return out;
}

/** The first `rows` MSG rows as the wire's float64 rows (TRACE_MSG). */
export function expandMsgs(table: CompactRows, rows: number): Float64Array {
  const W = TRACE_MSG.WORDS;
  const out = new Float64Array(rows * W);
  for (let r = 0; r < rows; r++) {
    const c = table.chunkOf(r);
    const o = (r % CHUNK_ROWS) * ROW_WORDS;
    const w = r * W;
    out[w + TRACE_MSG.ORDER] = c.f64[(o >> 1) + MSG_ROW.ORDER_F64]!;
    out[w + TRACE_MSG.CALL] = c.i32[o + MSG_ROW.CALL]!;
    out[w + TRACE_MSG.IS_RECV] = c.i32[o + MSG_ROW.IS_RECV]!;
    out[w + TRACE_MSG.CTX] = c.i32[o + MSG_ROW.CTX]!;
    out[w + TRACE_MSG.SRC] = c.i32[o + MSG_ROW.SRC]!;
    out[w + TRACE_MSG.DST] = c.i32[o + MSG_ROW.DST]!;
    out[w + TRACE_MSG.TAG] = c.i32[o + MSG_ROW.TAG]!;
  }
  return out;
}

/** The BYTES word of a count (-1: unknown). */
export function bytesWord(bytes: number): number {
  return bytes < 0 ? UNKNOWN_BYTES : Math.min(bytes, UNKNOWN_BYTES - 1);
}
