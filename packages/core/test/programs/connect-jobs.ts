// Two separately started mpiexec jobs and a port (issue 37, "coupling two jobs"; docs/adr/0043-connect-two-jobs.md).
// argv: accept DIR | connect DIR. The accepting job's rank 0 opens a port and writes it to DIR/port
// (written aside, then renamed, so the other job never reads half of it); every rank accepts at it.
// The connecting job reads DIR/port and connects: two jobs do not connect yet, so its connect is
// ERR_PORT from Comm.connect naming the port and saying it is another job's; its rank 0 then writes
// DIR/refused. The accepting job's rank 0 sees that file and closes the port: its waiting accept
// is ERR_PORT at every rank, and the job goes on (an allreduce over its COMM_WORLD) and ends 0.
// The accepting job also connects to a port of its own that nobody accepts at, with info timeout
// 1 s: ERR_PORT from Comm.connect after the timeout (MPICH's behaviour); a timeout "soon" is ERR_INFO_VALUE.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const role = process.argv[2];
const dir = process.argv[3];
check(dir !== undefined && (role === 'accept' || role === 'connect'), 'usage: connect-jobs.ts accept|connect DIR');
const portFile = path.join(dir, 'port');
const refusedFile = path.join(dir, 'refused');

/** Resolves once `file` exists (polled every 20 ms); the test's kill timer bounds the wait. */
async function waitFor(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
}

if (role === 'accept') {
  let port = '';
  if (rank === 0) {
    port = await MPI.openPort();
    writeFileSync(`${portFile}.tmp`, port);
    renameSync(`${portFile}.tmp`, portFile);
    // Closes the port once the other job was refused: the accept below then fails at every rank.
    void waitFor(refusedFile).then(() => MPI.closePort(port));
  }
  await throwsMPI(() => world.accept(port), MPI.ERR_PORT, 'Comm.accept', 'accept at a port closed while waiting');
  equal(await world.allreduce(rank, MPI.SUM), (size * (size - 1)) / 2, 'the accepting job goes on after its port closed');
  // A connect at an open port with no accept gives up after its info timeout (as MPICH's); a bad timeout is refused.
  const lonely = rank === 0 ? await MPI.openPort() : '';
  await throwsMPI(() => world.connect(lonely, { info: new MPI.Info({ timeout: '1' }) }), MPI.ERR_PORT, 'Comm.connect', 'a connect with no accept times out');
  await throwsMPI(() => world.connect(lonely, { info: new MPI.Info({ timeout: 'soon' }) }), MPI.ERR_INFO_VALUE, 'Comm.connect', 'a timeout that is not seconds');
  if (rank === 0) MPI.closePort(lonely);
  console.log(`accept closed OK ${rank}/${size}`);
} else {
  await waitFor(portFile);
  const port = readFileSync(portFile, 'utf8');
  let message = '';
  await throwsMPI(async () => {
    try {
      await world.connect(port);
    } catch (e) {
      message = (e as Error).message;
      throw e;
    }
  }, MPI.ERR_PORT, 'Comm.connect', 'connect to another job\'s port');
  check(message.includes(port) && message.includes('another mpiexec job'), `the error names the port and says it is another job's: ${message}`);
  await world.barrier();
  if (rank === 0) writeFileSync(refusedFile, 'refused');
  console.log(`connect refused OK ${rank}/${size}`);
}
await MPI.finalize();
