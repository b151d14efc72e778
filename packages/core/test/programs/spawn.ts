// Dynamic processes (issue 37), MPICH test/mpi/spawn re-implemented from its descriptions: the
// parents spawn 2 then 4 children of this same program (spawn1, spawninfo1), exchange messages
// with them over the intercommunicator, merge it and allreduce (spawnintra), then disconnect
// (disconnect); spawnMultiple with two commands and APPNUM (spawnmult2); getParent is null at the
// top (spawn1); accept/connect between the parents and a spawned world through a published name
// (namepub, spawnconnaccept); the bad arguments.
// argv: [role]: the parents' run ('all', 'parent-throw', 'parent-hang'), or a child's: 'child', 'multi', 'port', 'throw', 'hang'.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const me = process.argv[1]!;
const role = process.argv[2] ?? 'all';
const parent = MPI.getParent();

/** The exchange every spawned world does with its parents: each child gets one message from parent rank 0 and answers it. */
async function childExchange(p: MPI.Intercomm): Promise<void> {
  const got = (await p.recv(0, 7)) as { to: number; parents: number };
  equal(got.to, rank, 'child: the message is for this rank');
  await p.send({ from: rank, world: size }, 0, 8);
  const merged = await p.merge(true);
  equal(merged.size, size + got.parents, 'child: merged size');
  equal(await merged.allreduce(1, MPI.SUM), merged.size, 'child: allreduce over the merged communicator');
  merged.free();
}

if (role === 'child') {
  check(parent !== null, 'a spawned process has a parent');
  equal(parent.remoteSize > 0, true, 'child: the parents are the remote group');
  equal(world.getAttr(MPI.APPNUM), 0, 'child: APPNUM of spawn');
  await childExchange(parent);
  await parent.disconnect();
  console.log(`spawn child OK ${rank}/${size}`);
} else if (role === 'multi') {
  check(parent !== null, 'spawnMultiple: a parent');
  const appnum = world.getAttr(MPI.APPNUM) as number;
  equal(appnum, rank === 0 ? 0 : 1, 'spawnMultiple: APPNUM follows the command order');
  equal(process.argv[3], appnum === 0 ? 'first' : 'second', 'spawnMultiple: each command has its own args');
  await childExchange(parent);
  await parent.disconnect();
  console.log(`spawn multi OK ${rank}/${size}`);
} else if (role === 'port') {
  // A spawned world connects to the port its parents published under a name.
  check(parent !== null, 'port child: a parent');
  await childExchange(parent);
  const port = await MPI.lookupName('tsmpi-test-ocean');
  const inter = await world.connect(port);
  equal(inter.remoteSize, parent.remoteSize, 'connect: the acceptors are the parents');
  equal(await inter.allreduce(rank + 100, MPI.SUM), ((parent.remoteSize - 1) * parent.remoteSize) / 2, 'connect: allreduce sees the acceptors\' ranks');
  await inter.disconnect();
  await parent.disconnect();
  console.log(`spawn port OK ${rank}/${size}`);
} else if (role === 'parent-throw') {
  // The parents of a world whose rank 1 throws: the job ends with the usual failure line.
  const inter = await world.spawn(me, ['throw'], 2);
  await inter.recv(0, 99);
} else if (role === 'parent-hang' || role === 'hang') {
  // Everyone waits for a message nobody sends: mpiexec's --timeout roll-call lists parents and children.
  const inter = role === 'hang' ? parent! : await world.spawn(me, ['hang'], 2);
  await inter.recv(0, 99);
} else if (role === 'throw') {
  check(parent !== null, 'throwing child: a parent');
  if (rank === 1) throw new Error('spawned child 1 fails on purpose');
  await parent.recv(0, 99); // never sent: the job ends first
} else {
  equal(parent, null, 'getParent is null in a job started by mpiexec');
  const universe = world.getAttr(MPI.UNIVERSE_SIZE) as number;
  check(universe >= size + 2 + 4 + 2 + 2, `UNIVERSE_SIZE ${universe} leaves room for the children`);

  /** Spawns `n` children of `childRole` (or takes an intercomm made otherwise) and does the parents' side of the exchange. */
  async function parentExchange(inter: MPI.Intercomm, n: number): Promise<void> {
    equal(inter.remoteSize, n, 'parents: the children are the remote group');
    if (rank === 0) {
      for (let i = 0; i < n; i++) await inter.send({ to: i, parents: size }, i, 7);
      const from = new Set<number>();
      for (let i = 0; i < n; i++) {
        const m = (await inter.recv(MPI.ANY_SOURCE, 8)) as { from: number; world: number };
        equal(m.world, n, 'parents: the children\'s world size');
        from.add(m.from);
      }
      equal(from.size, n, 'parents: every child answered');
    }
    const merged = await inter.merge(false);
    equal(merged.size, size + n, 'parents: merged size');
    equal(merged.rank, rank, 'parents: the low group comes first');
    equal(await merged.allreduce(1, MPI.SUM), size + n, 'parents: allreduce over the merged communicator');
    merged.free();
  }

  for (const n of [2, 4]) {
    const inter = await world.spawn(me, ['child'], n);
    await parentExchange(inter, n);
    await inter.disconnect();
  }

  // The last rank is the root: the other ranks' commands are not significant (an empty list here).
  const multi = await world.spawnMultiple(rank === size - 1 ? [
    { command: me, args: ['multi', 'first'], maxprocs: 1 },
    { command: me, args: ['multi', 'second'], maxprocs: 1 },
  ] : [], { root: size - 1 });
  await parentExchange(multi, 2);
  await multi.disconnect();

  // Ports and names: the parents accept at a published port, the spawned world connects.
  const port = rank === 0 ? await MPI.openPort() : '';
  if (rank === 0) await MPI.publishName('tsmpi-test-ocean', port);
  const kids = await world.spawn(me, ['port'], 2);
  await parentExchange(kids, 2);
  const inter = await world.accept(port);
  equal(inter.remoteSize, 2, 'accept: the connectors are the spawned world');
  equal(await inter.allreduce(rank, MPI.SUM), 100 + 101, 'accept: allreduce sees the connectors\' values');
  await inter.disconnect();
  await kids.disconnect();
  if (rank === 0) {
    await MPI.unpublishName('tsmpi-test-ocean', port);
    await throwsMPI(() => MPI.lookupName('tsmpi-test-ocean'), MPI.ERR_NAME, 'MPI.lookupName', 'an unpublished name');
    await throwsMPI(() => MPI.unpublishName('tsmpi-test-ocean', port), MPI.ERR_SERVICE, 'MPI.unpublishName', 'unpublish twice');
    MPI.closePort(port);
    await throwsMPI(() => MPI.closePort(port), MPI.ERR_PORT, 'MPI.closePort', 'close a port twice');
  }
  // Errors at the root reach every rank of the spawning communicator.
  await throwsMPI(() => world.connect('tsmpi-port:not-a-port'), MPI.ERR_PORT, 'Comm.connect', 'a made-up port');
  await throwsMPI(() => world.spawn(me, ['child'], universe + 1), MPI.ERR_SPAWN, 'Comm.spawn', 'maxprocs above UNIVERSE_SIZE');
  await throwsMPI(() => world.spawn(me, ['child'], 0), MPI.ERR_SPAWN, 'Comm.spawn', 'maxprocs 0');
  await throwsMPI(() => world.spawn(me, ['child'], universe - size), MPI.ERR_SPAWN, 'Comm.spawn', 'maxprocs above the free slots');
  await throwsMPI(() => world.spawn('/no/such/program.js', [], 1), MPI.ERR_SPAWN, 'Comm.spawn', 'a command that does not exist');
  await throwsMPI(() => world.spawn(me, [], 1, { root: size }), MPI.ERR_ROOT, 'Comm.spawn', 'root out of range');
  console.log(`spawn OK ${rank}/${size}`);
}
await MPI.finalize();
