// Every buffer collective in its three forms (issue 36; API.md "All collectives, in every form"):
// blocking, I... and ...Init, each checked against a sequential computation. Behaviour of MPICH's
// test/mpi/coll suites, re-implemented from their descriptions: persistent collectives started
// and waited several times with new buffer contents between starts (p_*), all nonblocking
// collectives in flight at once (nonblocking, nonblocking3), several persistent requests started
// together, reduce-scatter with uneven counts and zeros, commutative or not (redscat, redscat2,
// red_scat_block), alltoallw with a datatype per block and zero blocks (alltoallw1, alltoallw2,
// alltoallw_zeros), MPI_Reduce_local with predefined and user ops (reduce_local); then the
// argument errors. Runs on COMM_WORLD (any size), a split of it and COMM_SELF.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { affineOf, affineOp, affineSeq } from './affine-op.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const myRank = world.rank;
const baseline = MPI.stats().liveObjects;
const { PAIR, affine } = affineOp();

/** Rank r's value at index i in iteration it: small integers, so sums are exact. */
const v = (r: number, i: number, it: number): number => (r * 7 + i * 3 + it * 5 + 1) % 11;
const list = (a: ArrayLike<number>): number[] => Array.from(a);
const sumOver = (ranks: number, i: number, it: number, from = 0): number => {
  let s = 0;
  for (let r = from; r < ranks; r++) s += v(r, i, it);
  return s;
};
const prefix = (counts: number[], i: number): number => counts.slice(0, i).reduce((a, b) => a + b, 0);

/** One collective with its buffers: each form fills the inputs for an iteration, runs, and checks. */
interface Case {
  readonly name: string;
  prepare(it: number): void;
  check(it: number, what: string): void;
  blocking(): Promise<void>;
  nonblocking(): MPI.Request<void>;
  init(): MPI.Request<void>;
}

const ITERS = 3;

/** Runs `c` blocking, nonblocking and persistent (one request, ITERS starts with new contents each). */
async function allForms(c: Case): Promise<void> {
  for (let it = 0; it < ITERS; it++) {
    c.prepare(it);
    await c.blocking();
    c.check(it, `${c.name} blocking iteration ${it}`);
    c.prepare(it + 10);
    await c.nonblocking().wait();
    c.check(it + 10, `${c.name} nonblocking iteration ${it}`);
  }
  const req = c.init();
  check(req.status === null, `${c.name}Init: not started, no status`);
  for (let it = 0; it < ITERS; it++) {
    c.prepare(it + 20);
    req.start();
    await req.wait();
    c.check(it + 20, `${c.name} persistent start ${it}`);
  }
  req.free();
}

/** The cases of one communicator, each owning its buffers (so they can all be in flight at once). */
function cases(comm: MPI.Comm, n: number): Case[] {
  const { rank, size } = comm;
  const root = size - 1;
  const out: Case[] = [];
  const fill = (a: Int32Array, f: (i: number) => number): void => { for (let i = 0; i < a.length; i++) a[i] = f(i); };

  {
    const buf = new Int32Array(n);
    out.push({
      name: 'Bcast', prepare: (it) => fill(buf, (i) => (rank === root ? v(root, i, it) : -1)),
      check: (it, w) => check(buf.every((x, i) => x === v(root, i, it)), w),
      blocking: () => comm.Bcast(buf, root), nonblocking: () => comm.Ibcast(buf, root), init: () => comm.BcastInit(buf, root),
    });
  }
  {
    const send = new Int32Array(n);
    const recv = new Int32Array(n);
    out.push({
      name: 'Reduce', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => { if (rank === 0) check(recv.every((x, i) => x === sumOver(size, i, it)), w); },
      blocking: () => comm.Reduce(send, rank === 0 ? recv : null, MPI.SUM, 0),
      nonblocking: () => comm.Ireduce(send, rank === 0 ? recv : null, MPI.SUM, 0),
      init: () => comm.ReduceInit(send, rank === 0 ? recv : null, MPI.SUM, 0),
    });
  }
  for (const [label, len] of [['Allreduce', n], ['Allreduce 8 bytes', 2]] as const) {
    const send = new Int32Array(len);
    const recv = new Int32Array(len);
    out.push({
      name: label, prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => check(recv.every((x, i) => x === sumOver(size, i, it)), w),
      blocking: () => comm.Allreduce(send, recv, MPI.SUM), nonblocking: () => comm.Iallreduce(send, recv, MPI.SUM),
      init: () => comm.AllreduceInit(send, recv, MPI.SUM),
    });
  }
  {
    const io = new Int32Array(n);
    out.push({
      name: 'Allreduce IN_PLACE', prepare: (it) => fill(io, (i) => v(rank, i, it)),
      check: (it, w) => check(io.every((x, i) => x === sumOver(size, i, it)), w),
      blocking: () => comm.Allreduce(MPI.IN_PLACE, io, MPI.SUM), nonblocking: () => comm.Iallreduce(MPI.IN_PLACE, io, MPI.SUM),
      init: () => comm.AllreduceInit(MPI.IN_PLACE, io, MPI.SUM),
    });
  }
  {
    // A non-commutative user op: the result must be the rank-ordered product.
    const k = 3;
    const send = new Float64Array(2 * k);
    const recv = new Float64Array(2 * k);
    out.push({
      name: 'Scan (non-commutative)', prepare: () => { for (let i = 0; i < k; i++) send.set(affineOf(rank, i), 2 * i); recv.fill(-1); },
      check: (_it, w) => equal(list(recv), Array.from({ length: k }, (_, i) => affineSeq(0, rank + 1, i)).flat(), w),
      blocking: () => comm.Scan([send, PAIR], [recv, PAIR], affine), nonblocking: () => comm.Iscan([send, PAIR], [recv, PAIR], affine),
      init: () => comm.ScanInit([send, PAIR], [recv, PAIR], affine),
    });
  }
  {
    const send = new Int32Array(n);
    const recv = new Int32Array(n);
    out.push({
      name: 'Exscan', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => check(recv.every((x, i) => x === (rank === 0 ? -1 : sumOver(rank, i, it))), w),
      blocking: () => comm.Exscan(send, recv, MPI.SUM), nonblocking: () => comm.Iexscan(send, recv, MPI.SUM),
      init: () => comm.ExscanInit(send, recv, MPI.SUM),
    });
  }
  {
    // Uneven counts with zeros (redscat): rank i's block has counts[i] items.
    const counts = Array.from({ length: size }, (_, i) => (i % 3 === 1 ? 0 : i + (n > 100 ? n : 1)));
    const total = prefix(counts, size);
    const send = new Int32Array(total);
    const recv = new Int32Array(counts[rank]! + 1);
    out.push({
      name: 'ReduceScatter', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => {
        const at = prefix(counts, rank);
        check(recv.subarray(0, counts[rank]!).every((x, i) => x === sumOver(size, at + i, it)), w);
        check(recv[counts[rank]!] === -1, `${w}: the item after the block is left as it was`);
      },
      blocking: () => comm.ReduceScatter(send, recv, counts, MPI.SUM), nonblocking: () => comm.IreduceScatter(send, recv, counts, MPI.SUM),
      init: () => comm.ReduceScatterInit(send, recv, counts, MPI.SUM),
    });
  }
  {
    // Non-commutative ReduceScatter (redscat2), IN_PLACE: recvbuf holds every block.
    const counts = Array.from({ length: size }, (_, i) => (i % 2) + 1);
    const total = prefix(counts, size);
    const io = new Float64Array(2 * total);
    out.push({
      name: 'ReduceScatter IN_PLACE (non-commutative)', prepare: () => { for (let i = 0; i < total; i++) io.set(affineOf(rank, i), 2 * i); },
      check: (_it, w) => {
        const at = prefix(counts, rank);
        equal(list(io.subarray(0, 2 * counts[rank]!)), Array.from({ length: counts[rank]! }, (_, i) => affineSeq(0, size, at + i)).flat(), w);
      },
      blocking: () => comm.ReduceScatter(MPI.IN_PLACE, [io, PAIR], counts, affine),
      nonblocking: () => comm.IreduceScatter(MPI.IN_PLACE, [io, PAIR], counts, affine),
      init: () => comm.ReduceScatterInit(MPI.IN_PLACE, [io, PAIR], counts, affine),
    });
  }
  {
    const send = new Int32Array(size * n);
    const recv = new Int32Array(n);
    out.push({
      name: 'ReduceScatterBlock', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => check(recv.every((x, i) => x === sumOver(size, rank * n + i, it)), w),
      blocking: () => comm.ReduceScatterBlock(send, recv, MPI.SUM), nonblocking: () => comm.IreduceScatterBlock(send, recv, MPI.SUM),
      init: () => comm.ReduceScatterBlockInit(send, recv, MPI.SUM),
    });
  }
  {
    const send = new Int32Array(n);
    const recv = new Int32Array(size * n);
    out.push({
      name: 'Gather', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => { if (rank === root) check(recv.every((x, j) => x === v(Math.floor(j / n), j % n, it)), w); },
      blocking: () => comm.Gather(send, rank === root ? recv : null, root), nonblocking: () => comm.Igather(send, rank === root ? recv : null, root),
      init: () => comm.GatherInit(send, rank === root ? recv : null, root),
    });
  }
  // The v-forms: rank i's block has i + 1 items, placed in reverse rank order with a gap of one.
  const vCounts = Array.from({ length: size }, (_, i) => i + 1);
  const vDispls = Array.from({ length: size }, (_, i) => prefix(vCounts.map((c) => c + 1), size) - prefix(vCounts.map((c) => c + 1), i + 1));
  const vLen = prefix(vCounts, size) + size;
  const vOk = (buf: Int32Array, it: number): boolean =>
    vCounts.every((c, r) => Array.from({ length: c }, (_, i) => buf[vDispls[r]! + i] === v(r, i, it)).every(Boolean));
  {
    const send = new Int32Array(rank + 1);
    const recv = new Int32Array(vLen);
    const spec: [Int32Array, number[], number[]] = [recv, vCounts, vDispls];
    out.push({
      name: 'Gatherv', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => { if (rank === 0) check(vOk(recv, it), w); },
      blocking: () => comm.Gatherv(send, rank === 0 ? spec : null, 0), nonblocking: () => comm.Igatherv(send, rank === 0 ? spec : null, 0),
      init: () => comm.GathervInit(send, rank === 0 ? spec : null, 0),
    });
  }
  {
    const send = new Int32Array(size * n);
    const recv = new Int32Array(n);
    out.push({
      name: 'Scatter', prepare: (it) => { fill(send, (j) => (rank === root ? v(Math.floor(j / n), j % n, it) : -2)); recv.fill(-1); },
      check: (it, w) => check(recv.every((x, i) => x === v(rank, i, it)), w),
      blocking: () => comm.Scatter(rank === root ? send : null, recv, root), nonblocking: () => comm.Iscatter(rank === root ? send : null, recv, root),
      init: () => comm.ScatterInit(rank === root ? send : null, recv, root),
    });
  }
  {
    const send = new Int32Array(vLen);
    const recv = new Int32Array(rank + 1);
    const spec: [Int32Array, number[], number[]] = [send, vCounts, vDispls];
    out.push({
      name: 'Scatterv',
      prepare: (it) => { send.fill(-2); vCounts.forEach((c, r) => { for (let i = 0; i < c; i++) send[vDispls[r]! + i] = v(r, i, it); }); recv.fill(-1); },
      check: (it, w) => check(recv.every((x, i) => x === v(rank, i, it)), w),
      blocking: () => comm.Scatterv(rank === 0 ? spec : null, recv, 0), nonblocking: () => comm.Iscatterv(rank === 0 ? spec : null, recv, 0),
      init: () => comm.ScattervInit(rank === 0 ? spec : null, recv, 0),
    });
  }
  {
    const send = new Int32Array(n);
    const recv = new Int32Array(size * n);
    out.push({
      name: 'Allgather', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => check(recv.every((x, j) => x === v(Math.floor(j / n), j % n, it)), w),
      blocking: () => comm.Allgather(send, recv), nonblocking: () => comm.Iallgather(send, recv), init: () => comm.AllgatherInit(send, recv),
    });
  }
  {
    const send = new Int32Array(rank + 1);
    const recv = new Int32Array(vLen);
    const spec: [Int32Array, number[], number[]] = [recv, vCounts, vDispls];
    out.push({
      name: 'Allgatherv', prepare: (it) => { fill(send, (i) => v(rank, i, it)); recv.fill(-1); },
      check: (it, w) => check(vOk(recv, it), w),
      blocking: () => comm.Allgatherv(send, spec), nonblocking: () => comm.Iallgatherv(send, spec), init: () => comm.AllgathervInit(send, spec),
    });
  }
  // Alltoall family: the item rank s sends to rank d at index i is a(s, d, i).
  const a = (s: number, d: number, i: number, it: number): number => v(s, i, it) * 100 + d;
  {
    const send = new Int32Array(size * n);
    const recv = new Int32Array(size * n);
    out.push({
      name: 'Alltoall', prepare: (it) => { fill(send, (j) => a(rank, Math.floor(j / n), j % n, it)); recv.fill(-1); },
      check: (it, w) => check(recv.every((x, j) => x === a(Math.floor(j / n), rank, j % n, it)), w),
      blocking: () => comm.Alltoall(send, recv), nonblocking: () => comm.Ialltoall(send, recv), init: () => comm.AlltoallInit(send, recv),
    });
  }
  {
    // Rank s sends (s + d) % 3 items to rank d (zeros included).
    const cnt = (s: number, d: number): number => (s + d) % 3;
    const sc = Array.from({ length: size }, (_, d) => cnt(rank, d));
    const rc = Array.from({ length: size }, (_, s) => cnt(s, rank));
    const sd = sc.map((_, d) => prefix(sc, d));
    const rd = rc.map((_, s) => prefix(rc, s) + s);
    const send = new Int32Array(prefix(sc, size));
    const recv = new Int32Array(prefix(rc, size) + size);
    out.push({
      name: 'Alltoallv',
      prepare: (it) => { sc.forEach((c, d) => { for (let i = 0; i < c; i++) send[sd[d]! + i] = a(rank, d, i, it); }); recv.fill(-1); },
      check: (it, w) => check(rc.every((c, s) => Array.from({ length: c }, (_, i) => recv[rd[s]! + i] === a(s, rank, i, it)).every(Boolean)), w),
      blocking: () => comm.Alltoallv([send, sc, sd], [recv, rc, rd]), nonblocking: () => comm.Ialltoallv([send, sc, sd], [recv, rc, rd]),
      init: () => comm.AlltoallvInit([send, sc, sd], [recv, rc, rd]),
    });
  }
  {
    // Alltoallw: to even ranks INT32 items, to odd ranks FLOAT64 items; rank s sends (s + d) % 3 items
    // (zeros included) at byte displacements with gaps of 8 bytes, so every block is typed and placed apart.
    const typeOf = (d: number): MPI.Datatype => (d % 2 === 0 ? MPI.INT32 : MPI.FLOAT64);
    const cnt = (s: number, d: number): number => (s + d) % 3;
    const layout = (counts: number[], types: (i: number) => MPI.Datatype): number[] => {
      const displs: number[] = [];
      let at = 0;
      counts.forEach((c, i) => { displs.push(at); at += c * types(i).size + 8; });
      return displs;
    };
    const sc = Array.from({ length: size }, (_, d) => cnt(rank, d));
    const rc = Array.from({ length: size }, (_, s) => cnt(s, rank));
    const stypes = Array.from({ length: size }, (_, d) => typeOf(d));
    const rtypes = Array.from({ length: size }, () => typeOf(rank));
    const sd = layout(sc, (d) => stypes[d]!);
    const rd = layout(rc, () => typeOf(rank));
    const sendBytes = new Uint8Array(sd[size - 1]! + sc[size - 1]! * 8 + 8);
    const recvBytes = new Uint8Array(rd[size - 1]! + rc[size - 1]! * 8 + 8);
    const sv = new DataView(sendBytes.buffer);
    const rv = new DataView(recvBytes.buffer);
    const put = (dv: DataView, at: number, t: MPI.Datatype, x: number): void => (t === MPI.INT32 ? dv.setInt32(at, x, true) : dv.setFloat64(at, x + 0.5, true));
    const get = (dv: DataView, at: number, t: MPI.Datatype): number => (t === MPI.INT32 ? dv.getInt32(at, true) : dv.getFloat64(at, true) - 0.5);
    out.push({
      name: 'Alltoallw',
      prepare: (it) => {
        sc.forEach((c, d) => { for (let i = 0; i < c; i++) put(sv, sd[d]! + i * stypes[d]!.size, stypes[d]!, a(rank, d, i, it)); });
        recvBytes.fill(0xee);
      },
      check: (it, w) => {
        const t = typeOf(rank);
        check(rc.every((c, s) => Array.from({ length: c }, (_, i) => get(rv, rd[s]! + i * t.size, t) === a(s, rank, i, it)).every(Boolean)), w);
        check(rd.every((d, s) => recvBytes[d + rc[s]! * t.size] === 0xee), `${w}: the gaps are left as they were`);
      },
      blocking: () => comm.Alltoallw([sendBytes, sc, sd, stypes], [recvBytes, rc, rd, rtypes]),
      nonblocking: () => comm.Ialltoallw([sendBytes, sc, sd, stypes], [recvBytes, rc, rd, rtypes]),
      init: () => comm.AlltoallwInit([sendBytes, sc, sd, stypes], [recvBytes, rc, rd, rtypes]),
    });
  }
  {
    // Alltoallw IN_PLACE: blocks of one INT32 per rank, sent from recvbuf.
    const io = new Int32Array(size);
    const ones = new Array<number>(size).fill(1);
    const displs = Array.from({ length: size }, (_, i) => 4 * i);
    const types = new Array<MPI.Datatype>(size).fill(MPI.INT32);
    out.push({
      name: 'Alltoallw IN_PLACE', prepare: (it) => fill(io, (d) => a(rank, d, 0, it)),
      check: (it, w) => check(io.every((x, s) => x === a(s, rank, 0, it)), w),
      blocking: () => comm.Alltoallw(MPI.IN_PLACE, [io, ones, displs, types]),
      nonblocking: () => comm.Ialltoallw(MPI.IN_PLACE, [io, ones, displs, types]),
      init: () => comm.AlltoallwInit(MPI.IN_PLACE, [io, ones, displs, types]),
    });
  }
  {
    // Barrier moves nothing: its forms must complete, every start again (MPICH p_barrier).
    out.push({
      name: 'Barrier', prepare: () => undefined, check: () => undefined,
      blocking: () => comm.barrier(), nonblocking: () => comm.Ibarrier(), init: () => comm.BarrierInit(),
    });
  }
  return out;
}

async function suite(comm: MPI.Comm, n: number): Promise<void> {
  const all = cases(comm, n);
  // Each collective alone, in each form.
  for (const c of all) await allForms(c);

  // Every nonblocking form in flight at once, started in the same order on every rank, completed in any order.
  all.forEach((c) => c.prepare(30));
  const reqs = all.map((c) => c.nonblocking());
  await MPI.Request.waitall(reqs.slice().reverse());
  all.forEach((c) => c.check(30, `${c.name} (every I-form in flight at once)`));

  // Every persistent form: made together, started together, several times; waited with waitall.
  const persistent = all.map((c) => c.init());
  for (let it = 40; it < 43; it++) {
    all.forEach((c) => c.prepare(it));
    persistent.forEach((r) => r.start());
    await MPI.Request.waitall(persistent);
    all.forEach((c) => c.check(it, `${c.name} (every persistent form started at once, round ${it - 40})`));
  }
  // A persistent request and point-to-point: the collective context never meets user traffic.
  const trap = comm.irecv<string>(MPI.ANY_SOURCE, MPI.ANY_TAG);
  all.forEach((c) => c.prepare(50));
  persistent.forEach((r) => r.start());
  await MPI.Request.waitall(persistent);
  all.forEach((c) => c.check(50, `${c.name} (persistent, beside a pending ANY_TAG receive)`));
  check(!trap.test(), 'no collective message matched the user receive');
  const sent = comm.isend('user message', comm.rank, 7);
  equal(await trap.wait(), 'user message', 'the user receive gets the user message');
  await sent.wait();
  persistent.forEach((r) => r.free());
}

async function reduceLocalSuite(): Promise<void> {
  const inb = Int32Array.of(1, 2, 3);
  const inout = Int32Array.of(10, 20, 30);
  MPI.reduceLocal(inb, inout, MPI.SUM);
  equal(list(inout), [11, 22, 33], 'reduceLocal SUM');
  MPI.reduceLocal(Int32Array.of(5, 50, 0), inout, MPI.MAX);
  equal(list(inout), [11, 50, 33], 'reduceLocal MAX');
  // Non-commutative user op: inoutbuf = inbuf op inoutbuf (the operand order of the standard).
  const x = Float64Array.from([...affineOf(0, 0), ...affineOf(0, 1)]);
  const y = Float64Array.from([...affineOf(1, 0), ...affineOf(1, 1)]);
  MPI.reduceLocal([x, PAIR], [y, PAIR], affine);
  equal(list(y), [...affineSeq(0, 2, 0), ...affineSeq(0, 2, 1)], 'reduceLocal non-commutative user op');
  // A strided layout: every other element of inout.
  const every2 = MPI.Datatype.vector(3, 1, 2, MPI.INT32).commit();
  const strided = Int32Array.of(1, -1, 2, -1, 3, -1);
  MPI.reduceLocal(Int32Array.of(10, 10, 10), [strided, 1, every2], MPI.PROD);
  equal(list(strided), [10, -1, 20, -1, 30, -1], 'reduceLocal into a strided layout');
  every2.free();
  MPI.reduceLocal(new Int32Array(0), new Int32Array(0), MPI.SUM);
  await throwsMPI(() => MPI.reduceLocal(Int32Array.of(1), Int32Array.of(1, 2), MPI.SUM), MPI.ERR_COUNT, 'reduceLocal', 'reduceLocal sizes differ');
  await throwsMPI(() => MPI.reduceLocal(Float64Array.of(1), Float64Array.of(1), MPI.BAND), MPI.ERR_OP, 'reduceLocal', 'reduceLocal BAND on FLOAT64');
  await throwsMPI(() => MPI.reduceLocal(Int32Array.of(1), Int32Array.of(1), 'sum' as unknown as MPI.Op), MPI.ERR_OP, 'reduceLocal', 'reduceLocal not an op');
  await throwsMPI(() => MPI.reduceLocal('x' as unknown as Int32Array, Int32Array.of(1), MPI.SUM), MPI.ERR_BUFFER, 'reduceLocal', 'reduceLocal not a buffer');
  const shared = new Int32Array(4);
  await throwsMPI(() => MPI.reduceLocal(shared.subarray(0, 2), shared.subarray(1, 3), MPI.SUM), MPI.ERR_BUFFER, 'reduceLocal', 'reduceLocal overlapping buffers');
}

/** Zero counts everywhere (MPICH nonblocking, alltoallw_zeros): every form completes and touches nothing. */
async function zeros(comm: MPI.Comm): Promise<void> {
  const { size } = comm;
  const z = new Array<number>(size).fill(0);
  const e = new Int32Array(0);
  const guard = Int32Array.of(-7);
  const types = new Array<MPI.Datatype>(size).fill(MPI.INT32);
  const reqs = [
    comm.IreduceScatter(e, guard, z, MPI.SUM),
    comm.IreduceScatterBlock(e, e, MPI.SUM),
    comm.Iscan(e, e, MPI.SUM),
    comm.Iexscan(e, e, MPI.SUM),
    comm.Igatherv(e, [guard, z, z], 0),
    comm.Iscatterv([guard, z, z], e, 0),
    comm.Iallgatherv(e, [guard, z, z]),
    comm.Ialltoallv([guard, z, z], [guard, z, z]),
    comm.Ialltoallw([guard, z, z, types], [guard, z, z, types]),
  ];
  await MPI.Request.waitall(reqs);
  await comm.ReduceScatter(e, guard, z, MPI.SUM);
  await comm.Alltoallw([guard, z, z, types], [guard, z, z, types]);
  const p = [comm.ReduceScatterInit(e, guard, z, MPI.SUM), comm.AlltoallwInit([guard, z, z, types], [guard, z, z, types]), comm.GathervInit(e, [guard, z, z], 0)];
  for (let k = 0; k < 2; k++) {
    p.forEach((r) => r.start());
    await MPI.Request.waitall(p);
  }
  p.forEach((r) => r.free());
  equal(guard[0], -7, `${comm.name} zero counts leave the buffers as they were`);
}

/** Argument errors: thrown before anything changes, so they are safe to raise on some ranks only. */
async function errors(comm: MPI.Comm): Promise<void> {
  const { size } = comm;
  const i4 = (k: number): Int32Array => new Int32Array(k);
  await throwsMPI(() => comm.ReduceScatter(i4(size), i4(1), new Array(size + 1).fill(1), MPI.SUM), MPI.ERR_COUNT, 'ReduceScatter', 'recvcounts of the wrong length');
  await throwsMPI(() => comm.ReduceScatter(i4(size), i4(1), new Array(size).fill(-1), MPI.SUM), MPI.ERR_COUNT, 'ReduceScatter', 'negative recvcounts');
  await throwsMPI(() => comm.IreduceScatter(i4(size - 1), i4(1), new Array(size).fill(1), MPI.SUM), MPI.ERR_COUNT, 'IreduceScatter', 'sendbuf shorter than sum(recvcounts)');
  await throwsMPI(() => comm.ReduceScatterInit(i4(size), i4(0), new Array(size).fill(1), MPI.SUM), MPI.ERR_COUNT, 'ReduceScatterInit', 'recvbuf shorter than its count');
  await throwsMPI(() => comm.ReduceScatter(new Float64Array(size), new Float64Array(1), new Array(size).fill(1), MPI.BAND), MPI.ERR_OP, 'ReduceScatter', 'BAND on FLOAT64');
  await throwsMPI(() => comm.AllreduceInit(i4(2), i4(3), MPI.SUM), MPI.ERR_COUNT, 'AllreduceInit', 'buffers of different sizes');
  await throwsMPI(() => comm.AllreduceInit(i4(2), i4(2), null as unknown as MPI.Op), MPI.ERR_OP, 'AllreduceInit', 'no op');
  await throwsMPI(() => comm.BcastInit(i4(1), size), MPI.ERR_ROOT, 'BcastInit', 'root out of range');
  await throwsMPI(() => comm.Iscan(i4(1), i4(2), MPI.SUM), MPI.ERR_COUNT, 'Iscan', 'Iscan sizes differ');
  await throwsMPI(() => comm.Iexscan('x' as unknown as Int32Array, i4(1), MPI.SUM), MPI.ERR_BUFFER, 'Iexscan', 'Iexscan sendbuf not a buffer');
  // Only the root reads Gatherv's recvbuf; off the root only IN_PLACE is wrong.
  if (comm.rank === 0) await throwsMPI(() => comm.Igatherv(i4(1), [i4(size), [], []], 0), MPI.ERR_COUNT, 'Igatherv', 'Igatherv counts of the wrong length');
  else await throwsMPI(() => comm.Igatherv(MPI.IN_PLACE, null, 0), MPI.ERR_BUFFER, 'Igatherv', 'Igatherv IN_PLACE off the root');
  await throwsMPI(() => comm.Iscatterv(null, comm.rank === 0 ? i4(1) : MPI.IN_PLACE, 0), MPI.ERR_BUFFER, 'Iscatterv', 'Iscatterv without sendbuf at the root, IN_PLACE elsewhere');
  await throwsMPI(() => comm.Ialltoallv([i4(size), new Array(size).fill(1), []], [i4(size), new Array(size).fill(1), new Array(size).fill(0)]), MPI.ERR_ARG, 'Ialltoallv', 'displs of the wrong length');
  const wrong = new Array(size + 1).fill(1);
  await throwsMPI(() => comm.Alltoallw([i4(size), wrong, wrong, wrong.map(() => MPI.INT32)], [i4(size), wrong, wrong, wrong.map(() => MPI.INT32)]), MPI.ERR_COUNT, 'Alltoallw', 'Alltoallw lists of the wrong length');
  await throwsMPI(() => comm.Ialltoallw(i4(1) as unknown as MPI.WBufSpec, [i4(size), new Array(size).fill(1), new Array(size).fill(0), new Array(size).fill(MPI.INT32)]), MPI.ERR_BUFFER, 'Ialltoallw', 'Ialltoallw sendbuf not a quadruple');
  const big = Array.from({ length: size }, () => 1);
  const at = Array.from({ length: size }, () => 1 << 20);
  await throwsMPI(() => comm.AlltoallwInit([i4(size), big, at, new Array(size).fill(MPI.INT32)], [i4(size), big, new Array(size).fill(0), new Array(size).fill(MPI.INT32)]), MPI.ERR_ARG, 'AlltoallwInit', 'AlltoallwInit displacement past the buffer');
  // Persistent request rules: start only when inactive, never after free.
  const r = comm.AllreduceInit(i4(1), i4(1), MPI.SUM);
  r.start();
  await throwsMPI(() => r.start(), MPI.ERR_ARG, 'AllreduceInit.start', 'start of an active persistent collective');
  await r.wait();
  r.free();
  await throwsMPI(() => r.start(), MPI.ERR_ARG, 'AllreduceInit.start', 'start after free');
  // The comm still works after all of that (no tag was taken by a failed call).
  const ok = i4(1);
  await comm.Allreduce(Int32Array.of(1), ok, MPI.SUM);
  equal(ok[0], size, `${comm.name} Allreduce after the errors`);
}

const half = await world.split(world.rank % 2, world.rank);
for (const [comm, n] of [[world, 4], [world, 3000], [half!, 5], [MPI.COMM_SELF, 2]] as const) {
  await suite(comm, n);
  await zeros(comm);
  await errors(comm);
}
await reduceLocalSuite();
half!.free();
PAIR.free();
affine.free();
// Every persistent request was freed and every nonblocking one completed: their references are gone.
await world.barrier();
const after = MPI.stats().liveObjects;
equal(after.request, 0, 'no request is live');
if (MPI.config().refcount !== 'gc') equal(after, baseline, `refcount ${MPI.config().refcount}: every object is released`);
await MPI.finalize();
console.log(`coll-forms OK rank ${myRank}`);
