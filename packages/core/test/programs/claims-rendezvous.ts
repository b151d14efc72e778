// Rendezvous messages on a receive claim's socket (docs/adr/0023 step 2; receiveClaims on, 2
// processes, threads or inline progress). Rank 0's worker thread A claims (COMM_WORLD, tag 1) with
// its first receive. Rank 1's main thread sends message 0 (1 byte) by the engine, which starts its
// connection to A's claim socket, waits until that connection carries frames, then runs ahead with
// messages 1-15 at once: 256 KiB and 4 MiB ones (well above the 64 KiB eager limit: rendezvous,
// their request frame on the claim's socket) mixed with small eager ones and one at the limit and
// one byte past it. A takes messages 1-7 with blocking receives and posts 8-15 at once. Every
// message must arrive once, in order, with its length and every byte (a pattern of its number and
// the byte's offset), and the first frame of each of messages 1-15 must have been read on A's
// socket (its claimRouteStats), not handed over by the engine; the job ends normally.
import { once } from 'node:events';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { check, equal, until } from './check.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
/** The length of message i. */
const SIZES = [1, 256 * KiB, 3, 4 * MiB, 100, 256 * KiB, 64 * KiB + 1, 4 * MiB, 5, 256 * KiB, 1000, 4 * MiB, 64 * KiB, 256 * KiB, 2, 4 * MiB];
const N = SIZES.length;
/** Messages A takes one at a time with blocking receives; it posts the rest at once. */
const BLOCKING = 8;

/** Byte j of message i: its number and offset, with the offset's upper bits so that a shifted chunk shows. */
const byteOf = (i: number, j: number): number => (i * 131 + j * 7 + (j >>> 8) + (j >>> 16)) & 255;

function fill(i: number): Uint8Array {
  const b = new Uint8Array(SIZES[i]!);
  for (let j = 0; j < b.length; j++) b[j] = byteOf(i, j);
  return b;
}

/** Checks that `b` (of which `count` bytes were received) is message i, byte by byte. */
function expectMessage(i: number, b: Uint8Array, count: number): void {
  equal(count, SIZES[i], `A: message ${i}'s length (in the order sent)`);
  for (let j = 0; j < count; j++) if (b[j] !== byteOf(i, j)) check(false, `A: message ${i} byte ${j} is ${b[j]}, not ${byteOf(i, j)}`);
}

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const device = runtime('claims-rendezvous').device;
check(device.shared.claimRoutes !== null, 'claims have routes in this job (receiveClaims on)');
const biggest = Math.max(...SIZES);

if (!isMainThread) {
  const port = parentPort!;
  const first = new Uint8Array(biggest);
  const r0 = world.Irecv(first, 1, 1);
  equal(device.claimsHeld, 1, 'A holds the claim of tag 1');
  port.postMessage('posted');
  await r0.wait();
  expectMessage(0, first, r0.status!.getCount());
  for (let i = 1; i < BLOCKING; i++) {
    const b = new Uint8Array(biggest);
    expectMessage(i, b, (await world.Recv(b, 1, 1)).getCount());
  }
  const bufs = SIZES.slice(BLOCKING).map(() => new Uint8Array(biggest));
  const reqs = bufs.map((b) => world.Irecv(b, 1, 1));
  await MPI.Request.waitall(reqs);
  for (let k = 0; k < bufs.length; k++) expectMessage(BLOCKING + k, bufs[k]!, reqs[k]!.status!.getCount());
  equal(device.claimsHeld, 1, 'A still holds its claim (nothing gave it up)');
  // One frame per message on the socket: the eager frame or the rendezvous request (the data follows the receiver's answer by the engine path).
  equal(device.claimRouteStats.framesReceived, N - 1, 'A: the first frames of messages 1-15 came on its claim socket');
  port.postMessage('done');
} else {
  const ctl = await world.dup();
  if (world.rank === 0) {
    const worker = new MPI.Worker(new URL(import.meta.url));
    // Listened for from the start: the last message and the exit can come in one turn.
    const exited = once(worker, 'exit');
    equal((await once(worker, 'message'))[0], 'posted', 'handshake');
    await ctl.send('go', 1, 0);
    equal((await once(worker, 'message'))[0], 'done', 'A received everything');
    equal((await exited)[0], 0, 'A ended cleanly');
  } else {
    equal(await ctl.recv(0, 0), 'go', 'handshake');
    const messages = SIZES.map((_, i) => fill(i));
    const table = device.shared.claimRoutes!;
    await until(() => table.find(0, 0, (world as unknown as { _ctx: number })._ctx, 1) >= 0, 'rank 1: A\'s claim route never recorded');
    const reqs = [world.Isend(messages[0]!, 0, 1)];
    await until(() => device.claimRouteStats.ready >= 1, 'rank 1: the connection to A\'s claim socket never came up');
    // Runs ahead: every message sent before A takes any but the first.
    for (let i = 1; i < N; i++) reqs.push(world.Isend(messages[i]!, 0, 1));
    await MPI.Request.waitall(reqs);
    equal(device.claimRouteStats.framesSent, N - 1, 'rank 1: the first frames of messages 1-15 took A\'s claim route');
  }
  await world.barrier();
  if (world.rank === 0) console.log(`claims-rendezvous OK ${MPI.config().progress}`);
  await MPI.finalize();
}
