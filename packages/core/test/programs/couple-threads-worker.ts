// Worker of couple-threads.ts. Roles:
//   coupler  accepts (rank 0 opens the port and writes DIR/port) or connects over the communicator in its
//            workerData, sends its rank to the same remote rank and receives the other's (tag 7), a bcast
//            from the accepting group and an allreduce over the intercommunicator; reports { done: 'coupled', inter }.
//   user     started after the coupling with the intercommunicator in its workerData. 'ok': messages both
//            ways (tag 8), merge (accepting group first) and an allreduce over it, disconnect; reports
//            { done: 'used' }. 'fail' in the accepting job: a receive from the other job's rank 1 (tag 9),
//            DIR/A-in-RANK written once it is posted; it must end with ERR_PROC_FAILED: the thread prints it
//            and reports { done: 'failed', error }.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const data = MPI.workerData as { role: string; side: string; dir: string; mode?: string; comm?: MPI.Comm; inter?: MPI.Intercomm };
const isAccept = data.side === 'accept';
const me = isAccept ? 'A' : 'B';
const portFile = path.join(data.dir, 'port');

/** Writes `file` whole (aside, then renamed): a reader never sees it half written. */
function publish(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

if (data.role === 'coupler') {
  const comm = data.comm!;
  let inter: MPI.Intercomm;
  if (isAccept) {
    let port = '';
    if (comm.rank === 0) {
      port = await MPI.openPort();
      publish(portFile, port);
    }
    inter = await comm.accept(port);
    if (comm.rank === 0) MPI.closePort(port);
  } else {
    while (!existsSync(portFile)) await new Promise((r) => setTimeout(r, 20));
    inter = await comm.connect(readFileSync(portFile, 'utf8'));
  }
  const r = inter.rank;
  check(inter.remoteSize === inter.size, 'the two jobs are the same size');
  const sent = inter.isend(`${me}${r}`, r, 7);
  equal(await inter.recv(r, 7), `${isAccept ? 'B' : 'A'}${r}`, 'coupler: a message from the other job');
  await sent.wait();
  if (isAccept) await inter.bcast(r === 0 ? { n: 42 } : null, r === 0 ? MPI.ROOT : MPI.PROC_NULL);
  else equal(((await inter.bcast(null, 0)) as unknown as { n: number }).n, 42, 'coupler: bcast from the accepting group');
  equal(await inter.allreduce(isAccept ? 1 : 100, MPI.SUM), isAccept ? 100 * inter.remoteSize : inter.remoteSize, 'coupler: intercomm allreduce');
  parentPort!.postMessage(MPI.dehydrate({ done: 'coupled', inter }));
} else {
  const inter = data.inter!;
  const r = inter.rank;
  if (data.mode === 'ok') {
    const sent = inter.isend({ from: me, r }, r, 8);
    equal(await inter.recv(r, 8), { from: isAccept ? 'B' : 'A', r }, 'user: a message from the other job');
    await sent.wait();
    const merged = await inter.merge(!isAccept);
    const total = inter.size + inter.remoteSize;
    equal(merged.rank, isAccept ? r : inter.remoteSize + r, 'user: merge puts the accepting group first');
    equal(await merged.allreduce(1, MPI.SUM), total, 'user: allreduce over the merged communicator');
    merged.free();
    await inter.disconnect();
    parentPort!.postMessage({ done: 'used' });
  } else if (isAccept) {
    const receive = inter.irecv(1, 9);
    publish(path.join(data.dir, `A-in-${r}`), '');
    try {
      await receive.wait();
      check(false, 'a receive from a failed coupled process returned');
    } catch (e) {
      check(e instanceof MPI.MPIError, `not an MPIError: ${String(e)}`);
      const line = `couple-threads A ${r} thread: ${MPI.errorString(e.errorClass)}: ${e.message}`;
      console.log(line);
      parentPort!.postMessage({ done: 'failed', error: line });
    }
  } else {
    // The connecting job's rank 0 in 'fail': it never hears back; its job ends when rank 1 fails.
    await inter.recv(0, 10);
  }
}
