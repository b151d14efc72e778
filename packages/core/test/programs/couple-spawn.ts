// Spawn in a job after it coupled with another, and a coupling after that spawn (issue 37;
// docs/adr/0043-connect-two-jobs.md, "Spawn after a coupling"). argv: accept DIR | connect DIR | child DIR.
// Job A (accept) opens a port (DIR/port), couples with job B (connect), then spawns one child (C, this program,
// role child): C joins job A. B opens a second port (DIR/port-b) at which C connects, so C and B couple too.
// Messages then cross every pair of groups: A and B (each rank r with remote rank r, both ways), A and C (every
// parent with the child, both ways, and an allreduce over the parent intercommunicator), C and B (the child with
// every rank of B, both ways, and an allreduce over their intercommunicator). Every group disconnects each
// intercommunicator, goes on alone (an allreduce over its COMM_WORLD) and ends 0. Universe slots: A needs
// 2 + 2 (B) + 1 (C) = 5, B needs 2 + 2 (A) + 1 (C) = 5; C's coupling with B takes 2 more of A's: 7 for A.
// With a 4th argument `fail` (every role gets it): C exits with code 1 after its messages with B (once B's rank 0
// says every rank of B is past them), before MPI.finalize. B's next call with C is ERR_PROC_FAILED naming C as job A's process 2 (B prints it and exits
// 3); job A ends as for any spawned process that fails (its mpiexec names C).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const role = process.argv[2];
const dir = process.argv[3];
check(dir !== undefined && (role === 'accept' || role === 'connect' || role === 'child'), 'usage: couple-spawn.ts accept|connect|child DIR');
const portFile = path.join(dir, 'port');
const portBFile = path.join(dir, 'port-b');
const isFail = process.argv[4] === 'fail';

async function waitFor(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
}

function publish(file: string, port: string): void {
  writeFileSync(`${file}.tmp`, port);
  renameSync(`${file}.tmp`, file);
}

/** Every process of this group sends `${me}${rank}` to every remote process (tag 9) and checks what each sent it. */
async function exchange(inter: MPI.Intercomm, me: string, other: string): Promise<void> {
  const sends = Array.from({ length: inter.remoteSize }, (_, r) => inter.isend(`${me}${rank}>${r}`, r, 9));
  for (let r = 0; r < inter.remoteSize; r++) equal(await inter.recv(r, 9), `${other}${r}>${rank}`, `a message from ${other}${r}`);
  for (const s of sends) await s.wait();
}

if (role === 'child') {
  // C: a process of job A, spawned after A coupled with B.
  const parent = MPI.getParent();
  check(parent !== null && size === 1, 'the child has its parents');
  await exchange(parent!, 'C', 'A');
  equal(await parent!.allreduce(1000, MPI.SUM), 2, 'allreduce with the parents: their sum');
  await waitFor(portBFile);
  const toB = await world.connect(readFileSync(portBFile, 'utf8'));
  await exchange(toB, 'C', 'B');
  // Fails only once every rank of B is past the messages (B's rank 0 says so after a barrier of B's).
  if (isFail) {
    await toB.recv(0, 10);
    process.exit(1);
  }
  equal(await toB.allreduce(1000, MPI.SUM), 200, 'allreduce with job B: its sum');
  await toB.disconnect();
  await parent!.disconnect();
  console.log('couple-spawn OK C 0/1');
} else if (role === 'accept') {
  let port = '';
  if (rank === 0) {
    port = await MPI.openPort();
    publish(portFile, port);
  }
  const toB = await world.accept(port);
  if (rank === 0) MPI.closePort(port);
  const toC = await world.spawn(process.argv[1]!, ['child', dir, ...(isFail ? ['fail'] : [])], 1);
  equal(toC.remoteSize, 1, 'one child');
  await exchange(toB, 'A', 'B');
  await exchange(toC, 'A', 'C');
  equal(await toC.allreduce(1, MPI.SUM), 1000, 'allreduce with the child: its value');
  await toB.disconnect();
  await toC.disconnect();
  console.log(`couple-spawn OK A ${rank}/${size}`);
} else {
  await waitFor(portFile);
  const toA = await world.connect(readFileSync(portFile, 'utf8'));
  let portB = '';
  if (rank === 0) {
    portB = await MPI.openPort();
    publish(portBFile, portB);
  }
  await exchange(toA, 'B', 'A');
  const toC = await world.accept(portB);
  if (rank === 0) MPI.closePort(portB);
  await exchange(toC, 'B', 'C');
  if (isFail) {
    await world.barrier();
    if (rank === 0) await toC.send('go', 0, 10);
    try {
      await toC.allreduce(100, MPI.SUM);
      check(false, 'an allreduce with a failed process must fail');
    } catch (e) {
      console.log(`couple-spawn B ${rank}: ${(e as Error).message}`);
      process.exit(3);
    }
  }
  equal(await toC.allreduce(100, MPI.SUM), 1000, 'allreduce with the child: its value');
  await toC.disconnect();
  await toA.disconnect();
  console.log(`couple-spawn OK B ${rank}/${size}`);
}
equal(await world.allreduce(rank, MPI.SUM), (size * (size - 1)) / 2, 'each group goes on alone');
await MPI.finalize();
