// Every collective of API.md in both forms, on COMM_SELF (size 1) and COMM_WORLD
// (the job's size: run with -n 2, 3, 5 and 8): several roots, counts 0, 1 and large,
// IN_PLACE, nonblocking forms overlapped with point-to-point, the collective context
// kept apart from user point-to-point, op/type pairs against a sequential computation,
// a non-commutative user op, and the argument errors.
// Args: [large] elements of the large count (default 40000).
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { affineOf, affineOp, affineSeq } from './affine-op.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const LARGE = Number(process.argv[2] ?? 40000);

/** A deterministic small value of rank r at index i (0..6). */
const g = (r: number, i: number): number => (r * 5 + i * 3 + 1) % 7;
const arr = (n: number, f: (i: number) => number): Float64Array => Float64Array.from({ length: n }, (_, i) => f(i));
const list = (a: ArrayLike<number | bigint>): (number | bigint)[] => Array.from(a as ArrayLike<number>);
const roots = (size: number): number[] => [...new Set([0, size - 1, size >> 1])];
const { PAIR, affine } = affineOp();

function affineVec(r: number, n: number): Float64Array {
  const v = new Float64Array(2 * n);
  for (let k = 0; k < n; k++) v.set(affineOf(r, k), 2 * k);
  return v;
}
function affineExpect(from: number, to: number, n: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < n; k++) out.push(...affineSeq(from, to, k));
  return out;
}

type Kind = 'int' | 'uint' | 'big' | 'ubig' | 'float' | 'byte';
const TYPES: [MPI.Datatype, new (n: number) => any, Kind][] = [
  [MPI.INT8, Int8Array, 'int'], [MPI.UINT8, Uint8Array, 'uint'], [MPI.INT16, Int16Array, 'int'], [MPI.UINT16, Uint16Array, 'uint'],
  [MPI.INT32, Int32Array, 'int'], [MPI.UINT32, Uint32Array, 'uint'], [MPI.INT64, BigInt64Array, 'big'], [MPI.UINT64, BigUint64Array, 'ubig'],
  [MPI.FLOAT32, Float32Array, 'float'], [MPI.FLOAT64, Float64Array, 'float'], [MPI.BYTE, Uint8Array, 'byte'],
];
const OPS: [MPI.Op, (a: number, b: number) => number, Kind[]][] = [
  [MPI.SUM, (a, b) => a + b, ['int', 'uint', 'big', 'ubig', 'float']],
  [MPI.PROD, (a, b) => a * b, ['int', 'uint', 'big', 'ubig', 'float']],
  [MPI.MIN, (a, b) => Math.min(a, b), ['int', 'uint', 'big', 'ubig', 'float']],
  [MPI.MAX, (a, b) => Math.max(a, b), ['int', 'uint', 'big', 'ubig', 'float']],
  [MPI.LAND, (a, b) => (a !== 0 && b !== 0 ? 1 : 0), ['int', 'uint', 'big', 'ubig']],
  [MPI.LOR, (a, b) => (a !== 0 || b !== 0 ? 1 : 0), ['int', 'uint', 'big', 'ubig']],
  [MPI.LXOR, (a, b) => ((a !== 0) !== (b !== 0) ? 1 : 0), ['int', 'uint', 'big', 'ubig']],
  [MPI.BAND, (a, b) => a & b, ['int', 'uint', 'big', 'ubig', 'byte']],
  [MPI.BOR, (a, b) => a | b, ['int', 'uint', 'big', 'ubig', 'byte']],
  [MPI.BXOR, (a, b) => a ^ b, ['int', 'uint', 'big', 'ubig', 'byte']],
];

/**
 * Every predefined op on every predefined type through real Allreduce and
 * Reduce calls: allowed pairs against a sequential computation in rank order
 * (wrapping like the element type), forbidden pairs raise ERR_OP.
 */
async function opTable(comm: MPI.Comm): Promise<void> {
  const { rank, size } = comm;
  const n = 5;
  // signed types get negative values too; values stay small so products are exact
  const val = (r: number, i: number, kind: Kind): number => (kind === 'int' || kind === 'big' || kind === 'float' ? g(r, i) - 3 : g(r, i));
  for (const [op, f, kinds] of OPS) {
    for (const [dt, Ctor, kind] of TYPES) {
      const isBig = kind === 'big' || kind === 'ubig';
      const mk = (r: number): any => { const a = new Ctor(n); for (let i = 0; i < n; i++) a[i] = isBig ? BigInt(val(r, i, kind)) : val(r, i, kind); return a; };
      const out = new Ctor(n);
      if (!kinds.includes(kind)) {
        await throwsMPI(() => comm.Allreduce([mk(rank), dt], [out, dt], op), MPI.ERR_OP, 'Allreduce', `${op.name} on ${dt.name}`);
        continue;
      }
      await comm.Allreduce([mk(rank), dt], [out, dt], op);
      const exp = new Ctor(n);
      for (let i = 0; i < n; i++) {
        let acc = val(0, i, kind);
        for (let r = 1; r < size; r++) acc = f(acc, val(r, i, kind));
        exp[i] = isBig ? BigInt.asIntN(64, BigInt(acc)) : acc;
      }
      equal(list(out), list(exp), `${comm.name} Allreduce ${op.name} on ${dt.name}`);
    }
  }
  // MINLOC / MAXLOC: (value, index) pairs of FLOAT64 and INT32; ties keep the lower index.
  for (const [Ctor, dt] of [[Float64Array, MPI.FLOAT64], [Int32Array, MPI.INT32]] as const) {
    const pairs = 4;
    const mine = new Ctor(2 * pairs);
    for (let k = 0; k < pairs; k++) { mine[2 * k] = g(rank, k) % 3; mine[2 * k + 1] = rank; }
    for (const [op, better] of [[MPI.MINLOC, (a: number, b: number) => a < b], [MPI.MAXLOC, (a: number, b: number) => a > b]] as const) {
      const out = new Ctor(2 * pairs);
      await comm.Allreduce(mine, out, op);
      const exp: number[] = [];
      for (let k = 0; k < pairs; k++) {
        let best = g(0, k) % 3, at = 0;
        for (let r = 1; r < size; r++) if (better(g(r, k) % 3, best)) { best = g(r, k) % 3; at = r; }
        exp.push(best, at);
      }
      equal(list(out), exp, `${comm.name} Allreduce ${op.name} on ${dt.name}`);
      const red = new Ctor(2 * pairs);
      await comm.Reduce(mine, comm.rank === size - 1 ? red : null, op, size - 1);
      if (rank === size - 1) equal(list(red), exp, `${comm.name} Reduce ${op.name} on ${dt.name}`);
    }
  }
  for (const op of [MPI.MINLOC, MPI.MAXLOC]) {
    for (const [dt, Ctor] of TYPES) {
      if (dt === MPI.FLOAT64 || dt === MPI.INT32) continue;
      await throwsMPI(() => comm.Allreduce([new Ctor(2), dt], [new Ctor(2), dt], op), MPI.ERR_OP, 'Allreduce', `${op.name} on ${dt.name}`);
    }
  }
}

async function suite(comm: MPI.Comm): Promise<void> {
  await opTable(comm);
  const { rank, size } = comm;
  const tag = comm.name;

  // The collective context never matches user point-to-point: receives from any source with
  // tags 5 and 6 (tags the collective sequence numbers pass through) stay pending.
  const trapObj = comm.irecv<string>(MPI.ANY_SOURCE, 5);
  const trapBuf = new Float64Array(4);
  const trapReq = comm.Irecv(trapBuf, MPI.ANY_SOURCE, 6);

  // --- barrier ---
  await comm.barrier();
  await comm.ibarrier().wait();
  await comm.Ibarrier().wait();

  // --- object forms ---
  for (const root of roots(size)) {
    equal(await comm.bcast(rank === root ? { root, s: 'x'.repeat(root) } : null, root), { root, s: 'x'.repeat(root) }, `${tag} bcast root ${root}`);
    const red = await comm.reduce(rank + 1, MPI.SUM, root);
    equal(red, rank === root ? (size * (size + 1)) / 2 : undefined, `${tag} reduce root ${root}`);
    const gat = await comm.gather({ r: rank }, root);
    equal(gat, rank === root ? Array.from({ length: size }, (_, r) => ({ r })) : undefined, `${tag} gather root ${root}`);
    const sc = await comm.scatter(rank === root ? Array.from({ length: size }, (_, r) => `to ${r}`) : undefined, root);
    equal(sc, `to ${rank}`, `${tag} scatter root ${root}`);
  }
  equal(await comm.allreduce(Float64Array.of(rank, 1), MPI.SUM), Float64Array.of((size * (size - 1)) / 2, size), `${tag} allreduce typed array`);
  equal(await comm.allreduce([rank % 2, rank], MPI.MAXLOC), [size > 1 ? 1 : 0, size > 1 ? 1 : 0], `${tag} allreduce MAXLOC pair`);
  equal(await comm.allreduce(BigInt(rank), MPI.SUM), BigInt((size * (size - 1)) / 2), `${tag} allreduce bigint`);
  equal(await comm.scan(rank + 1, MPI.SUM), ((rank + 1) * (rank + 2)) / 2, `${tag} scan`);
  equal(await comm.exscan(rank + 1, MPI.SUM), rank === 0 ? undefined : (rank * (rank + 1)) / 2, `${tag} exscan`);
  equal(await comm.allgather(rank * 10), Array.from({ length: size }, (_, r) => r * 10), `${tag} allgather`);
  equal(await comm.alltoall(Array.from({ length: size }, (_, j) => `${rank}->${j}`)), Array.from({ length: size }, (_, i) => `${i}->${rank}`), `${tag} alltoall`);
  // A non-commutative user op on object values (typed arrays of one pair).
  const objAff = await comm.allreduce(Float64Array.from(affineOf(rank, 0)), affine);
  equal(list(objAff), affineSeq(0, size, 0), `${tag} allreduce non-commutative user op (object)`);

  // --- Bcast: counts 0, 1, large; several roots; nonblocking ---
  for (const n of [0, 1, LARGE]) {
    for (const root of roots(size)) {
      const b = rank === root ? arr(n, (i) => i * 0.5 + root) : new Float64Array(n);
      await comm.Bcast(b, root);
      check(b.every((v, i) => v === i * 0.5 + root), `${tag} Bcast n ${n} root ${root}`);
    }
  }
  {
    const b = rank === size - 1 ? Int32Array.of(7, 8, 9) : new Int32Array(3);
    await comm.Ibcast(b, size - 1).wait();
    equal(list(b), [7, 8, 9], `${tag} Ibcast`);
  }

  // --- Reduce / Allreduce / Scan / Exscan: counts 0, 1, large ---
  for (const n of [0, 1, LARGE]) {
    const mine = arr(n, (i) => g(rank, i));
    const sum = (i: number, upto = size): number => { let s = 0; for (let r = 0; r < upto; r++) s += g(r, i); return s; };
    for (const root of roots(size)) {
      const out = rank === root ? new Float64Array(n) : null;
      await comm.Reduce(mine, out, MPI.SUM, root);
      if (out !== null) check(out.every((v, i) => v === sum(i)), `${tag} Reduce n ${n} root ${root}`);
      // IN_PLACE at the root
      const io = arr(n, (i) => g(rank, i));
      await comm.Reduce(rank === root ? MPI.IN_PLACE : io, rank === root ? io : null, MPI.MAX, root);
      if (rank === root) check(io.every((v, i) => v === Math.max(...Array.from({ length: size }, (_, r) => g(r, i)))), `${tag} Reduce IN_PLACE n ${n}`);
    }
    const all = new Float64Array(n);
    await comm.Allreduce(mine, all, MPI.SUM);
    check(all.every((v, i) => v === sum(i)), `${tag} Allreduce n ${n}`);
    const inPlace = arr(n, (i) => g(rank, i));
    await comm.Allreduce(MPI.IN_PLACE, inPlace, MPI.SUM);
    check(inPlace.every((v, i) => v === sum(i)), `${tag} Allreduce IN_PLACE n ${n}`);
    const sc = new Float64Array(n);
    await comm.Scan(mine, sc, MPI.SUM);
    check(sc.every((v, i) => v === sum(i, rank + 1)), `${tag} Scan n ${n}`);
    const ex = arr(n, () => -1);
    await comm.Exscan(mine, ex, MPI.SUM);
    check(ex.every((v, i) => v === (rank === 0 ? -1 : sum(i, rank))), `${tag} Exscan n ${n}`);
    const exIn = arr(n, (i) => g(rank, i));
    await comm.Exscan(MPI.IN_PLACE, exIn, MPI.SUM);
    if (rank > 0) check(exIn.every((v, i) => v === sum(i, rank)), `${tag} Exscan IN_PLACE n ${n}`);
    const scIn = arr(n, (i) => g(rank, i));
    await comm.Scan(MPI.IN_PLACE, scIn, MPI.SUM);
    check(scIn.every((v, i) => v === sum(i, rank + 1)), `${tag} Scan IN_PLACE n ${n}`);
  }
  {
    const out = new Int32Array(2);
    await comm.Ireduce(Int32Array.of(rank, 1), rank === 0 ? out : null, MPI.SUM, 0).wait();
    if (rank === 0) equal(list(out), [(size * (size - 1)) / 2, size], `${tag} Ireduce`);
  }

  // --- Non-commutative user op: rank order in Allreduce (short and long), Reduce, Scan, Exscan ---
  for (const n of [1, 300]) {
    const mine = affineVec(rank, n);
    const all = new Float64Array(2 * n);
    await comm.Allreduce([mine, PAIR], [all, PAIR], affine);
    equal(list(all), affineExpect(0, size, n), `${tag} Allreduce non-commutative n ${n}`);
    for (const root of roots(size)) {
      const out = rank === root ? new Float64Array(2 * n) : null;
      await comm.Reduce([mine, PAIR], out === null ? null : [out, PAIR], affine, root);
      if (out !== null) equal(list(out), affineExpect(0, size, n), `${tag} Reduce non-commutative root ${root}`);
    }
    const sc = new Float64Array(2 * n);
    await comm.Scan([mine, PAIR], [sc, PAIR], affine);
    equal(list(sc), affineExpect(0, rank + 1, n), `${tag} Scan non-commutative`);
    const ex = new Float64Array(2 * n);
    await comm.Exscan([mine, PAIR], [ex, PAIR], affine);
    if (rank > 0) equal(list(ex), affineExpect(0, rank, n), `${tag} Exscan non-commutative`);
  }
  {
    // ReduceScatterBlock, non-commutative: block i of the result = x0 op ... op x(p-1) restricted to block i.
    const n = 2;
    const send = new Float64Array(2 * n * size);
    for (let b = 0; b < size; b++) for (let k = 0; k < n; k++) send.set(affineOf(rank, b * n + k), 2 * (b * n + k));
    const recv = new Float64Array(2 * n);
    await comm.ReduceScatterBlock([send, PAIR], [recv, PAIR], affine);
    const exp: number[] = [];
    for (let k = 0; k < n; k++) exp.push(...affineSeq(0, size, rank * n + k));
    equal(list(recv), exp, `${tag} ReduceScatterBlock non-commutative`);
  }

  // --- ReduceScatterBlock commutative, IN_PLACE; counts 0, 1, large ---
  for (const n of [0, 1, Math.ceil(LARGE / size)]) {
    const send = arr(n * size, (i) => g(rank, i));
    const recv = new Float64Array(n);
    await comm.ReduceScatterBlock(send, recv, MPI.SUM);
    const s = (i: number): number => { let t = 0; for (let r = 0; r < size; r++) t += g(r, i); return t; };
    check(recv.every((v, k) => v === s(rank * n + k)), `${tag} ReduceScatterBlock n ${n}`);
    const io = arr(n * size, (i) => g(rank, i));
    await comm.ReduceScatterBlock(MPI.IN_PLACE, io, MPI.SUM);
    check(io.subarray(0, n).every((v, k) => v === s(rank * n + k)), `${tag} ReduceScatterBlock IN_PLACE n ${n}`);
  }

  // --- Gather / Scatter / Allgather / Alltoall: counts 0, 1, large; IN_PLACE; roots ---
  for (const n of [0, 1, Math.ceil(LARGE / size)]) {
    const blockOf = (r: number): Float64Array => arr(n, (i) => r * 1000 + i);
    const whole = (): Float64Array => { const a = new Float64Array(n * size); for (let r = 0; r < size; r++) a.set(blockOf(r), r * n); return a; };
    const expectWhole = list(whole());
    for (const root of roots(size)) {
      const all = rank === root ? new Float64Array(n * size) : null;
      await comm.Gather(blockOf(rank), all, root);
      if (all !== null) equal(list(all), expectWhole, `${tag} Gather n ${n} root ${root}`);
      const ip = new Float64Array(n * size);
      ip.set(blockOf(rank), rank * n);
      await comm.Gather(rank === root ? MPI.IN_PLACE : blockOf(rank), rank === root ? ip : null, root);
      if (rank === root) equal(list(ip), expectWhole, `${tag} Gather IN_PLACE n ${n}`);
      const mine = new Float64Array(n);
      await comm.Scatter(rank === root ? whole() : null, mine, root);
      equal(list(mine), list(blockOf(rank)), `${tag} Scatter n ${n} root ${root}`);
      const src = whole();
      await comm.Scatter(rank === root ? src : null, rank === root ? MPI.IN_PLACE : mine.fill(-1), root);
      if (rank !== root) equal(list(mine), list(blockOf(rank)), `${tag} Scatter IN_PLACE n ${n}`);
    }
    const ag = new Float64Array(n * size);
    await comm.Allgather(blockOf(rank), ag);
    equal(list(ag), expectWhole, `${tag} Allgather n ${n}`);
    const agIn = new Float64Array(n * size);
    agIn.set(blockOf(rank), rank * n);
    await comm.Allgather(MPI.IN_PLACE, agIn);
    equal(list(agIn), expectWhole, `${tag} Allgather IN_PLACE n ${n}`);
    // Alltoall: block j from rank i holds i * 1000 + j * 10 + k.
    const a2a = (i: number): Float64Array => { const a = new Float64Array(n * size); for (let j = 0; j < size; j++) for (let k = 0; k < n; k++) a[j * n + k] = i * 1000 + j * 10 + k; return a; };
    const a2aExp: number[] = [];
    for (let i = 0; i < size; i++) for (let k = 0; k < n; k++) a2aExp.push(i * 1000 + rank * 10 + k);
    const got = new Float64Array(n * size);
    await comm.Alltoall(a2a(rank), got);
    equal(list(got), a2aExp, `${tag} Alltoall n ${n}`);
    const gotIn = a2a(rank);
    await comm.Alltoall(MPI.IN_PLACE, gotIn);
    equal(list(gotIn), a2aExp, `${tag} Alltoall IN_PLACE n ${n}`);
  }
  // Small blocks on many ranks (Bruck for size >= 8).
  {
    const out = new Int32Array(size * 2);
    await comm.Alltoall(Int32Array.from({ length: size * 2 }, (_, i) => rank * 100 + i), out);
    equal(list(out), Array.from({ length: size * 2 }, (_, i) => Math.floor(i / 2) * 100 + rank * 2 + (i % 2)), `${tag} Alltoall small blocks`);
  }

  // --- v-variants: rank i contributes i % 3 items (including 0), displacements with gaps ---
  {
    const cnt = Array.from({ length: size }, (_, i) => i % 3);
    const displs: number[] = [];
    let at = 1;
    for (let i = 0; i < size; i++) { displs.push(at); at += cnt[i]! + 1; }
    const total = at;
    const mineV = arr(cnt[rank]!, (k) => rank * 10 + k);
    const expectV = (fill: number): number[] => {
      const e = new Array<number>(total).fill(fill);
      for (let i = 0; i < size; i++) for (let k = 0; k < cnt[i]!; k++) e[displs[i]! + k] = i * 10 + k;
      return e;
    };
    for (const root of roots(size)) {
      const buf = new Float64Array(total).fill(-1);
      await comm.Gatherv(mineV, rank === root ? [buf, cnt, displs] : null, root);
      if (rank === root) equal(list(buf), expectV(-1), `${tag} Gatherv root ${root}`);
      const ip = new Float64Array(total).fill(-1);
      ip.set(mineV, displs[rank]!);
      await comm.Gatherv(rank === root ? MPI.IN_PLACE : mineV, rank === root ? [ip, cnt, displs] : null, root);
      if (rank === root) equal(list(ip), expectV(-1), `${tag} Gatherv IN_PLACE root ${root}`);
      const src = Float64Array.from(expectV(-1));
      const got = new Float64Array(cnt[rank]!);
      await comm.Scatterv(rank === root ? [src, cnt, displs] : null, got, root);
      equal(list(got), list(mineV), `${tag} Scatterv root ${root}`);
      await comm.Scatterv(rank === root ? [src, cnt, displs] : null, rank === root ? MPI.IN_PLACE : got.fill(-1), root);
      if (rank !== root) equal(list(got), list(mineV), `${tag} Scatterv IN_PLACE root ${root}`);
    }
    const agv = new Float64Array(total).fill(-1);
    await comm.Allgatherv(mineV, [agv, cnt, displs]);
    equal(list(agv), expectV(-1), `${tag} Allgatherv`);
    const agvIn = new Float64Array(total).fill(-1);
    agvIn.set(mineV, displs[rank]!);
    await comm.Allgatherv(MPI.IN_PLACE, [agvIn, cnt, displs]);
    equal(list(agvIn), expectV(-1), `${tag} Allgatherv IN_PLACE`);
    // Alltoallv: rank i sends (i + j) % 3 items to rank j, valued i * 100 + j * 10 + k.
    const sc = Array.from({ length: size }, (_, j) => (rank + j) % 3);
    const sd: number[] = [];
    let s = 0;
    for (const c of sc) { sd.push(s); s += c; }
    const sendV = new Int32Array(s);
    for (let j = 0; j < size; j++) for (let k = 0; k < sc[j]!; k++) sendV[sd[j]! + k] = rank * 100 + j * 10 + k;
    const rc = Array.from({ length: size }, (_, i) => (i + rank) % 3);
    const rd: number[] = [];
    let t = 0;
    for (const c of rc) { rd.push(t); t += c; }
    const recvV = new Int32Array(t);
    await comm.Alltoallv([sendV, sc, sd], [recvV, rc, rd]);
    const expA: number[] = [];
    for (let i = 0; i < size; i++) for (let k = 0; k < rc[i]!; k++) expA.push(i * 100 + rank * 10 + k);
    equal(list(recvV), expA, `${tag} Alltoallv`);
    // IN_PLACE: symmetric counts c(i, j) = (i + j) % 3 so recv's counts describe the send too.
    const ipV = new Int32Array(t);
    for (let j = 0; j < size; j++) for (let k = 0; k < rc[j]!; k++) ipV[rd[j]! + k] = rank * 100 + j * 10 + k;
    await comm.Alltoallv(MPI.IN_PLACE, [ipV, rc, rd]);
    equal(list(ipV), expA, `${tag} Alltoallv IN_PLACE`);
  }

  // --- Nonblocking collectives overlapped with point-to-point ---
  {
    const n = 1000;
    const ar = arr(n, (i) => g(rank, i));
    const arOut = new Float64Array(n);
    const bc = rank === 0 ? arr(n, (i) => i) : new Float64Array(n);
    const ga = rank === 0 ? new Int32Array(size) : null;
    const scAll = rank === 0 ? Int32Array.from({ length: size }, (_, i) => i * 3) : null;
    const scMine = new Int32Array(1);
    const agOut = new Int32Array(size);
    const a2aOut = new Int32Array(size);
    const reqs = [
      comm.Iallreduce(ar, arOut, MPI.SUM),
      comm.Ibcast(bc, 0),
      comm.Igather(Int32Array.of(rank), ga, 0),
      comm.Iscatter(scAll, scMine, 0),
      comm.Iallgather(Int32Array.of(rank * 2), agOut),
      comm.Ialltoall(Int32Array.from({ length: size }, (_, j) => rank * 10 + j), a2aOut),
      comm.Ibarrier(),
    ];
    // Point-to-point around a ring while the collectives progress.
    const right = (rank + 1) % size;
    const left = (rank - 1 + size) % size;
    for (let k = 0; k < 20; k++) {
      const got = await comm.sendrecv({ k, from: rank }, right, 900 + k, left, 900 + k);
      equal(got, { k, from: left }, `${tag} ring exchange ${k} during nonblocking collectives`);
    }
    let spins = 0;
    while (!MPI.Request.testall(reqs)) {
      spins++;
      await new Promise((r) => setImmediate(r));
    }
    check(spins >= 0, 'testall polled');
    check(arOut.every((v, i) => { let s = 0; for (let r = 0; r < size; r++) s += g(r, i); return v === s; }), `${tag} Iallreduce`);
    check(bc.every((v, i) => v === i), `${tag} Ibcast overlapped`);
    if (ga !== null) equal(list(ga), Array.from({ length: size }, (_, i) => i), `${tag} Igather`);
    equal(scMine[0], rank * 3, `${tag} Iscatter`);
    equal(list(agOut), Array.from({ length: size }, (_, i) => i * 2), `${tag} Iallgather`);
    equal(list(a2aOut), Array.from({ length: size }, (_, i) => i * 10 + rank), `${tag} Ialltoall`);
  }

  // --- Argument errors (raised on every rank alike, before any traffic) ---
  const f1 = new Float64Array(1);
  await throwsMPI(() => comm.Bcast(f1, size), MPI.ERR_ROOT, 'Bcast', 'Bcast root = size');
  await throwsMPI(() => comm.Ireduce(f1, f1, MPI.SUM, -1), MPI.ERR_ROOT, 'Ireduce', 'Ireduce negative root');
  await throwsMPI(() => comm.gather(1, 1.5), MPI.ERR_ROOT, 'gather', 'fractional root');
  await throwsMPI(() => comm.Allreduce([new Uint8Array(2), MPI.BYTE], [new Uint8Array(2), MPI.BYTE], MPI.SUM), MPI.ERR_OP, 'Allreduce', 'SUM on BYTE');
  await throwsMPI(() => comm.Allreduce(new Float64Array(2), new Float64Array(2), MPI.BAND), MPI.ERR_OP, 'Allreduce', 'BAND on FLOAT64');
  await throwsMPI(() => comm.Reduce(new Float32Array(2), new Float32Array(2), MPI.LXOR, 0), MPI.ERR_OP, 'Reduce', 'LXOR on FLOAT32');
  await throwsMPI(() => comm.Iallreduce(new Int16Array(2), new Int16Array(2), MPI.MINLOC), MPI.ERR_OP, 'Iallreduce', 'MINLOC on INT16');
  await throwsMPI(() => comm.Scan(new Float64Array(3), new Float64Array(3), MPI.MAXLOC), MPI.ERR_COUNT, 'Scan', 'MAXLOC on an odd count');
  const mixed = MPI.Datatype.struct([1, 1], [0, 8], [MPI.FLOAT64, MPI.INT32]).commit();
  await throwsMPI(() => comm.Allreduce([new Float64Array(2), mixed], [new Float64Array(2), mixed], affine), MPI.ERR_OP, 'Allreduce', 'user op on a struct');
  await throwsMPI(() => comm.Allreduce([new Float64Array(2), mixed], [new Float64Array(2), mixed], MPI.SUM), MPI.ERR_OP, 'Allreduce', 'SUM on a struct');
  await throwsMPI(() => comm.Allreduce(new Float64Array(2), new Float64Array(3), MPI.SUM), MPI.ERR_COUNT, 'Allreduce', 'buffers of different sizes');
  await throwsMPI(() => comm.allreduce(1, 'SUM' as never), MPI.ERR_OP, 'allreduce', 'not an op');
  const freedOp = MPI.Op.create(() => undefined);
  freedOp.free();
  await throwsMPI(() => comm.Allreduce(f1, f1, freedOp), MPI.ERR_OP, 'Allreduce', 'freed op');
  const uncommitted = MPI.Datatype.vector(2, 1, 2, MPI.FLOAT64);
  await throwsMPI(() => comm.Bcast([new Float64Array(4), 1, uncommitted], 0), MPI.ERR_TYPE, 'Bcast', 'uncommitted datatype');
  await throwsMPI(() => comm.Gather(MPI.IN_PLACE, null, 0), MPI.ERR_BUFFER, 'Gather', 'IN_PLACE off the root / null recvbuf at the root');
  if (size > 1) await throwsMPI(() => comm.Allgather(f1, new Float64Array(size + 1)), MPI.ERR_COUNT, 'Allgather', 'recvbuf not size blocks');
  await throwsMPI(() => comm.alltoall([]), MPI.ERR_ARG, 'alltoall', 'values of the wrong length');
  if (size === 1) {
    // Errors only the root detects: on a communicator of one rank, so no other rank enters the collective.
    await throwsMPI(() => comm.Gatherv(f1, [f1, [1, 1], [0, 0]], 0), MPI.ERR_COUNT, 'Gatherv', 'counts of the wrong length');
    await throwsMPI(() => comm.Gatherv(f1, [f1, [1], [-1]], 0), MPI.ERR_ARG, 'Gatherv', 'negative displacement');
    await throwsMPI(() => comm.Scatterv([f1, [2], [0]], f1, 0), MPI.ERR_COUNT, 'Scatterv', 'block beyond the buffer');
    await throwsMPI(() => comm.scatter([1, 2], 0), MPI.ERR_ARG, 'scatter', 'values of the wrong length');
    await throwsMPI(() => comm.Reduce(f1, null, MPI.SUM, 0), MPI.ERR_BUFFER, 'Reduce', 'null recvbuf at the root');
  }

  // The wildcard receives posted at the start saw none of the collective traffic.
  await comm.barrier();
  check(!trapObj.test() && !trapReq.test(), `${tag} user wildcard receives matched collective traffic`);
  await comm.barrier(); // every rank has checked before anyone sends the user messages
  await comm.send('user message', (rank + 1) % size, 5);
  await comm.Send(Float64Array.of(1, 2, 3, 4), (rank + 1) % size, 6);
  equal(await trapObj.wait(), 'user message', `${tag} user receive after collectives`);
  await trapReq.wait();
  equal(list(trapBuf), [1, 2, 3, 4], `${tag} user buffer receive after collectives`);
  await comm.barrier();
}

await suite(MPI.COMM_SELF);
await suite(world);
console.log(`coll-suite OK rank ${world.rank} of ${world.size}`);
await MPI.finalize();
