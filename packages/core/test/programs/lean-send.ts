// The lean send (docs/adr/0020-lean-common-path.md) interleaved with every kind of
// send that takes the general path, to the same rank with the same tag: MPI's order must hold
// across the two paths, probes see lean messages, MPI.stats counts them, bad arguments still
// raise the general path's MPIError, and a send to this rank itself still arrives. Run with 2
// processes, in inline progress (the lean route) and threads progress (a user thread's direct
// route: every send takes the general path); the same program must pass both ways.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank } = world;
const ROUNDS = 60;
const TAG = 5;
/** Larger than the default eagerLimit (64 KiB): a rendezvous, always the general path. */
const BIG = 100_000;

/** The kinds of send of one round, in order; the receiver posts the matching kind in the same order. */
const KINDS = ['lean', 'float64', 'object', 'ssend', 'empty', 'buffer', 'big'] as const;

if (rank === 0) {
  const sent0 = MPI.stats().messagesSent;
  const reqs: MPI.Request<void>[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const kind of KINDS) {
      switch (kind) {
        case 'lean': reqs.push(world.Isend(Uint8Array.of(i, 1, 2, 3), 1, TAG)); break;
        case 'float64': reqs.push(world.Isend(Float64Array.of(i + 0.5), 1, TAG)); break;
        case 'object': reqs.push(world.isend({ i }, 1, TAG)); break;
        case 'ssend': reqs.push(world.Issend(Uint8Array.of(i, 9), 1, TAG)); break;
        case 'empty': reqs.push(world.Isend(new Uint8Array(0), 1, TAG)); break;
        case 'buffer': reqs.push(world.Isend(Buffer.from([i, 7, 7]), 1, TAG)); break;
        case 'big': reqs.push(world.Isend(new Uint8Array(BIG).fill(i), 1, TAG)); break;
      }
    }
  }
  await MPI.Request.waitall(reqs);
  equal(MPI.stats().messagesSent - sent0, ROUNDS * KINDS.length, 'every send is counted once');
  // Bad arguments of a would-be lean send raise the general path's errors.
  await throwsMPI(() => world.Isend(new Uint8Array(1), 1, -5), MPI.ERR_TAG, 'Isend', 'negative tag');
  await throwsMPI(() => world.Isend(new Uint8Array(1), 2, 0), MPI.ERR_RANK, 'Isend', 'rank out of range');
  await throwsMPI(() => world.Isend(new Uint8Array(1), 0.5, 0), MPI.ERR_RANK, 'Isend', 'fractional rank');
  // A lean-shaped send to this rank itself takes the local path and arrives.
  const self = new Uint8Array(2);
  const selfRecv = world.Irecv(self, 0, 8);
  await world.Isend(Uint8Array.of(4, 2), 0, 8).wait();
  await selfRecv.wait();
  equal(Array.from(self), [4, 2], 'a send to this rank itself');
} else {
  for (let i = 0; i < ROUNDS; i++) {
    for (const kind of KINDS) {
      // Probe before some receives: the probed message is the next one in order.
      if (i % 10 === 0) {
        const st = await world.probe(0, TAG);
        const expected = { lean: 4, float64: 8, object: -1, ssend: 2, empty: 0, buffer: 3, big: BIG }[kind];
        if (expected >= 0) equal(st.getCount(), expected, `probe of round ${i} ${kind}`);
      }
      switch (kind) {
        case 'lean': {
          const b = new Uint8Array(4);
          const st = await world.Recv(b, 0, TAG);
          equal([Array.from(b), st.source, st.tag, st.getCount()], [[i, 1, 2, 3], 0, TAG, 4], `round ${i} lean`);
          break;
        }
        case 'float64': {
          const b = new Float64Array(1);
          await world.Recv(b, 0, TAG);
          equal(b[0], i + 0.5, `round ${i} float64`);
          break;
        }
        case 'object': equal(await world.recv(0, TAG), { i }, `round ${i} object`); break;
        case 'ssend': {
          const b = new Uint8Array(2);
          await world.Recv(b, MPI.ANY_SOURCE, TAG);
          equal(Array.from(b), [i, 9], `round ${i} ssend`);
          break;
        }
        case 'empty': equal((await world.Recv(new Uint8Array(8), 0, MPI.ANY_TAG)).getCount(), 0, `round ${i} empty`); break;
        case 'buffer': {
          const b = new Uint8Array(3);
          await world.Recv(b, 0, TAG);
          equal(Array.from(b), [i, 7, 7], `round ${i} buffer`);
          break;
        }
        case 'big': {
          const b = new Uint8Array(BIG);
          await world.Recv(b, 0, TAG);
          check(b[0] === i && b[BIG - 1] === i, `round ${i} big`);
          break;
        }
      }
    }
  }
}
await world.barrier();
console.log(`lean-send OK rank ${rank}`);
await MPI.finalize();
