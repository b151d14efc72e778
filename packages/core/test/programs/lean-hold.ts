// The event-loop hold of receive lanes (setting lean=on, docs/adr/0020-lean-common-path.md step 3):
// a lane holds the loop once while it has posted receives, not once per receive. Rank 0 walks
// every way a lean receive leaves its lane (cancel, matched on arrival, matched from the
// unexpected FIFO at posting, moved by a demotion) and checks the device's count of held
// operations after each; then it waits for a message its peer sends a second later with nothing
// but the lane holding its loop, so a release too many makes it exit before the message comes
// (no OK line), a release too few shows in the count.
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const dev = runtime('lean-hold').device;
const bytes = (v: number): Uint8Array => new Uint8Array([v]);

function check(what: string, ok: boolean): void {
  if (!ok) throw new Error(`lean-hold: ${what} (held operations ${dev.heldOperations()}, lane state ${dev.laneState(world.contextId)})`);
}

await world.barrier(); // every connection is up; the barrier's own operations are done
if (world.rank === 0) {
  const base = dev.heldOperations();
  // 1. cancel
  const a = world.Irecv(new Uint8Array(1), 1, 1);
  check('the first lean receive makes the context LEAN', dev.laneState(world.contextId) === 1);
  check('a posted lean receive holds the loop once', dev.heldOperations() === base + 1);
  a.cancel();
  await a.wait();
  check('cancel completes the receive', a.status!.cancelled);
  check('cancel of the last posted receive releases the lane hold', dev.heldOperations() === base);
  // 2. two posted receives matched on arrival
  const b = [world.Irecv(new Uint8Array(1), 1, 2), world.Irecv(new Uint8Array(1), 1, 3)];
  check('two posted lean receives hold the loop once', dev.heldOperations() === base + 1);
  world.Isend(bytes(0), 1, 10);
  await MPI.Request.waitall(b);
  check('the lane releases its hold when its last posted receive matches', dev.heldOperations() === base);
  // 3. one matched from the unexpected FIFO at posting: rank 1 sends tag 4, then tag 9
  world.Isend(bytes(0), 1, 11);
  await world.Recv(new Uint8Array(1), 1, 9);
  check('nothing is held once the signal arrived', dev.heldOperations() === base);
  const c = world.Irecv(new Uint8Array(1), 1, 4);
  check('a receive matched at posting is complete and holds nothing', c.status !== null && dev.heldOperations() === base);
  // 4. a message sent a second later, awaited with nothing but the lane holding the loop
  world.Isend(bytes(0), 1, 13);
  await world.Recv(new Uint8Array(1), 1, 5);
  check('the late message released the hold', dev.heldOperations() === base);
  // 5. a demotion moves a posted receive: it holds the loop as a general one, the lane's hold goes
  const d = world.Irecv(new Uint8Array(1), 1, 7);
  world.iprobe(1, 99);
  check('the probe demoted the context', dev.laneState(world.contextId) === 2);
  check('the moved receive holds the loop once', dev.heldOperations() === base + 1);
  world.Isend(bytes(0), 1, 12);
  await d.wait();
  check('the moved receive released its hold', dev.heldOperations() === base);
  console.log('lean-hold OK (rank 0)');
} else {
  await world.Recv(new Uint8Array(1), 0, 10);
  world.Isend(bytes(2), 0, 2);
  world.Isend(bytes(3), 0, 3);
  await world.Recv(new Uint8Array(1), 0, 11);
  world.Isend(bytes(4), 0, 4);
  world.Isend(bytes(9), 0, 9);
  await world.Recv(new Uint8Array(1), 0, 13);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  world.Isend(bytes(5), 0, 5);
  await world.Recv(new Uint8Array(1), 0, 12);
  world.Isend(bytes(7), 0, 7);
  console.log('lean-hold OK (rank 1)');
}
await MPI.finalize();
