// publishName / lookupName between two mpiexec jobs through tsmpi-nameserver (issue 37;
// docs/adr/0046-name-server-between-jobs.md). Every job runs with mpiexec --nameserver FILE.
// argv: MODE DIR SERVICE, MODE one of
//   publish   rank 0 opens a port and publishes it as SERVICE (a second publish is ERR_SERVICE; another
//             name published and unpublished, unpublished twice ERR_SERVICE); every rank accepts; then
//             point-to-point both ways over the intercommunicator and disconnect. It does not unpublish
//             SERVICE: the name goes when its mpiexec's link closes.
//   lookup    rank 0 looks SERVICE up until it is published (ERR_NAME before), tries to unpublish and
//             to publish it (ERR_SERVICE both: another job's name); every rank connects; the same exchange.
//   gone      SERVICE is not published (ERR_NAME): its publishing job ended.
//   stopped   publishes SERVICE, writes DIR/ready, waits for DIR/stopped (the test stopped the server):
//             publishName and unpublishName are then ERR_SERVICE, lookupName ERR_NAME; no call hangs.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const [mode, dir, service] = process.argv.slice(2);
check(dir !== undefined && service !== undefined, 'usage: name-jobs.ts publish|lookup|gone|stopped DIR SERVICE');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Point-to-point both ways: rank r sends to remote rank r and receives from ANY_SOURCE. */
async function exchange(inter: MPI.Intercomm, me: string, other: string): Promise<void> {
  check(inter.remoteSize === size, 'the two jobs are the same size');
  const sent = inter.isend(`${me}${rank}`, rank, 7);
  const st = new MPI.Status();
  equal([await inter.recv(MPI.ANY_SOURCE, 7, st), st.source], [`${other}${rank}`, rank], 'a message from the other job');
  await sent.wait();
  await inter.disconnect();
}

if (mode === 'publish') {
  let port = '';
  if (rank === 0) {
    port = await MPI.openPort();
    await MPI.publishName(service, port);
    await throwsMPI(() => MPI.publishName(service, port), MPI.ERR_SERVICE, 'MPI.publishName', 'a second publish of a name');
    await MPI.publishName(`${service}-other`, port);
    await MPI.unpublishName(`${service}-other`, port);
    await throwsMPI(() => MPI.unpublishName(`${service}-other`, port), MPI.ERR_SERVICE, 'MPI.unpublishName', 'an unpublish of a name no longer published');
  }
  const inter = await world.accept(port);
  if (rank === 0) MPI.closePort(port);
  await exchange(inter, 'A', 'B');
  console.log(`names OK publish ${rank}/${size}`);
} else if (mode === 'lookup') {
  let port = '';
  if (rank === 0) {
    // The publishing job starts at the same time: ERR_NAME until it published (bounded: a deadlock guard, not a timing).
    const giveUp = Date.now() + 60_000;
    for (;;) {
      try {
        port = await MPI.lookupName(service);
        break;
      } catch (e) {
        check(e instanceof MPI.MPIError && e.errorClass === MPI.ERR_NAME, `lookupName before the publish: ERR_NAME, got ${String(e)}`);
        check(Date.now() < giveUp, 'the name was not published within 60 s');
        await sleep(50);
      }
    }
    await throwsMPI(() => MPI.unpublishName(service, port), MPI.ERR_SERVICE, 'MPI.unpublishName', 'unpublish of another job\'s name');
    await throwsMPI(() => MPI.publishName(service, port), MPI.ERR_SERVICE, 'MPI.publishName', 'publish over another job\'s name');
  }
  port = (await world.bcast(port, 0)) as string;
  const inter = await world.connect(port);
  await exchange(inter, 'B', 'A');
  console.log(`names OK lookup ${rank}/${size}`);
} else if (mode === 'gone') {
  if (rank === 0) await throwsMPI(() => MPI.lookupName(service), MPI.ERR_NAME, 'MPI.lookupName', 'a name whose job ended');
  console.log(`names OK gone ${rank}/${size}`);
} else if (mode === 'stopped') {
  if (rank === 0) {
    const port = await MPI.openPort();
    await MPI.publishName(service, port);
    writeFileSync(path.join(dir, 'ready'), '');
    const giveUp = Date.now() + 60_000;
    while (!existsSync(path.join(dir, 'stopped'))) {
      check(Date.now() < giveUp, 'the test did not stop the server within 60 s');
      await sleep(20);
    }
    await throwsMPI(() => MPI.publishName(`${service}-2`, port), MPI.ERR_SERVICE, 'MPI.publishName', 'publish with the server gone');
    await throwsMPI(() => MPI.unpublishName(service, port), MPI.ERR_SERVICE, 'MPI.unpublishName', 'unpublish with the server gone');
    await throwsMPI(() => MPI.lookupName(service), MPI.ERR_NAME, 'MPI.lookupName', 'lookup with the server gone');
    MPI.closePort(port);
  }
  console.log(`names OK stopped ${rank}/${size}`);
} else {
  check(false, `unknown mode ${String(mode)}`);
}
await MPI.finalize();
