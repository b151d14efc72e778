// Derived datatypes end to end (issue 5): constructors and their size / extent / lower bound,
// MPI.pack / unpack, non-contiguous layouts in point-to-point (blocking, nonblocking,
// persistent, truncated) and in collectives (Bcast, Gather, Scatter, Allgather, Alltoall,
// Gatherv, Allreduce), Status.getCount with a datatype, ERR_TYPE for uncommitted and
// freed types, and a datatype freed while an Irecv using it is pending. Run with 3 processes.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const list = (a: ArrayLike<number | bigint>): (number | bigint)[] => Array.from(a as ArrayLike<number>);
const props = (t: MPI.Datatype): number[] => [t.size, t.extent, t.lowerBound];

// --- constructors: size, extent, lower bound ---
equal(props(MPI.FLOAT64), [8, 8, 0], 'FLOAT64');
equal(props(MPI.Datatype.contiguous(3, MPI.FLOAT64)), [24, 24, 0], 'contiguous');
equal(props(MPI.Datatype.vector(3, 2, 4, MPI.INT32)), [24, 40, 0], 'vector');
equal(props(MPI.Datatype.hvector(2, 1, 12, MPI.FLOAT64)), [16, 20, 0], 'hvector');
equal(props(MPI.Datatype.indexed([2, 1], [0, 5], MPI.INT32)), [12, 24, 0], 'indexed');
equal(props(MPI.Datatype.struct([1, 2], [0, 8], [MPI.FLOAT64, MPI.INT32])), [16, 16, 0], 'struct');
equal(props(MPI.Datatype.struct([1, 1], [0, 8], [MPI.INT32, MPI.FLOAT64])), [12, 16, 0], 'struct padded to alignment');
equal(props(MPI.Datatype.subarray([4, 6], [2, 3], [1, 2], 'C', MPI.FLOAT32)), [24, 96, 0], 'subarray');
equal(props(MPI.Datatype.resized(MPI.FLOAT64, 0, 24)), [8, 24, 0], 'resized');
equal(props(MPI.Datatype.resized(MPI.INT32, -4, 16)), [4, 16, -4], 'resized with a negative lower bound');
equal(MPI.DOUBLE === MPI.FLOAT64 && MPI.INT === MPI.INT32 && MPI.CHAR === MPI.INT8, true, 'aliases');

// --- errors of the datatype life cycle ---
await throwsMPI(() => MPI.FLOAT64.free(), MPI.ERR_TYPE, 'Datatype.free', 'freeing a predefined type');
const gone = MPI.Datatype.contiguous(2, MPI.INT32).commit();
gone.free();
await throwsMPI(() => gone.free(), MPI.ERR_TYPE, 'Datatype.free', 'double free');
await throwsMPI(() => gone.commit(), MPI.ERR_TYPE, 'Datatype.commit', 'commit after free');
await throwsMPI(() => MPI.Datatype.vector(2, 1, 2, gone), MPI.ERR_TYPE, 'Datatype.vector', 'freed base');
await throwsMPI(() => MPI.Datatype.vector(2, 1, 2, 'x' as never), MPI.ERR_TYPE, 'Datatype.vector', 'not a datatype');
await throwsMPI(() => MPI.Datatype.contiguous(-1, MPI.INT32), MPI.ERR_COUNT, 'Datatype.contiguous', 'negative count');
await throwsMPI(() => MPI.Datatype.indexed([1, 2], [0], MPI.INT32), MPI.ERR_ARG, 'Datatype.indexed', 'arrays of different length');
await throwsMPI(() => MPI.Datatype.subarray([4], [5], [0], 'C', MPI.INT32), MPI.ERR_ARG, 'Datatype.subarray', 'subsize > size');
await throwsMPI(() => world.Send([new Int32Array(4), 1, gone], 0), MPI.ERR_TYPE, 'Send', 'freed type in a new call');
const raw = MPI.Datatype.vector(2, 1, 2, MPI.INT32);
await throwsMPI(() => world.Send([new Int32Array(4), 1, raw], 0), MPI.ERR_TYPE, 'Send', 'uncommitted type');
await throwsMPI(() => MPI.pack([new Int32Array(4), 1, raw]), MPI.ERR_TYPE, 'pack', 'pack with an uncommitted type');
await throwsMPI(() => world.Send([new Int32Array(3), 2, raw.commit()], 0), MPI.ERR_COUNT, 'Send', 'items beyond the buffer');

// --- pack / unpack: a column of a 4 x 5 row-major matrix ---
const ROWS = 4;
const COLS = 5;
const column = MPI.Datatype.vector(ROWS, 1, COLS, MPI.FLOAT64).commit();
const matrix = Float64Array.from({ length: ROWS * COLS }, (_, i) => i);
const f64 = (b: Uint8Array): number[] => list(new Float64Array(b.buffer, b.byteOffset, b.length / 8)) as number[];
equal(f64(MPI.pack([matrix.subarray(2), 1, column])), [2, 7, 12, 17], 'pack a column');
const m2 = new Float64Array(ROWS * COLS);
MPI.unpack(new Uint8Array(Float64Array.of(-1, -2, -3, -4).buffer), [m2.subarray(1), 1, column]);
equal([m2[1], m2[6], m2[11], m2[16], m2[0], m2[2]], [-1, -2, -3, -4, 0, 0], 'unpack into a column');
await throwsMPI(() => MPI.unpack(new Uint8Array(40), [m2, 1, column]), MPI.ERR_TRUNCATE, 'unpack', 'more bytes than the layout takes');
// A column type resized to one element, so consecutive items are consecutive columns.
const colStep = MPI.Datatype.resized(column, 0, 8).commit();
equal(f64(MPI.pack([matrix, 2, colStep])), [0, 5, 10, 15, 1, 6, 11, 16], 'resized column type, count 2');

// A struct { f64 x; i32 n; i32 m } of 16 bytes, in an ArrayBuffer viewed as bytes.
const rec = MPI.Datatype.struct([1, 2], [0, 8], [MPI.FLOAT64, MPI.INT32]).commit();
function records(n: number, seed: number): DataView {
  const dv = new DataView(new ArrayBuffer(16 * n));
  for (let k = 0; k < n; k++) {
    dv.setFloat64(16 * k, seed + k + 0.5, true);
    dv.setInt32(16 * k + 8, seed * 10 + k, true);
    dv.setInt32(16 * k + 12, -k, true);
  }
  return dv;
}
const readRecords = (dv: DataView, n: number): number[] =>
  Array.from({ length: n }, (_, k) => [dv.getFloat64(16 * k, true), dv.getInt32(16 * k + 8, true), dv.getInt32(16 * k + 12, true)]).flat();

// A 2 x 3 tile at (1, 2) of a 4 x 6 FLOAT32 array, and an indexed type.
const tile = MPI.Datatype.subarray([4, 6], [2, 3], [1, 2], 'C', MPI.FLOAT32).commit();
const idx = MPI.Datatype.indexed([2, 1, 3], [0, 4, 7], MPI.INT16).commit();

// --- point-to-point round trips between ranks 0 and 1 ---
if (rank === 0) {
  await world.Send([matrix.subarray(3), 1, column], 1, 1); // column 3 to contiguous
  await world.Send(Float64Array.of(9, 8, 7, 6), 1, 2); // contiguous into a column
  await world.Send([Int16Array.from({ length: 10 }, (_, i) => i * 3), 1, idx], 1, 3);
  await world.Send([records(3, 4), 3, rec], 1, 4);
  await world.Send([Float32Array.from({ length: 24 }, (_, i) => i), 1, tile], 1, 5);
  await world.Send([matrix, 3, colStep], 1, 6); // three columns, 12 values
  await world.Send([matrix, 3, colStep], 1, 7); // truncated at the receiver
  // Nonblocking send of a layout the sender overwrites right after: the data was packed at the call.
  const scratch = Float64Array.from(matrix);
  const s = world.Isend([scratch, 2, colStep], 1, 8);
  scratch.fill(-1);
  await s.wait();
  await world.Send([matrix.subarray(1), 1, column], 1, 9); // column 1, received through a matched probe
} else if (rank === 1) {
  const col = new Float64Array(ROWS);
  const st = await world.Recv(col, 0, 1);
  equal(list(col), [3, 8, 13, 18], 'vector -> contiguous');
  equal([st.getCount(), st.getCount(MPI.FLOAT64), st.getCount(column), st.getCount(MPI.Datatype.contiguous(3, MPI.FLOAT64).commit())], [32, 4, 1, MPI.UNDEFINED], 'getCount with datatypes');
  const m = new Float64Array(ROWS * COLS);
  await world.Recv([m.subarray(4), 1, column], 0, 2);
  equal([m[4], m[9], m[14], m[19], m[3], m[5]], [9, 8, 7, 6, 0, 0], 'contiguous -> vector, gaps untouched');
  const ix = new Int16Array(10).fill(-1);
  const sti = await world.Recv([ix, 1, idx], 0, 3);
  equal(list(ix), [0, 3, -1, -1, 12, -1, -1, 21, 24, 27], 'indexed round trip');
  equal(sti.getCount(idx), 1, 'getCount(indexed)');
  const dv = new DataView(new ArrayBuffer(48));
  await world.Recv([dv, 3, rec], 0, 4);
  equal(readRecords(dv, 3), readRecords(records(3, 4), 3), 'struct round trip');
  const arr = new Float32Array(24).fill(-1);
  await world.Recv([arr, 1, tile], 0, 5);
  equal(list(arr.subarray(6, 18)), [-1, -1, 8, 9, 10, -1, -1, -1, 14, 15, 16, -1], 'subarray round trip');
  const cols = new Float64Array(ROWS * COLS);
  const stc = await world.Recv([cols, 3, colStep], 0, 6);
  equal([cols[0], cols[5], cols[1], cols[16], cols[2], cols[17], cols[3]], [0, 5, 1, 16, 2, 17, 0], 'resized strided round trip');
  equal(stc.getCount(colStep), 3, 'getCount(resized)');
  const short = new Float64Array(ROWS * COLS);
  await throwsMPI(() => world.Recv([short, 2, colStep], 0, 7), MPI.ERR_TRUNCATE, 'Recv', 'truncated into a derived type');
  equal([short[0], short[15], short[1], short[16], short[2]], [0, 15, 1, 16, 0], 'truncated receive keeps what fits');
  const later = new Float64Array(ROWS * COLS);
  await world.Recv([later, 2, colStep], 0, 8);
  equal([later[0], later[15], later[1], later[16]], [0, 15, 1, 16], 'Isend packed at the call');
  const msg = await world.mprobe(0, 9);
  const probed = new Float64Array(ROWS * COLS).fill(-1);
  const stm = await msg.Recv([probed.subarray(2), 1, column]);
  equal([probed[2], probed[7], probed[12], probed[17], probed[3]], [1, 6, 11, 16, -1], 'Message.Recv into a derived type (vector -> vector)');
  equal([stm.getCount(column), stm.source, stm.tag], [1, 0, 9], 'Message.Recv status');
}

// --- a datatype and a communicator freed while an Irecv using them is pending complete with the right data ---
// (papers/refcount-gc.txt, Figure 1: the user releases both; the pending request keeps them alive)
{
  const pending = MPI.Datatype.vector(3, 1, 2, MPI.INT32).commit();
  const comm = await world.dup();
  if (rank === 1) {
    const buf = new Int32Array(6).fill(-1);
    const req = comm.Irecv([buf, 1, pending], 0, 20);
    pending.free();
    comm.free();
    await throwsMPI(() => world.Irecv([buf, 1, pending], 0, 21), MPI.ERR_TYPE, 'Irecv', 'the freed type in a new call');
    await throwsMPI(() => comm.Irecv(buf, 0, 21), MPI.ERR_COMM, 'Irecv', 'the freed communicator in a new call');
    await world.send('posted and freed', 0, 19);
    await req.wait();
    equal(list(buf), [5, -1, 6, -1, 7, -1], 'Irecv with a freed datatype on a freed communicator');
    equal(req.status!.getCount(MPI.INT32), 3, 'its status');
    equal(req.status!.source, 0, 'its source, a rank of the freed communicator');
  } else if (rank === 0) {
    await world.recv(1, 19);
    await comm.Send(Int32Array.of(5, 6, 7), 1, 20);
    comm.free();
  } else {
    comm.free();
  }
}

// --- persistent requests with a non-contiguous type re-pack on every start ---
if (rank < 2) {
  const peer = 1 - rank;
  const out = new Int32Array(6);
  const inb = new Int32Array(6).fill(-1);
  const every2 = MPI.Datatype.vector(3, 1, 2, MPI.INT32).commit();
  const sreq = world.SendInit([out, 1, every2], peer, 30);
  const rreq = world.RecvInit([inb, 1, every2], peer, 30);
  for (let round = 0; round < 3; round++) {
    out.set([round, 0, round + 1, 0, round + 2, 0]);
    rreq.start();
    sreq.start();
    await MPI.Request.waitall([rreq, sreq]);
    equal(list(inb), [round, -1, round + 1, -1, round + 2, -1], `persistent round ${round}`);
  }
  sreq.free();
  rreq.free();
}

// --- collectives with derived types ---
{
  // Bcast of records.
  const dv = rank === 1 ? records(2, 7) : new DataView(new ArrayBuffer(32));
  await world.Bcast([dv, 2, rec], 1);
  equal(readRecords(dv, 2), readRecords(records(2, 7), 2), 'Bcast of a struct');

  // Gather columns: each rank sends column `rank` of its matrix (vector type); the root
  // receives them as rows (contiguous).
  const mine = Float64Array.from({ length: ROWS * COLS }, (_, i) => rank * 100 + i);
  for (const root of [0, size - 1]) {
    const rows = rank === root ? new Float64Array(ROWS * size) : null;
    await world.Gather([mine.subarray(rank), 1, column], rows, root);
    if (rows !== null) {
      const exp: number[] = [];
      for (let r = 0; r < size; r++) for (let i = 0; i < ROWS; i++) exp.push(r * 100 + i * COLS + r);
      equal(list(rows), exp, `Gather column types at root ${root}`);
    }
  }
  // Gather rows into columns of the root's matrix: the receive type is the resized column.
  const cols = rank === 0 ? new Float64Array(ROWS * COLS).fill(-1) : null;
  await world.Gather(Float64Array.from({ length: ROWS }, (_, i) => rank * 10 + i), cols === null ? null : [cols, size, colStep], 0);
  if (cols !== null) {
    for (let r = 0; r < size; r++) for (let i = 0; i < ROWS; i++) check(cols[i * COLS + r] === r * 10 + i, `Gather into columns (${i}, ${r})`);
    check(cols[COLS - 1] === -1, 'Gather into columns leaves the other columns');
  }
  // Scatter columns of the root's matrix; every rank gets one column as a contiguous vector.
  const got = new Float64Array(ROWS);
  await world.Scatter(rank === 0 ? [matrix, size, colStep] : null, got, 0);
  equal(list(got), Array.from({ length: ROWS }, (_, i) => i * COLS + rank), 'Scatter columns');
  // Scatter into a strided receive layout.
  const strided = new Int32Array(4).fill(-1);
  const every2 = MPI.Datatype.vector(2, 1, 2, MPI.INT32).commit();
  await world.Scatter(rank === 2 ? Int32Array.from({ length: 2 * size }, (_, i) => i) : null, [strided, 1, every2], 2);
  equal(list(strided), [2 * rank, -1, 2 * rank + 1, -1], 'Scatter into a vector type');
  // Gatherv with a derived receive type: rank r contributes r + 1 columns.
  const counts = Array.from({ length: size }, (_, r) => (r === 0 ? 1 : r));
  const displs: number[] = [];
  let at = 0;
  for (const c of counts) { displs.push(at); at += c; }
  const gv = rank === 0 ? new Float64Array(ROWS * COLS).fill(-1) : null;
  await world.Gatherv(Float64Array.from({ length: ROWS * counts[rank]! }, (_, i) => rank * 100 + i), gv === null ? null : [[gv, colStep], counts, displs], 0);
  if (gv !== null) {
    for (let r = 0; r < size; r++) for (let c = 0; c < counts[r]!; c++) for (let i = 0; i < ROWS; i++) {
      check(gv[i * COLS + displs[r]! + c] === r * 100 + c * ROWS + i, `Gatherv into column ${displs[r]! + c} row ${i}`);
    }
  }
  // Allgather of tiles into a contiguous buffer; Alltoall of columns.
  const src = Float32Array.from({ length: 24 }, (_, i) => rank * 1000 + i);
  const ag = new Float32Array(6 * size);
  await world.Allgather([src, 1, tile], ag);
  const tileOf = (r: number): number[] => [8, 9, 10, 14, 15, 16].map((i) => r * 1000 + i);
  equal(list(ag), Array.from({ length: size }, (_, r) => tileOf(r)).flat(), 'Allgather of subarrays');
  const a2a = new Float64Array(ROWS * COLS).fill(-1);
  await world.Alltoall([mine, size, colStep], [a2a, size, colStep]);
  for (let i = 0; i < size; i++) for (let row = 0; row < ROWS; row++) {
    check(a2a[row * COLS + i] === i * 100 + row * COLS + rank, `Alltoall columns (${row}, ${i})`);
  }
  // Allreduce on a non-contiguous layout, IN_PLACE: only the column is reduced.
  const red = Float64Array.from({ length: ROWS * COLS }, (_, i) => i + rank);
  await world.Allreduce(MPI.IN_PLACE, [red.subarray(1), 1, column], MPI.SUM);
  for (let i = 0; i < ROWS * COLS; i++) {
    const inColumn = i % COLS === 1;
    const exp = inColumn ? size * i + (size * (size - 1)) / 2 : i + rank;
    check(red[i] === exp, `Allreduce on a column, element ${i}`);
  }
  // Non-contiguous send and receive types of different shapes with MAX.
  const out = new Int32Array(6).fill(-1);
  await world.Allreduce([Int32Array.of(rank, 5 - rank, 2), 1, MPI.Datatype.contiguous(3, MPI.INT32).commit()], [out, 1, MPI.Datatype.vector(3, 1, 2, MPI.INT32).commit()], MPI.MAX);
  equal(list(out), [size - 1, -1, 5, -1, 2, -1], 'Allreduce contiguous -> vector');
}

console.log(`dt-suite OK rank ${rank}`);
await MPI.finalize();
