// Every rank of a job exits with code 1 (exit-every-rank.it.test.ts): mpiexec must end the job at the first
// non-zero exit, never wait for --timeout. argv: STAGE [accept|connect DIR]
//   before-init    process.exit(1) before MPI.init
//   after-init     after MPI.init and a barrier
//   worker         an MPI.Worker thread (exit-every-rank-worker.ts) calls MPI.init and throws; nobody listens
//                  for its 'error', so the process ends with code 1 (Node's uncaught exception)
//   couple         the two jobs couple at a port from the main thread (A accepts: rank 0 writes DIR/port;
//                  B connects); then every rank of A exits 1 while B's ranks wait in a receive from A
//   couple-worker  the same coupling done by MPI.Worker threads (as couple-threads.ts); A's main threads then
//                  exit 1 while B's main threads wait in a receive from A on the intercommunicator
// The connecting job (B) must end too, on its own: its ranks lost A's (ERR_PROC_FAILED), not at --timeout.
import { once } from 'node:events';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check } from './check.ts';

const [stage, role, dir] = process.argv.slice(2);
const WORKER = new URL('./exit-every-rank-worker.ts', import.meta.url);
const coupling = stage === 'couple' || stage === 'couple-worker';
check(['before-init', 'after-init', 'worker', 'couple', 'couple-worker'].includes(stage ?? ''), 'usage: exit-every-rank.ts STAGE [accept|connect DIR]');
check(!coupling || ((role === 'accept' || role === 'connect') && dir !== undefined), 'usage: exit-every-rank.ts couple|couple-worker accept|connect DIR');

/** Writes `file` whole (aside, then renamed): a reader never sees it half written. */
function publish(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Accepts (A) or connects (B) over `comm`; the port travels in DIR/port. */
async function couple(comm: MPI.Comm): Promise<MPI.Intercomm> {
  const portFile = path.join(dir!, 'port');
  if (role === 'accept') {
    let port = '';
    if (comm.rank === 0) {
      port = await MPI.openPort();
      publish(portFile, port);
    }
    return comm.accept(port);
  }
  while (!existsSync(portFile)) await new Promise((r) => setTimeout(r, 20));
  return comm.connect(readFileSync(portFile, 'utf8'));
}

if (stage === 'before-init') process.exit(1);
await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
await world.barrier();
if (stage === 'after-init') process.exit(1);
if (stage === 'worker') {
  new MPI.Worker(WORKER, { workerData: { role: 'throw' } });
  await world.recv(MPI.ANY_SOURCE, 99); // nobody sends it: the thread's error ends this process first
  check(false, 'a receive nobody sent to returned');
}
let inter: MPI.Intercomm;
if (stage === 'couple') {
  inter = await couple(world);
} else {
  const comm = await world.dup();
  const coupler = new MPI.Worker(WORKER, { workerData: { role: 'couple', side: role, dir, comm } });
  const [m] = (await once(coupler, 'message')) as [{ inter: unknown }];
  inter = MPI.revive(m.inter) as MPI.Intercomm;
}
console.log(`exit-every-rank ${role} ${world.rank}: coupled`);
// Every rank of the job has said so before any exits (mpiexec ends the others at the first exit).
await world.barrier();
if (role === 'accept') process.exit(1);
await inter.recv(inter.rank, 99); // from A, which exits instead: ERR_PROC_FAILED ends this rank
check(false, 'a receive from an exited coupled process returned');
