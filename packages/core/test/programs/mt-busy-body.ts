// The busy thread's part of mt-busy.ts (main thread or worker).
import * as MPI from '@tsmpi/core';

export function busyReceives(world: MPI.Comm, peer: number): MPI.Request<void>[] {
  return Array.from({ length: 20 }, (_, i) => world.Irecv(new Int32Array(1), peer, 400 + i));
}

/** Computes for `ms` without entering MPI, then checks (without yielding) that every receive completed meanwhile. */
export function spinThenTest(reqs: MPI.Request<void>[], ms: number): boolean {
  const t0 = Date.now();
  let x = 0;
  while (Date.now() - t0 < ms) x += Math.sqrt(x + 1);
  const done = MPI.Request.testall(reqs);
  return done && reqs.every((r, i) => r.status!.tag === 400 + i) && x > 0;
}
