// The trace recorder's 32-byte rows (api/trace-rows.ts) expand into the wire's float64 rows exactly, across chunks.
import { describe, expect, it } from 'vitest';
import { TRACE_CALL, TRACE_MSG } from '../pmi/index.ts';
import { bytesWord, CALL_ROW, CHUNK_ROWS, CompactRows, expandCalls, expandMsgs, MSG_ROW } from './trace-rows.ts';

describe('trace rows', () => {
  it('expand CALL rows with their times, ids and -1 for an unknown size, over more than one chunk', () => {
    const t = new CompactRows();
    const n = CHUNK_ROWS + 3;
    for (let r = 0; r < n; r++) {
      const o = t.add();
      const c = t.last;
      c.f64[(o >> 1) + CALL_ROW.START_F64] = 1_732_000_000_000.123 + r;
      c.f32[o + CALL_ROW.DURATION_F32] = 0.25 * r;
      c.i32[o + CALL_ROW.NAME] = r % 7;
      c.i32[o + CALL_ROW.COMM] = r % 2 === 0 ? -1 : 4;
      c.i32[o + CALL_ROW.PEER] = -1;
      c.i32[o + CALL_ROW.TAG] = 2_000_000_000;
      c.u32[o + CALL_ROW.BYTES] = bytesWord(r % 3 === 0 ? -1 : r === 1 ? 0xffff_ffff : r);
    }
    const out = expandCalls(t, n);
    expect(out.length).toBe(n * TRACE_CALL.WORDS);
    for (const r of [0, 1, 2, CHUNK_ROWS - 1, CHUNK_ROWS, n - 1]) {
      const w = r * TRACE_CALL.WORDS;
      expect(out[w + TRACE_CALL.START_MS]).toBe(1_732_000_000_000.123 + r);
      expect(out[w + TRACE_CALL.DURATION_MS]).toBe(0.25 * r);
      expect(out[w + TRACE_CALL.NAME]).toBe(r % 7);
      expect(out[w + TRACE_CALL.COMM]).toBe(r % 2 === 0 ? -1 : 4);
      expect(out[w + TRACE_CALL.PEER]).toBe(-1);
      expect(out[w + TRACE_CALL.TAG]).toBe(2_000_000_000);
      expect(out[w + TRACE_CALL.BYTES]).toBe(r % 3 === 0 ? -1 : r === 1 ? 0xffff_fffe : r);
    }
  });

  it('expand MSG rows with post orders beyond 32 bits', () => {
    const t = new CompactRows();
    for (let r = 0; r < 5; r++) {
      const o = t.add();
      const c = t.last;
      c.f64[(o >> 1) + MSG_ROW.ORDER_F64] = 2 ** 40 + r;
      c.i32[o + MSG_ROW.CALL] = r;
      c.i32[o + MSG_ROW.IS_RECV] = r % 2;
      c.i32[o + MSG_ROW.CTX] = 3;
      c.i32[o + MSG_ROW.SRC] = r;
      c.i32[o + MSG_ROW.DST] = 4 - r;
      c.i32[o + MSG_ROW.TAG] = -1;
    }
    const out = expandMsgs(t, 4);
    expect(out.length).toBe(4 * TRACE_MSG.WORDS);
    for (let r = 0; r < 4; r++) expect([...out.subarray(r * TRACE_MSG.WORDS, (r + 1) * TRACE_MSG.WORDS)]).toEqual(rowOf(r));
    function rowOf(r: number): number[] {
      const row = new Array<number>(TRACE_MSG.WORDS);
      row[TRACE_MSG.CALL] = r;
      row[TRACE_MSG.IS_RECV] = r % 2;
      row[TRACE_MSG.CTX] = 3;
      row[TRACE_MSG.SRC] = r;
      row[TRACE_MSG.DST] = 4 - r;
      row[TRACE_MSG.TAG] = -1;
      row[TRACE_MSG.ORDER] = 2 ** 40 + r;
      return row;
    }
  });
});
