// Init's warm-up of the small allreduce (setting collWarmup, packages/core/src/api/coll-warm-up.ts):
// when init returns, every rank has run the same number of allreduces on COMM_WORLD, or none. The
// program runs collectives of its own at once (an allreduce of each kind the warm-up runs and one it
// does not, a barrier) and checks their results, and that MPI.stats counts its own messages only:
// nothing sent at init, exactly the allreduce's messages sent after it. With --mismatch, rank 1 asks
// for a different count before init (as a per-rank environment would): no rank may run the warm-up,
// and the job must neither hang nor go wrong.
import * as MPI from '@tsmpi/core';

if (process.argv.includes('--mismatch') && process.env.TSMPI_RANK === '1') process.env.TSMPI_COLL_WARMUP = '7';

await MPI.init();
const world = MPI.COMM_WORLD;
const me = world.rank;
const n = world.size;

function check(what: string, ok: boolean): void {
  if (!ok) throw new Error(`coll-warm-up (rank ${me}): ${what}`);
}

const atInit = MPI.stats();
check(`nothing sent when init returns (sent ${atInit.messagesSent}, ${atInit.bytesSent} bytes)`, atInit.messagesSent === 0 && atInit.bytesSent === 0);
check(`no frame counted as sent when init returns (${atInit.perChannel.map((c) => c.sent).join(',')})`, atInit.perChannel.every((c) => c.sent === 0));
// A peer that returned from init first may have sent its first allreduce's messages already: at most log2(n) + 1.
check(`no more received when init returns than a first allreduce of the peers (${atInit.messagesReceived})`, atInit.messagesReceived <= Math.ceil(Math.log2(n)) + 1);

const sum = new Float64Array(1);
await world.Allreduce(Float64Array.of(me + 1), sum, MPI.SUM);
check(`Float64 SUM right after init: ${sum[0]}`, sum[0] === (n * (n + 1)) / 2);
const afterOne = MPI.stats();
// One short allreduce sends one message per step of recursive doubling, all 8 bytes.
const pof2 = 2 ** Math.floor(Math.log2(n));
const rem = n - pof2;
const steps = Math.log2(pof2);
const mySends = me < 2 * rem ? (me % 2 === 0 ? 1 : steps + 1) : steps;
check(`sent after one allreduce: ${afterOne.messagesSent} messages, ${afterOne.bytesSent} bytes, expected ${mySends}`, afterOne.messagesSent === mySends && afterOne.bytesSent === 8 * mySends);

const max = new Int32Array(2);
await world.Allreduce(Int32Array.of(me, -me), max, MPI.MAX);
check(`Int32 MAX: [${max.join(',')}]`, max[0] === n - 1 && max[1] === 0);
const fsum = new Float32Array(2);
await world.Allreduce(Float32Array.of(1, me), fsum, MPI.SUM);
check(`Float32 SUM: [${fsum.join(',')}]`, fsum[0] === n && fsum[1] === (n * (n - 1)) / 2);
await world.barrier();
const end = MPI.stats();
check(`sent counts the program's messages only (${end.messagesSent})`, end.messagesSent >= 3 * mySends && end.messagesSent <= 3 * mySends + 2 * n);
check(`received counts the program's messages only (${end.messagesReceived})`, end.messagesReceived >= 1 && end.messagesReceived <= 6 * n);
console.log(`coll-warm-up OK (rank ${me})`);
await MPI.finalize();
