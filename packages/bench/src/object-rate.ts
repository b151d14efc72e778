/**
 * Object-message rate: the neighbor message-rate exchange (neighbor-rate.ts) with object-form
 * messages, so that the object codec's cost shows (issue 39: the structured-clone rules must not
 * cost more than 5% of this rate).
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/object-rate.ts [SHAPE] [ITERATIONS] [WINDOW]
 *
 * Ranks 0 and 1 each post WINDOW irecv and WINDOW isend of one value per iteration, then waitall.
 * Rank 0 prints WINDOW x ITERATIONS / elapsed seconds. SHAPE is the value sent:
 *   small    { step, data: Float64Array(2) }                      (default)
 *   object   { a, b, c: [1, 2, 3], d: { e } }
 *   records  100 objects { id, name, v } in an array
 *   map      a Map of 20 string keys to numbers (new: before issue 39 it arrived as an object)
 * ITERATIONS default 2000 (after 200 warm-up), WINDOW default 12.
 * The machine's load moves this figure: compare runs interleaved, on a quiet machine.
 */
import * as MPI from '@tsmpi/core';

const SHAPES: Record<string, () => unknown> = {
  small: () => ({ step: 1, data: new Float64Array([1, 2]) }),
  object: () => ({ a: 1, b: 'x', c: [1, 2, 3], d: { e: true } }),
  records: () => Array.from({ length: 100 }, (_, i) => ({ id: i, name: `n${i}`, v: i * 1.5 })),
  map: () => new Map(Array.from({ length: 20 }, (_, i) => [`key${i}`, i])),
};

const [shape = 'small', iterationsArg = '2000', windowArg = '12'] = process.argv.slice(2);
const iterations = Number(iterationsArg);
const window = Number(windowArg);
const make = SHAPES[shape];
if (make === undefined || !Number.isSafeInteger(iterations) || iterations < 1 || !Number.isSafeInteger(window) || window < 1) {
  console.error(`usage: object-rate.ts [${Object.keys(SHAPES).join('|')}] [ITERATIONS >= 1] [WINDOW >= 1]`);
  process.exit(2);
}

await MPI.init();
const comm = MPI.COMM_WORLD;
if (comm.size !== 2) {
  if (comm.rank === 0) console.error(`object-rate: needs exactly 2 processes (got ${comm.size})`);
  process.exitCode = 2;
} else {
  const peer = 1 - comm.rank;
  const value = make();
  const reqs: MPI.Request<unknown>[] = new Array(2 * window);
  const iteration = async (): Promise<void> => {
    for (let i = 0; i < window; i++) reqs[i] = comm.irecv(peer, 0);
    for (let i = 0; i < window; i++) reqs[window + i] = comm.isend(value, peer, 0);
    await MPI.Request.waitall(reqs);
  };
  for (let i = 0; i < 200; i++) await iteration();
  await comm.barrier();
  const t0 = MPI.wtime();
  for (let i = 0; i < iterations; i++) await iteration();
  const elapsed = MPI.wtime() - t0;
  if (comm.rank === 0) console.log(`object-rate ${shape}: ${Math.round((window * iterations) / elapsed)} msg/s (window ${window}, ${iterations} iterations, progress ${MPI.config().progress})`);
}
await MPI.finalize();
