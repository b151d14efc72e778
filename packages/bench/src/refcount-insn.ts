/**
 * The per-message work of refcount-rate.ts's kernel in one thread, for instruction counts:
 * WINDOW zero-byte Irecv and Isend to itself on COMM_SELF (or a dup of it, with a committed
 * contiguous(1, BYTE)), then waitall, ITERATIONS times, in a singleton process with inline
 * progress (no engine worker, no worker thread: nothing polls, so the count does not depend on
 * the machine's load). The difference between two runs with different ITERATIONS under
 * callgrind, divided by the extra messages, is the instructions of one message (its Irecv,
 * its Isend, their matching and completion), start-up and JIT warm-up cancelled out:
 *
 *   TSMPI_REFCOUNT=gc TSMPI_PROGRESS=inline valgrind --tool=callgrind --callgrind-out-file=/tmp/a.out \
 *     node --no-concurrent-recompilation --conditions=@tsmpi/source --import tsx \
 *     packages/bench/src/refcount-insn.ts derived 20000
 *
 * Without valgrind it prints the rate, a load-dependent figure for a quick look.
 * Arguments: OBJECTS (predefined | derived, default derived), ITERATIONS (default 20000), WARMUP (default 2000).
 */
import * as MPI from '@tsmpi/core';

const WINDOW = 12;
const [objects = 'derived', iterationsArg = '20000', warmupArg = '2000'] = process.argv.slice(2);
const iterations = Number(iterationsArg);
const warmup = Number(warmupArg);
if ((objects !== 'derived' && objects !== 'predefined') || !Number.isSafeInteger(iterations) || iterations < 0 || !Number.isSafeInteger(warmup) || warmup < 0) {
  console.error('usage: refcount-insn.ts [predefined|derived] [ITERATIONS >= 0] [WARMUP >= 0]');
  process.exit(2);
}

await MPI.init();
const derived = objects === 'derived';
const comm = derived ? await MPI.COMM_SELF.dup() : MPI.COMM_SELF;
const type = derived ? MPI.Datatype.contiguous(1, MPI.BYTE).commit() : null;
const buf = new Uint8Array(0);
// The same specs as refcount-rate.ts: a derived type travels as [buffer, 0 items, type].
const spec: MPI.BufSpec = type === null ? buf : [buf, 0, type];
const reqs: MPI.Request<void>[] = new Array(2 * WINDOW);

async function iteration(): Promise<void> {
  for (let i = 0; i < WINDOW; i++) reqs[i] = comm.Irecv(spec, 0, 0);
  for (let i = 0; i < WINDOW; i++) reqs[WINDOW + i] = comm.Isend(spec, 0, 0);
  await MPI.Request.waitall(reqs);
}

for (let i = 0; i < warmup; i++) await iteration();
const start = MPI.wtime();
for (let i = 0; i < iterations; i++) await iteration();
const seconds = MPI.wtime() - start;
console.log(`refcount-insn: ${objects}, refcount ${MPI.config().refcount}, ${iterations} x ${WINDOW} messages, ${(iterations * WINDOW / seconds / 1e6).toFixed(4)} M messages/s`);
if (comm !== MPI.COMM_SELF) comm.free();
type?.free();
await MPI.finalize();
