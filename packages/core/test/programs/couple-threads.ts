// Two separately started mpiexec jobs coupled from MPI.Worker threads (issue 37; docs/adr/0043-connect-two-jobs.md).
// argv: accept|connect DIR ok|fail; both jobs at threadLevel 'multiple' with spare universe slots (TSMPI_UNIVERSE).
// In each process the main thread starts a first MPI.Worker ('coupler', couple-threads-worker.ts) with a dup of
// COMM_WORLD: in the accepting job its rank 0 opens a port and writes it to DIR/port, and the coupler threads
// accept over the dup; in the connecting job they connect (their main threads carry the requests to mpiexec:
// runtime/dynamic-relay.ts). The couplers exchange a message each way, a bcast from the accepting group and an
// allreduce over the intercommunicator, hand it to their main thread (postMessage) and end. The main thread then
// starts a second MPI.Worker ('user') with the intercommunicator in its workerData: it was started after the
// coupling, so it learns the other job's processes from its boot record.
// 'ok': the user threads exchange messages both ways, merge (the accepting group first) and allreduce over the
// merge, then disconnect from the worker thread (the release reaches every thread and engine); each job then
// goes on alone (an allreduce over COMM_WORLD) and prints "couple-threads OK ROLE RANK/SIZE".
// 'fail': the accepting job's user threads post a receive from the connecting job's rank 1 and write
// DIR/A-in-RANK; the connecting job's rank 1 then throws (its job ends). The blocked receive must end with an
// MPIError of class ERR_PROC_FAILED: the thread prints "couple-threads A RANK thread: CLASS: MESSAGE" and the main
// thread, once both accepting processes wrote DIR/A-failed-RANK, rethrows it (the job ends as any job whose rank
// lost a peer).
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const [role, dir, mode] = process.argv.slice(2);
check(dir !== undefined && (role === 'accept' || role === 'connect') && (mode === 'ok' || mode === 'fail'), 'usage: couple-threads.ts accept|connect DIR ok|fail');
const WORKER = new URL('./couple-threads-worker.ts', import.meta.url);

/** A worker's one report; its error (a failed check) rejects, so the rank exits non-zero. */
async function report(w: MPI.Worker): Promise<{ done: string; inter?: unknown; error?: string }> {
  const [m] = (await once(w, 'message')) as [{ done: string; inter?: unknown; error?: string }];
  return m;
}

const comm = await world.dup();
const coupler = new MPI.Worker(WORKER, { workerData: { role: 'coupler', side: role, dir, comm } });
// Listened for from the start: the thread may end right after its report, before a later once() would listen.
const couplerEnded = once(coupler, 'exit');
const coupled = await report(coupler);
equal(coupled.done, 'coupled', 'the coupler thread coupled');
const inter = MPI.revive(coupled.inter) as MPI.Intercomm;
await couplerEnded;
const user = new MPI.Worker(WORKER, { workerData: { role: 'user', side: role, dir, mode, inter } });
if (mode === 'fail' && role === 'connect') {
  // Rank 1 fails once the accepting job's user threads wait for it; rank 0 waits in a barrier its job never ends.
  if (rank === 1) {
    while (![0, 1].every((r) => existsSync(path.join(dir, `A-in-${r}`)))) await new Promise((r) => setTimeout(r, 20));
    throw new Error('coupled process fails on purpose');
  }
  await world.barrier();
}
const used = await report(user);
if (used.error !== undefined) {
  // Both accepting processes' threads report before either ends: a process that ended first would close its
  // connections, and the other's thread, still waiting for the failure's word, could fail for that loss instead.
  writeFileSync(path.join(dir, `A-failed-${rank}`), '');
  while (![0, 1].every((r) => existsSync(path.join(dir, `A-failed-${r}`)))) await new Promise((r) => setTimeout(r, 20));
  throw new Error(used.error);
}
equal(used.done, 'used', 'the user thread used the intercommunicator');
comm.free();
equal(await world.allreduce(rank, MPI.SUM), (size * (size - 1)) / 2, 'each job goes on alone');
console.log(`couple-threads OK ${role === 'accept' ? 'A' : 'B'} ${rank}/${size}`);
await MPI.finalize();
