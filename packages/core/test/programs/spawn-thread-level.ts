// A parent and the child it spawns at different thread levels (argv: the parent's level, the child's,
// the child's progress or 'auto', then 'child' in the child). Progress auto is threads at 'multiple',
// else inline, but a spawned process's follows its parents' (config/job-env.ts parentProgress): an
// inline process and one with channel engines cannot connect. A child that sets another progress
// itself gets, as its parent does, an MPIError naming the mismatch (runtime/peer-address.ts).
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

const [parentLevel, childLevel, childProgress, role] = process.argv.slice(2) as [MPI.ThreadLevel, MPI.ThreadLevel, string, string | undefined];
if (role === 'child' && childProgress !== 'auto') process.env['TSMPI_PROGRESS'] = childProgress;
await MPI.init({ threadLevel: role === 'child' ? childLevel : parentLevel });
const parent = MPI.getParent();
if (parent !== null) {
  await parent.send({ progress: MPI.config().progress }, 0, 1);
  await parent.disconnect();
} else {
  const children = await MPI.COMM_WORLD.spawn(process.argv[1]!, [parentLevel, childLevel, childProgress, 'child'], 1);
  const got = (await children.recv(0, 1)) as { progress: string };
  equal(got.progress, MPI.config().progress, 'the child runs its parent\'s progress');
  await children.disconnect();
  console.log(`spawn thread levels OK ${MPI.config().progress}`);
}
await MPI.finalize();
