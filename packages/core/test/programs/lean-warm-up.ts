// Init's warm-up of the lean path (setting leanWarmup, packages/core/src/api/lean-warm-up.ts): each
// rank has exchanged messages with its ring neighbours before init returns, on tag 0 of COMM_WORLD and
// on its collective context. The program does the same at once: an allreduce, then K messages on
// tag 0 to its right neighbour, which may still be receiving its own warm-up from this rank. Every
// message must reach the program's receives in order with its contents, and MPI.stats must count
// the program's messages only: nothing sent when init returns, and no more than the program's own
// messages (and at least those it waited for) after the exchange.
import * as MPI from '@tsmpi/core';

const K = 40;
await MPI.init();
const world = MPI.COMM_WORLD;
const me = world.rank;
const n = world.size;
const left = (me + n - 1) % n;
const right = (me + 1) % n;

function check(what: string, ok: boolean): void {
  if (!ok) throw new Error(`lean-warm-up (rank ${me}): ${what}`);
}

const atInit = MPI.stats();
check(`nothing sent when init returns (sent ${atInit.messagesSent}, ${atInit.bytesSent} bytes)`, atInit.messagesSent === 0 && atInit.bytesSent === 0);
check(`no frame counted as sent when init returns (${atInit.perChannel.map((c) => c.sent).join(',')})`, atInit.perChannel.every((c) => c.sent === 0));
check(`no more received when init returns than the left neighbour sends after its init (${atInit.messagesReceived})`, atInit.messagesReceived <= K + 4 * n);

const sum = new Float64Array(1);
await world.Allreduce(Float64Array.of(me + 1), sum, MPI.SUM);
check(`allreduce right after init: ${sum[0]}`, sum[0] === (n * (n + 1)) / 2);

const sends: MPI.Request<void>[] = [];
for (let k = 0; k < K; k++) sends.push(world.Isend(Uint8Array.of(me, k, 7, 7, 7, 7, 7, 7), right, 0));
const bufs = Array.from({ length: K }, () => new Uint8Array(8));
await MPI.Request.waitall([...bufs.map((b) => world.Irecv(b, left, 0)), ...sends]);
bufs.forEach((b, k) => check(`message ${k} from ${left}: [${b.join(',')}]`, b[0] === left && b[1] === k && b[7] === 7));

// The counts of the program's own messages: K and the allreduce's few each way; the warm-up's
// 200 x 13 would show above the bound, a discount too many below it (received counts a message on
// arrival, so messages of a neighbour that runs ahead may be in it: hence a range, not a number).
const after = MPI.stats();
check(`sent counts the program's messages only (${after.messagesSent})`, after.messagesSent > K && after.messagesSent <= K + 50);
check(`received counts the program's messages only (${after.messagesReceived})`, after.messagesReceived > K && after.messagesReceived <= K + 50);
await world.barrier();
console.log(`lean-warm-up OK (rank ${me})`);
await MPI.finalize();
