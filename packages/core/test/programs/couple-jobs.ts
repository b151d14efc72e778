// Two separately started mpiexec jobs coupled at a port (issue 37; docs/adr/0043-connect-two-jobs.md).
// argv: accept DIR [MARKER] | connect DIR [MARKER] (MARKER: text in each point-to-point message, which a
// capture of the traffic looks for); both jobs need spare universe slots (TSMPI_UNIVERSE). The accepting
// job's rank 0 opens a port and writes it to DIR/port (aside, then renamed); every rank accepts. The
// connecting job first tries the port with its secret changed (ERR_PORT: the accepting job refuses the
// proof and goes on), then connects. On the intercommunicator: point-to-point both ways (a tag, and
// ANY_SOURCE with the status naming the sender), a bcast from the accepting group (MPI.ROOT), an
// allreduce, merge (the accepting group first) and an allreduce over it, then disconnect; each job then
// goes on alone (an allreduce over its COMM_WORLD) and ends 0.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const role = process.argv[2];
const dir = process.argv[3];
check(dir !== undefined && (role === 'accept' || role === 'connect'), 'usage: couple-jobs.ts accept|connect DIR');
const portFile = path.join(dir, 'port');
const marker = process.argv[4] ?? '';

async function waitFor(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
}

const isAccept = role === 'accept';
let inter: MPI.Intercomm;
if (isAccept) {
  let port = '';
  if (rank === 0) {
    port = await MPI.openPort();
    writeFileSync(`${portFile}.tmp`, port);
    renameSync(`${portFile}.tmp`, portFile);
  }
  inter = await world.accept(port);
  if (rank === 0) MPI.closePort(port);
} else {
  await waitFor(portFile);
  const port = readFileSync(portFile, 'utf8');
  const secret = port.slice(-32);
  const wrong = port.slice(0, -32) + (secret[0] === '0' ? '1' : '0') + secret.slice(1);
  await throwsMPI(() => world.connect(wrong, { info: new MPI.Info({ timeout: '20' }) }), MPI.ERR_PORT, 'Comm.connect', 'a wrong secret is refused');
  inter = await world.connect(port);
}
const remoteSize = inter.remoteSize;
const me = isAccept ? 'A' : 'B';
const other = isAccept ? 'B' : 'A';
// Point-to-point both ways: rank r sends to remote rank r with tag 7 (the jobs are the same size) and receives from ANY_SOURCE.
check(remoteSize === size, 'the two jobs are the same size');
const sent = inter.isend(`${marker}${me}${rank}`, rank, 7);
const st = new MPI.Status();
const got = await inter.recv(MPI.ANY_SOURCE, 7, st);
equal([got, st.source], [`${marker}${other}${rank}`, rank], 'a message from the other job, status.source its remote rank');
await sent.wait();
// A bcast from the accepting group's rank 0 to the connecting group.
if (isAccept) {
  const root = rank === 0 ? MPI.ROOT : MPI.PROC_NULL;
  await inter.bcast(rank === 0 ? { from: 'A', n: 42 } : null, root);
} else {
  const got = (await inter.bcast(null, 0)) as unknown as { from: string; n: number };
  equal(got.n, 42, 'bcast from the other job');
}
// Allreduce on an intercommunicator: each group gets the other group's sum.
const remoteSum = await inter.allreduce(isAccept ? 1 : 100, MPI.SUM) as number;
equal(remoteSum, isAccept ? 100 * remoteSize : remoteSize, 'intercomm allreduce gets the other group\'s sum');
const merged = inter.merge(!isAccept);
const m = await merged;
equal(m.size, size + remoteSize, 'merge holds both jobs');
equal(m.rank, isAccept ? rank : remoteSize + rank, 'merge puts the accepting group first');
equal(await m.allreduce(1, MPI.SUM), size + remoteSize, 'allreduce over the merged communicator');
m.free();
await inter.disconnect();
equal(await world.allreduce(rank, MPI.SUM), (size * (size - 1)) / 2, 'each job goes on alone');
console.log(`coupled OK ${me} ${rank}/${size}`);
await MPI.finalize();
