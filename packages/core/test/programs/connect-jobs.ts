// Two separately started mpiexec jobs and a port (issue 37, "coupling two jobs"; docs/adr/0043-connect-two-jobs.md):
// the refusals. argv: accept DIR | connect DIR. The accepting job's rank 0 opens a port and writes it to
// DIR/port (mode 0600: the port string is a capability, its owner protects it) and, to DIR/public, what
// anyone may learn of it: the same string with another secret (the job tag and the address are not secret).
// Every rank accepts at the port. The connecting job reads DIR/public and connects: the accepting mpiexec
// refuses the proof, so its connect is ERR_PORT from Comm.connect naming the port; its rank 0 then writes
// DIR/refused. The accepting job's rank 0 sees that file and closes the port: its waiting accept is
// ERR_PORT at every rank, and the job goes on (an allreduce over its COMM_WORLD) and ends 0.
// The accepting job also connects to a port of its own that nobody accepts at, with info timeout
// 1 s: ERR_PORT from Comm.connect after the timeout (MPICH's behaviour); a timeout "soon" is ERR_INFO_VALUE.
// Role `mixed` (a connecting job run with --secure at a port of a job without, or the other way round): it reads
// DIR/port, the real port, and its connect is ERR_PORT saying that both jobs must run with --secure or both
// without; the accepting job then goes on as above. No error text holds the port's secret.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const role = process.argv[2];
const dir = process.argv[3];
check(dir !== undefined && (role === 'accept' || role === 'connect' || role === 'mixed'), 'usage: connect-jobs.ts accept|connect|mixed DIR');
const portFile = path.join(dir, 'port');
const publicFile = path.join(dir, 'public');
const refusedFile = path.join(dir, 'refused');

/** Resolves once `file` exists (polled every 20 ms); the test's kill timer bounds the wait. */
async function waitFor(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
}

if (role === 'accept') {
  let port = '';
  if (rank === 0) {
    port = await MPI.openPort();
    writeFileSync(portFile, port, { mode: 0o600 });
    const secret = port.slice(-32);
    writeFileSync(`${publicFile}.tmp`, port.slice(0, -32) + (secret[0] === 'f' ? '0' : 'f') + secret.slice(1), { mode: 0o644 });
    renameSync(`${publicFile}.tmp`, publicFile);
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
  const isMixed = role === 'mixed';
  await waitFor(publicFile);
  const port = readFileSync(isMixed ? portFile : publicFile, 'utf8');
  let message = '';
  await throwsMPI(async () => {
    try {
      await world.connect(port);
    } catch (e) {
      message = (e as Error).message;
      throw e;
    }
  }, MPI.ERR_PORT, 'Comm.connect', 'connect to another job\'s port with a wrong secret');
  const publicPart = port.slice(0, -33);
  check(message.includes(publicPart) && !message.includes(port.slice(-32)), `the error names the port without its secret: ${message}`);
  if (isMixed) check(/must both run with --secure \(or both without\)|run both with --secure, or both without/.test(message), `the error says why: ${message}`);
  else check(message.includes('refused the port'), `the error says the port was refused: ${message}`);
  await world.barrier();
  if (rank === 0) writeFileSync(refusedFile, 'refused');
  console.log(`connect refused OK ${rank}/${size}`);
}
await MPI.finalize();
