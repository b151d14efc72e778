// Error handlers over real processes (issue 36), re-implementing the behaviour MPICH's test/mpi/errhan
// suite checks: ERRORS_RETURN is the default (the call throws / rejects), a user handler runs with the
// communicator and the error before the call throws (synchronous errors, rejected promises, a
// request's wait), callErrhandler invokes it, new communicators inherit it (errhandler on dup), it can
// be set back, predefined handlers cannot be freed, a freed user handler stays in force where set.
// With an argument 'fatal' or 'abort', rank 1 sets ERRORS_ARE_FATAL / ERRORS_ABORT and makes an error:
// the job must end naming the rank (checked by the test).
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const mode = process.argv[2] ?? 'handlers';

if (mode === 'fatal' || mode === 'abort') {
  const comm = await world.dup();
  if (rank === 1) {
    comm.setErrhandler(mode === 'fatal' ? MPI.ERRORS_ARE_FATAL : MPI.ERRORS_ABORT);
    equal(comm.getErrhandler(), mode === 'fatal' ? MPI.ERRORS_ARE_FATAL : MPI.ERRORS_ABORT, 'getErrhandler');
    console.log('errhandler about to fail');
    await comm.send(1, size + 5); // MPI_ERR_RANK: the handler ends the job here
    console.log('errhandler NOT REACHED');
  }
  await world.recv(MPI.ANY_SOURCE, 99); // the others wait; the job's end takes them down
}

equal(world.getErrhandler(), MPI.ERRORS_RETURN, 'ERRORS_RETURN is the default');
await throwsMPI(() => world.send(1, size), MPI.ERR_RANK, 'send', 'default: the call throws');

const seen: string[] = [];
const h = MPI.Errhandler.create((c, e) => { seen.push(`${(c as MPI.Comm).name}:${MPI.errorString(e.errorClass).split(':')[0]}:${e.call}`); });
const comm = await world.dup();
comm.name = 'errcomm';
comm.setErrhandler(h);
equal(comm.getErrhandler(), h, 'getErrhandler gives the handler set');

// synchronous argument errors, rejected promises, a collective's argument error
await throwsMPI(() => comm.send(1, size), MPI.ERR_RANK, 'send', 'a user handler runs, then the call throws');
await throwsMPI(() => comm.Send(new Int32Array(1), 0, -3), MPI.ERR_TAG, 'Send', 'tag error');
await throwsMPI(() => comm.bcast(1, size), MPI.ERR_ROOT, 'bcast', 'root error');
equal(seen, ['errcomm:MPI_ERR_RANK:send', 'errcomm:MPI_ERR_TAG:Send', 'errcomm:MPI_ERR_ROOT:bcast'], 'handler saw each error once, with the communicator');
seen.length = 0;

// an error found at completion: a receive truncated, seen by wait() of the request
const peer = rank ^ 1;
if (peer < size) {
  const req = comm.Irecv(new Int32Array(1), peer, 5);
  await comm.Send(new Int32Array(4), peer, 5);
  await throwsMPI(() => req.wait(), MPI.ERR_TRUNCATE, 'Irecv', 'truncation at wait');
  equal(seen, ['errcomm:MPI_ERR_TRUNCATE:Irecv'], 'the handler saw the request error');
  seen.length = 0;
  // the blocking form
  const p = comm.Recv(new Int32Array(1), peer, 6);
  await comm.Send(new Int32Array(4), peer, 6);
  await throwsMPI(() => p, MPI.ERR_TRUNCATE, 'Recv', 'truncation in Recv');
  equal(seen, ['errcomm:MPI_ERR_TRUNCATE:Recv'], 'the handler saw the blocking error');
  seen.length = 0;
}

// callErrhandler
comm.callErrhandler(MPI.ERR_OTHER);
equal(seen, ['errcomm:MPI_ERR_OTHER:Comm.callErrhandler'], 'callErrhandler runs the handler and returns');
seen.length = 0;
world.callErrhandler(MPI.ERR_OTHER); // ERRORS_RETURN: nothing
await throwsMPI(() => comm.callErrhandler(1.5), MPI.ERR_ARG, 'Comm.callErrhandler', 'errorClass not an integer');

// inheritance: a dup and a split of comm have the handler
const child = await comm.dup();
const half = await comm.split(rank % 2, rank);
equal([child.getErrhandler(), half!.getErrhandler()], [h, h], 'new communicators inherit the handler');
await throwsMPI(() => child.recv(size + 1), MPI.ERR_RANK, 'recv', 'child error');
equal(seen.length, 1, 'the inherited handler ran');
seen.length = 0;

// a handler that throws replaces the error
const throwing = MPI.Errhandler.create(() => { throw new Error('from the handler'); });
child.setErrhandler(throwing);
try {
  await child.send(0, size);
  check(false, 'send should have thrown');
} catch (e) {
  equal((e as Error).message, 'from the handler', 'the handler\'s exception replaces the error');
}

// freeing: the handler stays in force where set; predefined handlers cannot be freed
h.free();
await throwsMPI(() => comm.send(1, size), MPI.ERR_RANK, 'send', 'freed handler still set');
equal(seen.length, 1, 'a freed handler still runs where it is set');
const heir = await comm.dup();
equal(heir.getErrhandler(), h, 'a dup inherits a freed handler');
heir.free();
await throwsMPI(() => h.free(), MPI.ERR_ARG, 'Errhandler.free', 'double free');
await throwsMPI(() => MPI.ERRORS_RETURN.free(), MPI.ERR_ARG, 'Errhandler.free', 'free a predefined handler');
await throwsMPI(() => world.setErrhandler(h), MPI.ERR_ARG, 'Comm.setErrhandler', 'set a freed handler');
await throwsMPI(() => world.setErrhandler(null as unknown as MPI.Errhandler), MPI.ERR_ARG, 'Comm.setErrhandler', 'not a handler');
await throwsMPI(() => MPI.Errhandler.create(3 as unknown as MPI.ErrhandlerFn), MPI.ERR_ARG, 'Errhandler.create', 'not a function');

// back to ERRORS_RETURN: no handler runs
seen.length = 0;
comm.setErrhandler(MPI.ERRORS_RETURN);
await throwsMPI(() => comm.send(1, size), MPI.ERR_RANK, 'send', 'ERRORS_RETURN again');
equal(seen, [], 'no handler after ERRORS_RETURN');
// and traffic on a communicator with a handler works as before
half!.setErrhandler(MPI.ERRORS_ARE_FATAL);
equal(await half!.allreduce(1, MPI.SUM), half!.size, 'collective under ERRORS_ARE_FATAL');
for (const x of [comm, child, half!]) x.free();

console.log(`errhandler OK ${rank}`);
await MPI.finalize();
