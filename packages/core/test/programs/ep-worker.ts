// Worker of endpoints.ts: attaches to endpoint `index` of its clique and reports
// what each predefined communicator looks like from there, then exchanges with
// the same endpoint index of the other process over COMM_ENDPOINTS and within
// its own process over COMM_CLIQUE.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const { index } = MPI.workerData as { index: number };
const before = MPI.attachedEndpoint();
MPI.threadAttach(index);
const ep = MPI.attachedEndpoint();
const view = (c: MPI.Comm): [number, number] => [c.rank, c.size];
const report = {
  index, before, ep,
  world: view(MPI.COMM_WORLD), self: view(MPI.COMM_SELF), endpoints: view(MPI.COMM_ENDPOINTS), clique: view(MPI.COMM_CLIQUE),
  worldSendError: '',
  cross: -1, clique2: -1,
};
if (MPI.COMM_WORLD.rank === MPI.UNDEFINED) {
  try {
    await MPI.COMM_WORLD.send(1, 0);
  } catch (e) {
    report.worldSendError = `${(e as MPI.MPIError).errorClass}:${(e as MPI.MPIError).call}`;
  }
}
// Across processes: endpoint e talks to e +- J (same index in the other clique).
const J = MPI.COMM_CLIQUE.size;
const other = ep < J ? ep + J : ep - J;
const r = MPI.COMM_ENDPOINTS.irecv<number>(other, 5);
await MPI.COMM_ENDPOINTS.send(ep, other, 5);
report.cross = await r.wait();
// Within the clique: a ring over COMM_CLIQUE (never touches TCP).
const me = MPI.COMM_CLIQUE.rank;
const r2 = MPI.COMM_CLIQUE.irecv<number>((me + J - 1) % J, 6);
await MPI.COMM_CLIQUE.send(me, (me + 1) % J, 6);
report.clique2 = await r2.wait();
parentPort!.postMessage(report);
