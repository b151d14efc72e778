// RmaTarget without sockets: requests applied to a window's memory, the answers a target sends,
// the lock word, accumulates per element kind, and a dynamic window's frames held until its attach.
import { describe, expect, it } from 'vitest';
import { FRAME_KIND, newFrameHeader, type FrameHeader } from '../transport/index.ts';
import { ACC_OP, ELEM } from './rma-accumulate.ts';
import { RMA_BATCH, RMA_CODE, RMA_CONTROL, RMA_EPOCH, RMA_LOCK_TYPE, RMA_REGION_SPAN, RMA_STATUS, RmaTarget, rmaDispWords, type RmaOut, type RmaWindowRecord } from './rma-target.ts';
import type { WindowDirectory } from './rma-directory.ts';

const CTX = 40;

function frame(code: number, elem: number, op: number, aux2: number, tag = 9): FrameHeader {
  const h = newFrameHeader();
  h.kind = FRAME_KIND.RMA;
  h.contextId = CTX;
  h.srcEndpoint = 1;
  h.dstEndpoint = 0;
  h.tag = tag;
  h.aux = (code << 16) | (elem << 8) | op;
  h.aux2 = aux2;
  return h;
}

/** A PUT or ACC frame: its displacement travels in the header (rmaDispWords), its payload is the data alone. */
function dataFrame(code: number, elem: number, op: number, disp: number, flags = 0): FrameHeader {
  const [high, low] = rmaDispWords(disp);
  const h = frame(code, elem, op, low, high);
  h.aux |= flags;
  return h;
}

function bytesOf(data: ArrayBufferView): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function payload(disp: number, data: ArrayBufferView = new Uint8Array(0)): Uint8Array {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const p = new Uint8Array(8 + bytes.length);
  new DataView(p.buffer).setFloat64(0, disp, true);
  p.set(bytes, 8);
  return p;
}

/** A send path that records what the target answers; one process of one endpoint. */
function port(record: (h: FrameHeader, p: Uint8Array | null) => void): RmaOut {
  return { out: (_proc, h, p) => void record(h, p), eagerMax: () => 1 << 16, processOf: (e) => e };
}

function setup(bytes = 64): { target: RmaTarget; win: RmaWindowRecord; sent: { h: FrameHeader; payload: Uint8Array | null }[] } {
  const sent: { h: FrameHeader; payload: Uint8Array | null }[] = [];
  const target = new RmaTarget(port((h, p) => sent.push({ h: { ...h }, payload: p === null ? null : p.slice() })));
  const win: RmaWindowRecord = { contextId: CTX, endpoint: 0, serial: 1, memory: new Uint8Array(new SharedArrayBuffer(bytes)), control: new Int32Array(new SharedArrayBuffer(4 * RMA_CONTROL.WORDS)) };
  target.register(win);
  return { target, win, sent };
}

describe('RmaTarget', () => {
  it('notify sends a zero-byte plain EAGER message (a fence notice) to the endpoint\'s process on the RMA frames\' path', () => {
    const sent: { proc: number; h: FrameHeader; payload: Uint8Array | null }[] = [];
    const target = new RmaTarget({ out: (proc, h, p) => void sent.push({ proc, h: { ...h }, payload: p }), eagerMax: () => 1 << 16, processOf: (e) => e >> 1 });
    target.send(2, 5, CTX, 0, RMA_CODE.PUT << 16, 0, new Uint8Array([1]), 'Win.Put');
    target.notify(2, 5, CTX, 3, 'Win.fence');
    expect(sent.map((s) => s.h.kind)).toEqual([FRAME_KIND.RMA, FRAME_KIND.EAGER]);
    const n = sent[1]!;
    expect(n.proc).toBe(2);
    expect(n.payload).toBeNull();
    expect({ ctx: n.h.contextId, src: n.h.srcEndpoint, dst: n.h.dstEndpoint, tag: n.h.tag, flags: n.h.flags, seq: n.h.seq, aux: n.h.aux, aux2: n.h.aux2, len: n.h.payloadLength })
      .toEqual({ ctx: CTX, src: 2, dst: 5, tag: 3, flags: 0, seq: 0, aux: 0, aux2: 0, len: 0 });
  });

  it('applies a PUT without answering, and answers a GET with the bytes as an EAGER frame on the window context', () => {
    const { target, win, sent } = setup();
    target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, 4), new Uint8Array([1, 2, 3]));
    expect([...win.memory.subarray(4, 7)]).toEqual([1, 2, 3]);
    expect(sent).toHaveLength(0);
    target.arrive(1, frame(RMA_CODE.GET, 0, 0, 3, 77), payload(4));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.h).toMatchObject({ kind: FRAME_KIND.EAGER, contextId: CTX, srcEndpoint: 0, dstEndpoint: 1, tag: 77, payloadLength: 3 });
    expect([...sent[0]!.payload!]).toEqual([1, 2, 3]);
  });

  it('accumulates per element kind (SUM on INT32 and FLOAT64, MAX, BXOR, REPLACE) and GET_ACC answers the values before', () => {
    const { target, win, sent } = setup();
    target.arrive(1, dataFrame(RMA_CODE.ACC, ELEM.INT32, ACC_OP.SUM, 0), bytesOf(new Int32Array([5, -2])));
    target.arrive(1, dataFrame(RMA_CODE.ACC, ELEM.INT32, ACC_OP.SUM, 0), bytesOf(new Int32Array([1, 1])));
    expect([...new Int32Array(win.memory.buffer, 0, 2)]).toEqual([6, -1]);
    target.arrive(1, dataFrame(RMA_CODE.ACC, ELEM.FLOAT64, ACC_OP.SUM, 8), bytesOf(new Float64Array([0.25])));
    target.arrive(1, dataFrame(RMA_CODE.ACC, ELEM.FLOAT64, ACC_OP.MAX, 8), bytesOf(new Float64Array([-3])));
    expect(new Float64Array(win.memory.buffer, 8, 1)[0]).toBe(0.25);
    target.arrive(1, dataFrame(RMA_CODE.ACC, ELEM.UINT8, ACC_OP.BXOR, 16), bytesOf(new Uint8Array([0xff])));
    expect(win.memory[16]).toBe(0xff);
    target.arrive(1, frame(RMA_CODE.GET_ACC, ELEM.INT32, ACC_OP.REPLACE, 4), payload(0, new Int32Array([9])));
    expect([...new Int32Array(sent[0]!.payload!.buffer, 0, 1)]).toEqual([6]);
    expect(new Int32Array(win.memory.buffer, 0, 1)[0]).toBe(9);
  });

  it('CAS swaps only when the compare value matches, and answers the value before', () => {
    const { target, win, sent } = setup();
    new Int32Array(win.memory.buffer)[1] = 7;
    target.arrive(1, frame(RMA_CODE.CAS, ELEM.INT32, 0, 4), payload(4, new Int32Array([1, 8])));
    expect(new Int32Array(win.memory.buffer)[1]).toBe(7);
    target.arrive(1, frame(RMA_CODE.CAS, ELEM.INT32, 0, 4), payload(4, new Int32Array([1, 7])));
    expect(new Int32Array(win.memory.buffer)[1]).toBe(1);
    expect(sent.map((s) => new Int32Array(s.payload!.buffer)[0])).toEqual([7, 7]);
  });

  it('grants an exclusive lock once and shared locks many times, never both', () => {
    const { target, win, sent } = setup();
    const ask = (code: number, type: number): number => {
      target.arrive(1, frame(code, 0, 0, type), new Uint8Array(0));
      return sent.at(-1)!.payload![0]!;
    };
    expect(ask(RMA_CODE.LOCK, RMA_LOCK_TYPE.EXCLUSIVE)).toBe(RMA_STATUS.GRANTED);
    expect(ask(RMA_CODE.LOCK, RMA_LOCK_TYPE.SHARED)).toBe(RMA_STATUS.BUSY);
    expect(ask(RMA_CODE.LOCK, RMA_LOCK_TYPE.EXCLUSIVE)).toBe(RMA_STATUS.BUSY);
    expect(ask(RMA_CODE.UNLOCK, RMA_LOCK_TYPE.EXCLUSIVE)).toBe(RMA_STATUS.OK);
    expect(ask(RMA_CODE.LOCK, RMA_LOCK_TYPE.SHARED)).toBe(RMA_STATUS.GRANTED);
    expect(ask(RMA_CODE.LOCK, RMA_LOCK_TYPE.SHARED)).toBe(RMA_STATUS.GRANTED);
    expect(Atomics.load(win.control, RMA_CONTROL.LOCK)).toBe(2);
    expect(ask(RMA_CODE.LOCK, RMA_LOCK_TYPE.EXCLUSIVE)).toBe(RMA_STATUS.BUSY);
    ask(RMA_CODE.UNLOCK, RMA_LOCK_TYPE.SHARED);
    ask(RMA_CODE.UNLOCK, RMA_LOCK_TYPE.SHARED);
    expect(ask(RMA_CODE.LOCK, RMA_LOCK_TYPE.EXCLUSIVE)).toBe(RMA_STATUS.GRANTED);
  });

  it('refuses what lies outside the window or names no window: no bytes for a GET, ERROR for a FLUSH', () => {
    const { target, sent } = setup(8);
    target.arrive(1, frame(RMA_CODE.GET, 0, 0, 4), payload(6));
    expect(sent[0]!.payload!.length).toBe(0);
    const h = frame(RMA_CODE.FLUSH, 0, 0, 0);
    h.contextId = CTX + 4;
    target.arrive(1, h, new Uint8Array(0));
    expect([...sent[1]!.payload!]).toEqual([RMA_STATUS.ERROR]);
  });

  it('holds a dynamic window\'s frames, in order, until the attach counted in shared memory has reached it', () => {
    const sent: Uint8Array[] = [];
    const target = new RmaTarget(port((_h, p) => sent.push(p!.slice())));
    const control = new Int32Array(new SharedArrayBuffer(4 * RMA_CONTROL.WORDS));
    target.register({ contextId: CTX, endpoint: 0, serial: 1, memory: new Uint8Array(0), control, regions: new Map() });
    const region = new Uint8Array(new SharedArrayBuffer(8));
    Atomics.add(control, RMA_CONTROL.SEQ, 1); // the creating thread counted an attach the engine has not applied
    target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, RMA_REGION_SPAN + 2), new Uint8Array([5]));
    target.arrive(1, frame(RMA_CODE.GET, 0, 0, 1), payload(RMA_REGION_SPAN + 2));
    expect(sent).toHaveLength(0);
    target.attach(CTX, 0, 1, region, 1);
    expect(region[2]).toBe(5);
    expect(sent.map((p) => [...p])).toEqual([[5]]);
  });

  it('counts none of a dynamic record\'s attaches as applied when it is registered, even when SEQ already counts one (a thread that took the record late)', () => {
    const sent: Uint8Array[] = [];
    const target = new RmaTarget(port((_h, p) => sent.push(p!.slice())));
    const control = new Int32Array(new SharedArrayBuffer(4 * RMA_CONTROL.WORDS));
    Atomics.add(control, RMA_CONTROL.SEQ, 1); // the target attached before this thread took its record
    target.register({ contextId: CTX, endpoint: 0, serial: 1, memory: new Uint8Array(0), control, regions: new Map() });
    target.arrive(1, frame(RMA_CODE.GET, 0, 0, 1), payload(RMA_REGION_SPAN + 2));
    expect(sent).toHaveLength(0);
    target.attach(CTX, 0, 1, new Uint8Array(new SharedArrayBuffer(8)).fill(6), 1);
    expect(sent.map((p) => [...p])).toEqual([[6]]);
    // A truly unattached address is still refused (no bytes: ERR_RMA_RANGE at the origin).
    target.arrive(1, frame(RMA_CODE.GET, 0, 0, 1), payload(2 * RMA_REGION_SPAN));
    expect(sent.map((p) => [...p])).toEqual([[6], []]);
  });

  it('lets the transport read a PUT straight into the window (payloadTarget), but not a batch\'s, a dynamic window\'s or one out of range', () => {
    const { target, win } = setup(64);
    const h = dataFrame(RMA_CODE.PUT, 0, 0, 8);
    h.payloadLength = 16;
    const into = target.payloadTarget(h)!;
    expect([into.buffer === win.memory.buffer, into.byteOffset, into.length]).toEqual([true, 8, 16]);
    into.set(new Uint8Array(16).fill(3));
    target.arrive(1, h, into); // in place already: nothing to copy, nothing answered
    expect([...win.memory.subarray(6, 26)]).toEqual([0, 0, ...new Array(16).fill(3), 0, 0]);
    const batch = dataFrame(RMA_CODE.PUT, 0, 0, 8, RMA_BATCH);
    batch.payloadLength = 16;
    const past = dataFrame(RMA_CODE.PUT, 0, 0, 56);
    past.payloadLength = 16;
    expect([target.payloadTarget(batch), target.payloadTarget(past), target.payloadTarget(frame(RMA_CODE.GET, 0, 0, 16))]).toEqual([null, null, null]);
  });

  it('applies a batch (LOCK, PUT, UNLOCK marked RMA_BATCH) only under its lock: a refused batch is dropped and its UNLOCK answers BUSY', () => {
    const { target, win, sent } = setup();
    const batch = (value: number): number => {
      target.arrive(1, frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 0), new Uint8Array(0));
      const lock = sent.length;
      target.arrive(1, (() => { const h = frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 0); h.aux |= RMA_BATCH; return h; })(), new Uint8Array(0));
      target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, 0, RMA_BATCH), new Uint8Array([value]));
      const unlock = frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 31);
      unlock.aux |= RMA_BATCH;
      expect(sent.length).toBe(lock); // the batch's LOCK and PUT are not answered
      target.arrive(1, unlock, new Uint8Array(0));
      return sent.at(-1)!.payload![0]!;
    };
    // Another origin (the plain LOCK first in batch()) holds the lock: the batch is refused.
    expect(batch(5)).toBe(RMA_STATUS.BUSY);
    expect(win.memory[0]).toBe(0);
    expect(Atomics.load(win.control, RMA_CONTROL.LOCK)).toBe(-1);
    target.arrive(1, frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE), new Uint8Array(0));
    // Free: the plain LOCK in batch() takes it again, so release it between; a batch alone is granted.
    target.arrive(1, (() => { const h = frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 0); h.aux |= RMA_BATCH; return h; })(), new Uint8Array(0));
    target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, 0, RMA_BATCH), new Uint8Array([6]));
    const unlock = frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 32);
    unlock.aux |= RMA_BATCH;
    target.arrive(1, unlock, new Uint8Array(0));
    expect([win.memory[0], sent.at(-1)!.payload![0], sent.at(-1)!.h.tag, Atomics.load(win.control, RMA_CONTROL.LOCK)]).toEqual([6, RMA_STATUS.OK, 32, 0]);
  });

  it('answers a batch that ends with FLUSH (a flush in a lazy epoch) like one that ends with UNLOCK, but keeps the lock held when granted', () => {
    const { target, win, sent } = setup();
    const batchLock = (): FrameHeader => { const h = frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 0); h.aux |= RMA_BATCH; return h; };
    const batchFlush = (tag: number): FrameHeader => { const h = frame(RMA_CODE.FLUSH, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, tag); h.aux |= RMA_BATCH; return h; };
    // Another origin holds the lock: the batch is dropped, its FLUSH answers BUSY, and the refusal is forgotten.
    target.arrive(1, frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 0), new Uint8Array(0));
    target.arrive(1, batchLock(), new Uint8Array(0));
    target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, 0, RMA_BATCH), new Uint8Array([5]));
    target.arrive(1, batchFlush(41), new Uint8Array(0));
    expect([win.memory[0], sent.at(-1)!.payload![0], sent.at(-1)!.h.tag]).toEqual([0, RMA_STATUS.BUSY, 41]);
    target.arrive(1, frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE), new Uint8Array(0));
    // Free: applied, answered OK, and the lock stays with the origin until its plain UNLOCK.
    target.arrive(1, batchLock(), new Uint8Array(0));
    target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, 0, RMA_BATCH), new Uint8Array([6]));
    target.arrive(1, batchFlush(42), new Uint8Array(0));
    expect([win.memory[0], sent.at(-1)!.payload![0], sent.at(-1)!.h.tag, Atomics.load(win.control, RMA_CONTROL.LOCK)]).toEqual([6, RMA_STATUS.OK, 42, -1]);
    target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, 1, 0), new Uint8Array([7]));
    target.arrive(1, frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 43), new Uint8Array(0));
    expect([win.memory[1], sent.at(-1)!.payload![0], Atomics.load(win.control, RMA_CONTROL.LOCK)]).toEqual([7, RMA_STATUS.OK, 0]);
  });

  it('answers a batch\'s GET with its bytes when the batch is granted, and with no bytes when it is refused', () => {
    const { target, win, sent } = setup();
    win.memory.set([1, 2, 3, 4], 8);
    const batch = (tag: number): { get: Uint8Array; status: number } => {
      const lock = frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 0);
      lock.aux |= RMA_BATCH;
      target.arrive(1, lock, new Uint8Array(0));
      const get = frame(RMA_CODE.GET, 0, 0, 4, tag);
      get.aux |= RMA_BATCH;
      target.arrive(1, get, payload(8));
      const unlock = frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, tag + 1);
      unlock.aux |= RMA_BATCH;
      target.arrive(1, unlock, new Uint8Array(0));
      const [g, u] = sent.slice(-2);
      expect([g!.h.tag, u!.h.tag]).toEqual([tag, tag + 1]);
      return { get: g!.payload!, status: u!.payload![0]! };
    };
    target.arrive(1, frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 0), new Uint8Array(0));
    expect(batch(50)).toEqual({ get: new Uint8Array(0), status: RMA_STATUS.BUSY });
    target.arrive(1, frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE), new Uint8Array(0));
    expect(batch(60)).toEqual({ get: new Uint8Array([1, 2, 3, 4]), status: RMA_STATUS.OK });
    expect(Atomics.load(win.control, RMA_CONTROL.LOCK)).toBe(0);
  });

  it('applies a one-frame epoch (RMA_EPOCH: lock, PUT or ACC, unlock) only when its lock is free, answers OK or BUSY on its tag, and leaves the lock as it found it', () => {
    const { target, win, sent } = setup();
    const epoch = (code: number, elem: number, op: number, type: number, disp: number, data: ArrayBufferView, tag: number): number => {
      const h = frame(code, elem, op, type, tag);
      h.aux |= RMA_EPOCH;
      target.arrive(1, h, payload(disp, data));
      expect(sent.at(-1)!.h.tag).toBe(tag);
      return sent.at(-1)!.payload![0]!;
    };
    expect(epoch(RMA_CODE.PUT, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 8, new Uint8Array([1, 2, 3]), 20)).toBe(RMA_STATUS.OK);
    expect([...win.memory.subarray(8, 11), Atomics.load(win.control, RMA_CONTROL.LOCK)]).toEqual([1, 2, 3, 0]);
    // Another origin holds the exclusive lock: refused, nothing applied, its lock untouched.
    target.arrive(1, frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE), new Uint8Array(0));
    expect(epoch(RMA_CODE.PUT, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 8, new Uint8Array([9]), 21)).toBe(RMA_STATUS.BUSY);
    expect(epoch(RMA_CODE.PUT, 0, 0, RMA_LOCK_TYPE.SHARED, 8, new Uint8Array([9]), 22)).toBe(RMA_STATUS.BUSY);
    expect([win.memory[8], Atomics.load(win.control, RMA_CONTROL.LOCK)]).toEqual([1, -1]);
    target.arrive(1, frame(RMA_CODE.UNLOCK, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE), new Uint8Array(0));
    // Shared holders admit a shared epoch (an accumulate, applied as one) and refuse an exclusive one.
    target.arrive(1, frame(RMA_CODE.LOCK, 0, 0, RMA_LOCK_TYPE.SHARED), new Uint8Array(0));
    const words = new Int32Array(win.memory.buffer, 16, 1);
    expect(epoch(RMA_CODE.ACC, ELEM.INT32, ACC_OP.SUM, RMA_LOCK_TYPE.SHARED, 16, new Int32Array([5]), 23)).toBe(RMA_STATUS.OK);
    expect(epoch(RMA_CODE.ACC, ELEM.INT32, ACC_OP.SUM, RMA_LOCK_TYPE.SHARED, 16, new Int32Array([6]), 24)).toBe(RMA_STATUS.OK);
    expect(epoch(RMA_CODE.PUT, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 16, new Int32Array([0]), 25)).toBe(RMA_STATUS.BUSY);
    expect([words[0], Atomics.load(win.control, RMA_CONTROL.LOCK)]).toEqual([11, 1]);
    // An unknown window answers ERROR (the origin's unlock throws ERR_WIN).
    const h = frame(RMA_CODE.PUT, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 26);
    h.aux |= RMA_EPOCH;
    h.contextId = CTX + 1;
    target.arrive(1, h, payload(0, new Uint8Array([1])));
    expect([sent.at(-1)!.h.tag, sent.at(-1)!.payload![0]]).toEqual([26, RMA_STATUS.ERROR]);
    // Never read straight into the window by the transport: its lock may be refused.
    const big = frame(RMA_CODE.PUT, 0, 0, RMA_LOCK_TYPE.EXCLUSIVE, 27);
    big.aux |= RMA_EPOCH;
    big.payloadLength = 16;
    expect(target.payloadTarget(big)).toBeNull();
  });

  it('holds an operation of an origin on this thread (applyLocal) in the same queue, until the attach has reached it', () => {
    const sent: Uint8Array[] = [];
    const target = new RmaTarget(port((_h, p) => sent.push(p!.slice())));
    const control = new Int32Array(new SharedArrayBuffer(4 * RMA_CONTROL.WORDS));
    const win: RmaWindowRecord = { contextId: CTX, endpoint: 0, serial: 1, memory: new Uint8Array(0), control, regions: new Map() };
    target.register(win);
    // A held operation keeps the directory's channel ref'd until it is answered (its release comes on it).
    const refs = { held: 0, released: 0 };
    target.directory = { hold: () => (refs.held++, () => void refs.released++) } as unknown as WindowDirectory;
    const answers: (number[] | null)[] = [];
    const keep = (a: Uint8Array | null): void => void answers.push(a === null ? null : [...a]);
    // Known regions apply at once.
    target.applyLocal(win, RMA_CODE.FLUSH, 0, 0, 0, 0, new Uint8Array(0), keep);
    expect(answers).toEqual([[RMA_STATUS.OK]]);
    const region = new Uint8Array(new SharedArrayBuffer(8));
    Atomics.add(control, RMA_CONTROL.SEQ, 1); // the target's thread counted an attach this thread has not applied
    target.arrive(1, dataFrame(RMA_CODE.PUT, 0, 0, RMA_REGION_SPAN + 2), new Uint8Array([5]));
    target.applyLocal(win, RMA_CODE.GET, 0, 0, 1, RMA_REGION_SPAN + 2, new Uint8Array(0), keep);
    target.applyLocal(win, RMA_CODE.PUT, 0, 0, 0, RMA_REGION_SPAN + 2, new Uint8Array([7]), keep);
    expect(answers).toHaveLength(1);
    expect(refs).toEqual({ held: 2, released: 0 });
    target.attach(CTX, 0, 1, region, 1);
    expect(refs).toEqual({ held: 2, released: 2 });
    // In order: the remote Put, the local Get sees it, then the local Put.
    expect(answers).toEqual([[RMA_STATUS.OK], [5], null]);
    expect(region[2]).toBe(7);
    expect(sent).toHaveLength(0);
  });
});
