// Every error class of the foundation: before init, bad arguments, after finalize.
import * as MPI from '@tsmpi/core';
import { equal, throwsMPI } from './check.ts';

const world = MPI.COMM_WORLD;
await throwsMPI(() => world.send(1, 0), MPI.ERR_OTHER, 'send', 'send before init');
await throwsMPI(() => world.rank, MPI.ERR_OTHER, 'Comm.rank', 'rank before init');

await MPI.init();
await throwsMPI(() => MPI.init(), MPI.ERR_OTHER, 'init', 'second init');
const size = world.size;
await throwsMPI(() => world.send(1, size), MPI.ERR_RANK, 'send', 'dest = size');
await throwsMPI(() => world.isend(1, -5), MPI.ERR_RANK, 'isend', 'negative dest');
await throwsMPI(() => world.Send(new Uint8Array(1), 1.5), MPI.ERR_RANK, 'Send', 'fractional dest');
await throwsMPI(() => world.recv(size + 3), MPI.ERR_RANK, 'recv', 'source out of range');
await throwsMPI(() => world.send(1, 0, -1), MPI.ERR_TAG, 'send', 'negative tag on send');
await throwsMPI(() => world.send(1, 0, MPI.TAG_UB + 1), MPI.ERR_TAG, 'send', 'tag above TAG_UB');
await throwsMPI(() => world.Irecv(new Uint8Array(1), 0, -7), MPI.ERR_TAG, 'Irecv', 'bad receive tag');
await throwsMPI(() => world.Send([new Float64Array(2), 3, MPI.FLOAT64], 0), MPI.ERR_COUNT, 'Send', 'count beyond buffer');
await throwsMPI(() => world.Send([new Float64Array(2), -1, MPI.FLOAT64], 0), MPI.ERR_COUNT, 'Send', 'negative count');
await throwsMPI(() => world.Send(null as never, 0), MPI.ERR_BUFFER, 'Send', 'missing buffer');
await throwsMPI(() => world.Recv('text' as never, 0), MPI.ERR_BUFFER, 'Recv', 'not a buffer');
await throwsMPI(() => world.bcast(1, size), MPI.ERR_ROOT, 'bcast', 'root out of range');
await throwsMPI(() => world.allreduce(1, 'sum' as never), MPI.ERR_OP, 'allreduce', 'not an op');
await throwsMPI(() => world.free(), MPI.ERR_COMM, 'Comm.free', 'freeing COMM_WORLD');
await throwsMPI(() => world.compare(null as never), MPI.ERR_COMM, 'Comm.compare', 'null communicator');
await throwsMPI(() => MPI.COMM_SELF.free(), MPI.ERR_COMM, 'Comm.free', 'freeing COMM_SELF');
// The message style: class, call, argument, value, what is allowed.
let message = 'nothing was thrown';
try {
  await world.send(1, 7 + size);
} catch (e) {
  message = (e as Error).message;
}
equal(message, `MPI_ERR_RANK: send: dest ${7 + size} is out of range for COMM_WORLD (size ${size}): expected 0..${size - 1} or PROC_NULL`, 'message text');
equal(MPI.errorString(MPI.ERR_TRUNCATE), 'MPI_ERR_TRUNCATE: message truncated', 'errorString');
// Nothing was corrupted by the failed calls: the job still communicates.
equal(await world.allreduce(1, MPI.SUM), size, 'allreduce after errors');
await MPI.finalize();
await throwsMPI(() => world.send(1, 0), MPI.ERR_OTHER, 'send', 'send after finalize');
await throwsMPI(() => world.barrier(), MPI.ERR_OTHER, 'barrier', 'barrier after finalize');
equal(MPI.isFinalized(), true, 'isFinalized');
console.log(`errors OK ${process.env.TSMPI_RANK ?? 0}`);
