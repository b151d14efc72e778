// mpiexec -n 2 --endpoints 3: the four predefined communicators seen from every
// endpoint, threadAttach errors, and traffic between endpoints.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { equal, throwsMPI } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const P = MPI.COMM_WORLD.size;
const J = MPI.config().endpoints;
const rank = MPI.COMM_WORLD.rank;
equal([P, J], [2, 3], 'job shape');
equal(MPI.attachedEndpoint(), rank * J, 'the main thread starts on endpoint 0 of its process');
equal([MPI.COMM_ENDPOINTS.size, MPI.COMM_ENDPOINTS.rank], [P * J, rank * J], 'COMM_ENDPOINTS from endpoint 0');
equal([MPI.COMM_CLIQUE.size, MPI.COMM_CLIQUE.rank], [J, 0], 'COMM_CLIQUE from endpoint 0');
// threadAttach errors: an endpoint of the other process, a rank out of range.
await throwsMPI(() => MPI.threadAttach(((rank + 1) % P) * J, MPI.COMM_ENDPOINTS), MPI.ERR_ENDPOINTS, 'threadAttach', 'endpoint of another process');
await throwsMPI(() => MPI.threadAttach(J), MPI.ERR_RANK, 'threadAttach', 'rank beyond the clique');
equal(MPI.attachedEndpoint(), rank * J, 'a failed attach leaves the thread where it was');

const workers = Array.from({ length: J }, (_, index) => new MPI.Worker(new URL('./ep-worker.ts', import.meta.url), { workerData: { index } }));
const reports = (await Promise.all(workers.map((w) => once(w, 'message')))).map(([m]) => m as Record<string, unknown>);
for (const r of reports) {
  const i = r.index as number;
  const ep = rank * J + i;
  equal([r.before, r.ep], [rank * J, ep], `thread ${i}: starts on its parent's endpoint, then attaches`);
  equal(r.endpoints, [ep, P * J], `thread ${i}: COMM_ENDPOINTS rank and size`);
  equal(r.clique, [i, J], `thread ${i}: COMM_CLIQUE rank and size`);
  equal(r.self, [0, 1], `thread ${i}: COMM_SELF`);
  equal(r.world, i === 0 ? [rank, P] : [MPI.UNDEFINED, P], `thread ${i}: COMM_WORLD`);
  equal(r.worldSendError, i === 0 ? '' : `${MPI.ERR_COMM}:send`, `thread ${i}: communication on COMM_WORLD`);
  equal(r.cross, ep < J ? ep + J : ep - J, `thread ${i}: message from the other process's endpoint`);
  equal(r.clique2, (i + J - 1) % J, `thread ${i}: ring within the clique`);
}
await MPI.COMM_WORLD.barrier();
if (rank === 0) console.log(`endpoints OK ${JSON.stringify(MPI.config())}`);
await MPI.finalize();
