// Concurrent spawns from different processes (issue 37): every rank of the job calls
// COMM_SELF.spawn at the same moment, so mpiexec starts several worlds whose process numbers
// and addresses interleave; each world must come up from its own processes' addresses (a world
// never waits for, nor reads, another world's). Rank r spawns r+1 children, each child answers
// its parent and allreduces over the merged communicator; then the worlds of ranks 0 and 1 meet
// at a port published by rank 0's children (one world reaches another whose numbers may be
// lower or higher than its own), and every rank spawns again at once (a second interleaving).
// argv: [role]: the parents' run (default), or 'child' / 'child-port-accept' / 'child-port-connect'.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const me = process.argv[1]!;
const role = process.argv[2] ?? 'parents';
const parent = MPI.getParent();

/** A child's side: a message from its one parent, an answer, an allreduce over the merged communicator. */
async function childExchange(p: MPI.Intercomm): Promise<number> {
  const got = (await p.recv(0, 7)) as { to: number; parentRank: number };
  equal(got.to, rank, 'child: the message is for this rank');
  await p.send({ from: rank, world: size }, 0, 8);
  const merged = await p.merge(true);
  equal(merged.size, size + 1, 'child: merged size');
  equal(await merged.allreduce(1, MPI.SUM), size + 1, 'child: allreduce over the merged communicator');
  merged.free();
  return got.parentRank;
}

const SIBLINGS = 'tsmpi-test-concurrent-siblings';

if (role.startsWith('child')) {
  check(parent !== null, 'a spawned process has a parent');
  equal(parent.remoteSize, 1, 'child: spawned from COMM_SELF, one parent');
  const parentRank = await childExchange(parent);
  if (role === 'child-port-accept' || role === 'child-port-connect') {
    // The worlds of parents 0 and 1 meet at a port: whichever got the lower process numbers.
    let inter: MPI.Intercomm;
    if (role === 'child-port-accept') {
      const port = rank === 0 ? await MPI.openPort() : '';
      if (rank === 0) await MPI.publishName(SIBLINGS, port);
      inter = await world.accept(port);
      if (rank === 0) {
        await MPI.unpublishName(SIBLINGS, port);
        MPI.closePort(port);
      }
    } else {
      let port: string | null = null;
      // The accepting world publishes when its init is done: ask until it did (a deadlock guard bounds it).
      const giveUp = Date.now() + 60_000;
      while (port === null) {
        try {
          port = await MPI.lookupName(SIBLINGS);
        } catch (e) {
          check(e instanceof MPI.MPIError && e.errorClass === MPI.ERR_NAME && Date.now() < giveUp, `lookupName: ${String(e)}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      inter = await world.connect(port);
    }
    const expected = role === 'child-port-accept' ? 2 : 1;
    equal(inter.remoteSize, expected, 'siblings: the other world\'s size');
    const sum = await inter.allreduce(rank + 10 * (parentRank + 1), MPI.SUM);
    // The remote group's values: parent 1's two children send 20, 21; parent 0's one child sends 10.
    equal(sum, role === 'child-port-accept' ? 41 : 10, 'siblings: allreduce across the two worlds');
    await inter.disconnect();
  }
  await parent.disconnect();
  console.log(`concurrent child OK ${role} ${parentRank}:${rank}/${size}`);
} else {
  equal(parent, null, 'getParent is null in a job started by mpiexec');
  /** The parent's side with `n` children of `childRole`, spawned by this rank alone. */
  async function spawnAndExchange(n: number, childRole: string): Promise<void> {
    const inter = await MPI.COMM_SELF.spawn(me, [childRole], n);
    equal(inter.remoteSize, n, 'parent: the children are the remote group');
    for (let i = 0; i < n; i++) await inter.send({ to: i, parentRank: rank }, i, 7);
    const from = new Set<number>();
    for (let i = 0; i < n; i++) {
      const m = (await inter.recv(MPI.ANY_SOURCE, 8)) as { from: number; world: number };
      equal(m.world, n, 'parent: the children\'s world size');
      from.add(m.from);
    }
    equal(from.size, n, 'parent: every child answered');
    const merged = await inter.merge(false);
    equal(merged.size, n + 1, 'parent: merged size');
    equal(await merged.allreduce(1, MPI.SUM), n + 1, 'parent: allreduce over the merged communicator');
    merged.free();
    await inter.disconnect();
  }
  // Everyone starts its spawn at once (the barrier lines them up).
  await world.barrier();
  const portRole = rank === 0 ? 'child-port-accept' : rank === 1 ? 'child-port-connect' : 'child';
  await spawnAndExchange(rank + 1, portRole);
  await world.barrier();
  await spawnAndExchange(size - rank, 'child');
  console.log(`concurrent parent OK ${rank}/${size}`);
}
await MPI.finalize();
