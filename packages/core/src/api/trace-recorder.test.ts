// TraceRecorder's post wrappers (Isend/Irecv shapes) and Request.* wrappers, driven with a stand-in
// communicator and method: the arguments the method sees, the CALL and MSG rows written, a throwing
// call, nesting, and the receives a waitall or wait completes.
import { describe, expect, it } from 'vitest';
import { TRACE_CALL, TRACE_MSG, type TraceThread } from '../pmi/index.ts';
import { type DevRequest, REQ_KIND } from '../device/index.ts';
import type { Method } from './profile.ts';
import { Request, type RequestComm } from './request.ts';
import { TraceRecorder } from './trace-recorder.ts';

/** What the recorder reads of a communicator: context 5 (sends on 6), ranks 0..2 at endpoints 10..12. */
const comm = { name: 'WORLD', rank: 0, _ctx: 5, _sendCtx: 6, _endpoints: Int32Array.of(10, 11, 12), _peers: Int32Array.of(10, 11, 12) };

function recorder(): { rec: TraceRecorder; orders: number[] } {
  let next = 100;
  const orders: number[] = [];
  const rec = new TraceRecorder(1000, (n) => { orders.push(next); next += n; return next - n; });
  return { rec, orders };
}

function callRow(t: TraceThread, i: number): { name: string; comm: number; peer: number; tag: number; bytes: number; dur: number } {
  const o = i * TRACE_CALL.WORDS;
  const c = t.calls;
  return { name: t.names[c[o + TRACE_CALL.NAME]!]!, comm: c[o + TRACE_CALL.COMM]!, peer: c[o + TRACE_CALL.PEER]!, tag: c[o + TRACE_CALL.TAG]!, bytes: c[o + TRACE_CALL.BYTES]!, dur: c[o + TRACE_CALL.DURATION_MS]! };
}

describe('TraceRecorder post wrappers', () => {
  it('forwards the arguments as given (a missing one undefined) and writes the send\'s CALL and MSG rows', () => {
    const { rec } = recorder();
    const seen: unknown[][] = [];
    const sent = { kind: 'request' };
    const isend = rec.wrap('Comm.Isend', function (this: unknown, ...a: unknown[]) { seen.push([this, ...a]); return sent; } as Method);
    const buf = new Uint8Array(24);
    expect(isend.call(comm, buf, 2, 7)).toBe(sent);
    expect(isend.call(comm, buf, 1)).toBe(sent);
    expect(seen).toEqual([[comm, buf, 2, 7], [comm, buf, 1, undefined]]);
    const t = rec.dump(0);
    expect(callRow(t, 0)).toMatchObject({ name: 'Comm.Isend', comm: 5, peer: 2, tag: 7, bytes: 24 });
    expect(callRow(t, 0).dur).toBeGreaterThanOrEqual(0);
    // The omitted tag is the method's default, 0.
    expect(callRow(t, 1)).toMatchObject({ peer: 1, tag: 0, bytes: 24 });
    expect(t.msgs.length).toBe(2 * TRACE_MSG.WORDS);
    const m = t.msgs;
    // Sent on the send context to rank 2's endpoint (own endpoint -1: no MPI runtime here), as post number 100.
    expect([m[TRACE_MSG.CALL], m[TRACE_MSG.IS_RECV], m[TRACE_MSG.CTX], m[TRACE_MSG.DST], m[TRACE_MSG.TAG], m[TRACE_MSG.ORDER]]).toEqual([0, 0, 6, 12, 7, 100]);
    expect(m[TRACE_MSG.WORDS + TRACE_MSG.ORDER]).toBe(101);
  });

  it('records an irecv without source or tag as ANY (-1), unknown bytes, and a lower-case send\'s size as unknown', () => {
    const { rec } = recorder();
    const irecv = rec.wrap('Comm.irecv', (() => ({ kind: 'request' })) as Method);
    const isend = rec.wrap('Comm.isend', (() => ({ kind: 'request' })) as Method);
    irecv.call(comm);
    isend.call(comm, { any: 'value' }, 0, 3);
    const t = rec.dump(0);
    expect(callRow(t, 0)).toMatchObject({ name: 'Comm.irecv', peer: -1, tag: -1, bytes: -1 });
    expect(callRow(t, 1)).toMatchObject({ name: 'Comm.isend', peer: 0, tag: 3, bytes: -1 });
    // The receive's MSG row waits for the call that completes it: only the send's is written.
    expect(t.msgs.length).toBe(TRACE_MSG.WORDS);
  });

  it('reads an Irecv\'s source and tag from its second and third arguments, and records a blocking Send when its promise settles', async () => {
    const { rec, orders } = recorder();
    const Irecv = rec.wrap('Comm.Irecv', (() => ({ kind: 'request' })) as Method);
    let settle!: () => void;
    const Send = rec.wrap('Comm.Send', (() => new Promise<void>((resolve) => { settle = resolve; })) as Method);
    Irecv.call(comm, new Uint8Array(8), 2, 9);
    const sent = Send.call(comm, new Uint8Array(16), 1, 4) as Promise<void>;
    // Not recorded before it settles: its slice ends then.
    expect(rec.dump(0).calls.length).toBe(TRACE_CALL.WORDS);
    settle();
    await sent;
    const t = rec.dump(0);
    expect(callRow(t, 0)).toMatchObject({ name: 'Comm.Irecv', comm: 5, peer: 2, tag: 9, bytes: -1 });
    expect(callRow(t, 1)).toMatchObject({ name: 'Comm.Send', comm: 5, peer: 1, tag: 4, bytes: 16 });
    // Only the send's message (the receive's waits for the call that completes it), as post number 101.
    expect(t.msgs.length).toBe(TRACE_MSG.WORDS);
    expect([t.msgs[TRACE_MSG.CALL], t.msgs[TRACE_MSG.DST], t.msgs[TRACE_MSG.TAG], t.msgs[TRACE_MSG.ORDER]]).toEqual([1, 11, 4, 101]);
    expect(orders).toEqual([100, 101]);
  });

  it('writes no message for a send to PROC_NULL, and a row without communicator for a call that throws', () => {
    const { rec } = recorder();
    const isend = rec.wrap('Comm.Isend', function (this: unknown, _b: unknown, dest: unknown) {
      if (dest === 9) throw new RangeError('dest 9');
      return { kind: 'request' };
    } as Method);
    isend.call(comm, new Uint8Array(1), -2, 0);
    expect(() => isend.call(comm, new Uint8Array(1), 9, 0)).toThrow('dest 9');
    // The wrapper is usable again after the throw (its nesting count went back to 0).
    isend.call(comm, new Uint8Array(1), 1, 0);
    const t = rec.dump(0);
    expect(t.calls.length).toBe(3 * TRACE_CALL.WORDS);
    expect(callRow(t, 0)).toMatchObject({ peer: -2, comm: 5 });
    expect(callRow(t, 1)).toMatchObject({ name: 'Comm.Isend', comm: -1, peer: -1, tag: -1, bytes: -1 });
    expect(callRow(t, 2)).toMatchObject({ peer: 1, comm: 5 });
    // One message: the send to rank 1 (the row of PROC_NULL's send has none, the failed one neither).
    expect(t.msgs.length).toBe(TRACE_MSG.WORDS);
    expect(t.msgs[TRACE_MSG.CALL]).toBe(2);
  });

  it('records only the outermost call when a traced call makes another one', () => {
    const { rec, orders } = recorder();
    const inner = rec.wrap('Comm.Isend', (() => ({ kind: 'request' })) as Method);
    const outer = rec.wrap('Comm.Issend', function (this: unknown, b: unknown, d: unknown, g: unknown) { return inner.call(this, b, d, g); } as Method);
    outer.call(comm, new Uint8Array(4), 1, 2);
    const t = rec.dump(0);
    expect(t.calls.length).toBe(TRACE_CALL.WORDS);
    expect(callRow(t, 0).name).toBe('Comm.Issend');
    expect(orders).toEqual([100]);
  });
});

/** A receive request as the device leaves it: from endpoint 11 (rank 1), tag 9, 8 bytes; reported complete when `done`. */
function recvRequest(done: boolean): Request<unknown> {
  const dev = { kind: REQ_KIND.RECV, done, sourceEndpoint: done ? 11 : -1, tag: 9, count: 8, cancelled: false } as unknown as DevRequest;
  const r = new Request<unknown>(dev, { ...comm, _rankOfEndpoint: (e: number) => e - 10 } as unknown as RequestComm, 'Comm.Irecv');
  r._reported = done;
  return r;
}

describe('TraceRecorder Request.* wrappers', () => {
  it('forwards a waitall\'s list, writes its row when its promise settles, and a MSG row for each receive it completed', async () => {
    const { rec } = recorder();
    const done = recvRequest(true);
    const open = recvRequest(false);
    const sendReq = new Request<void>({ kind: REQ_KIND.SEND, done: true } as unknown as DevRequest, null, 'Comm.Isend');
    sendReq._reported = true;
    const posted = [done, open];
    const Irecv = rec.wrap('Comm.Irecv', (() => posted.shift()) as Method);
    Irecv.call(comm, new Uint8Array(8), 1, 9);
    Irecv.call(comm, new Uint8Array(8), 1, 9);
    const seen: unknown[] = [];
    let settle!: () => void;
    const waitall = rec.wrap('Request.waitall', function (this: unknown, list: unknown) { seen.push(this, list); return new Promise<void>((resolve) => { settle = resolve; }); } as Method);
    const list = [sendReq, done, open];
    const out = waitall.call(Request, list) as Promise<void>;
    expect(seen).toEqual([Request, list]);
    // Not recorded before it settles.
    expect(rec.dump(0).calls.length).toBe(2 * TRACE_CALL.WORDS);
    settle();
    await out;
    const t = rec.dump(0);
    expect(callRow(t, 2)).toMatchObject({ name: 'Request.waitall', comm: -1, peer: -1, tag: -1, bytes: -1 });
    // One receive complete (the first irecv, post number 100): its row; the send and the open receive have none.
    expect(t.msgs.length).toBe(TRACE_MSG.WORDS);
    const m = t.msgs;
    expect([m[TRACE_MSG.CALL], m[TRACE_MSG.IS_RECV], m[TRACE_MSG.CTX], m[TRACE_MSG.SRC], m[TRACE_MSG.TAG], m[TRACE_MSG.ORDER]]).toEqual([2, 1, 5, 11, 9, 100]);
  });

  it('describes a wait on one receive in its row, and writes the row of a Request call that throws or rejects', async () => {
    const { rec } = recorder();
    const r = recvRequest(true);
    const irecv = rec.wrap('Comm.irecv', (() => r) as Method);
    irecv.call(comm, 1, 9);
    const wait = rec.wrap('Request.wait', (async () => undefined) as Method);
    await wait.call(r);
    const test = rec.wrap('Request.test', (() => { throw new RangeError('test failed'); }) as Method);
    expect(() => test.call(r)).toThrow('test failed');
    const waitany = rec.wrap('Request.waitany', (() => Promise.reject(new RangeError('rejected'))) as Method);
    await expect(waitany.call(Request, [r])).rejects.toThrow('rejected');
    const t = rec.dump(0);
    expect(t.calls.length).toBe(4 * TRACE_CALL.WORDS);
    // wait's row names its message: rank 1, tag 9, 8 bytes, on the irecv's communicator.
    expect(callRow(t, 1)).toMatchObject({ name: 'Request.wait', comm: 5, peer: 1, tag: 9, bytes: 8 });
    expect(callRow(t, 2)).toMatchObject({ name: 'Request.test', comm: -1 });
    expect(callRow(t, 3)).toMatchObject({ name: 'Request.waitany', comm: -1 });
    expect(t.msgs.length).toBe(TRACE_MSG.WORDS);
    expect(t.msgs[TRACE_MSG.CALL]).toBe(1);
  });
});
