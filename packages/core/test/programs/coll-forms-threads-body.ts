// The rounds coll-forms-threads.ts runs in each thread: persistent and nonblocking collectives
// overlapping each other, every result checked. Returns the number of rounds run.
import * as MPI from '@tsmpi/core';
import { check } from './check.ts';

export async function runForms(comm: MPI.Comm, who: string): Promise<number> {
  const { rank, size } = comm;
  const salt = who === 'main' ? 1 : 1000;
  const x = new Float64Array(1);
  const sum = new Float64Array(1);
  const allreduce = comm.AllreduceInit(x, sum, MPI.SUM);
  const counts = Array.from({ length: size }, (_, i) => i + 1);
  const total = counts.reduce((a, b) => a + b, 0);
  const at = counts.map((_, i) => counts.slice(0, i).reduce((a, b) => a + b, 0));
  const rsSend = new Int32Array(total);
  const rsRecv = new Int32Array(counts[rank]!);
  const gvSend = new Int32Array(rank + 1);
  const gvRecv = new Int32Array(total);
  const ones = new Array<number>(size).fill(1);
  const wDispls = Array.from({ length: size }, (_, i) => 8 * i);
  const wTypes = new Array<MPI.Datatype>(size).fill(MPI.FLOAT64);
  const wSend = new Float64Array(size);
  const wRecv = new Float64Array(size);
  const ROUNDS = 20;
  for (let it = 0; it < ROUNDS; it++) {
    x[0] = rank + it + salt;
    rsSend.forEach((_, i) => { rsSend[i] = rank * i + it + salt; });
    gvSend.fill(rank + it + salt);
    wSend.forEach((_, d) => { wSend[d] = rank * 100 + d + it + salt; });
    allreduce.start();
    const reqs = [
      comm.IreduceScatter(rsSend, rsRecv, counts, MPI.SUM),
      comm.Iallgatherv(gvSend, [gvRecv, counts, at]),
      comm.Ialltoallw([wSend, ones, wDispls, wTypes], [wRecv, ones, wDispls, wTypes]),
    ];
    await MPI.Request.waitall([...reqs, allreduce]);
    check(sum[0] === (size * (size - 1)) / 2 + size * (it + salt), `${who} AllreduceInit start ${it}`);
    const ranksSum = (size * (size - 1)) / 2;
    check(rsRecv.every((v, i) => v === ranksSum * (at[rank]! + i) + size * (it + salt)), `${who} IreduceScatter round ${it}`);
    check(counts.every((c, r) => Array.from({ length: c }, (_, i) => gvRecv[at[r]! + i] === r + it + salt).every(Boolean)), `${who} Iallgatherv round ${it}`);
    check(wRecv.every((v, s) => v === s * 100 + rank + it + salt), `${who} Ialltoallw round ${it}`);
  }
  allreduce.free();
  return ROUNDS;
}
