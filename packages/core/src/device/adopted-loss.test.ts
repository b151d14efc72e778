// A worker thread's device that lost a process fails the whole process; the main thread's device,
// at its next send, fails for that same loss, and its hook (the main thread's report to mpiexec,
// runtime/bootstrap.ts) hears which process it was (device-wiring.ts #adoptLoss). Without it the
// main thread's call failed with "the process is failing" and mpiexec, told of no lost peer, could
// blame this rank for the other's failure (a fault-matrix job under CI's load did so once). The main
// thread also watches for such a loss (SharedState.watchLost), for when it makes no MPI call.
import { afterEach, expect, it } from 'vitest';
import { ERR_PROC_FAILED } from '../util/index.ts';
import type { ForeignPeer } from '../transport/index.ts';
import { destroySimulated, done, send, simulatedProcesses } from './loopback-job.test-util.ts';

afterEach(destroySimulated);

it('the main thread\'s device adopts a worker thread\'s lost process: its hook hears it once, its send names it', async () => {
  const job = await simulatedProcesses([{ user: 'direct' }, {}]);
  const main = job.main[0]!;
  const user = job.user[0]!;
  const heard: (number | null)[] = [];
  main.onFatal = (_err, lost) => heard.push(lost);
  // The user thread's device loses process 1 (here as a coupled job's mpiexec would report it: the
  // same fatal path as a closed connection), and the main thread's device has seen nothing of it.
  user.coupled.add(new Map([[1, { theirProcess: 0 } as ForeignPeer]]));
  expect(user.coupled.fail(1, 'process 1 failed, its mpiexec says')).toBe(true);
  expect(main.shared.lostProcess()).toBe(1);
  expect(heard).toEqual([]);
  const first = await done(send(main, 0, 1, 5, new Uint8Array(8)));
  expect(first.error?.errorClass).toBe(ERR_PROC_FAILED);
  expect(first.error?.message).toContain('another thread of this process lost the connection to process 1');
  expect(heard).toEqual([1]);
  const second = await done(send(main, 0, 1, 5, new Uint8Array(8)));
  expect(second.error?.errorClass).toBe(ERR_PROC_FAILED);
  expect(heard).toEqual([1]); // its own failure now: told once
});

it('the main thread hears a worker thread\'s lost process without an MPI call of its own (SharedState.watchLost)', async () => {
  const job = await simulatedProcesses([{ user: 'direct' }, {}]);
  const user = job.user[0]!;
  const heard = new Promise<number>((resolve) => job.main[0]!.shared.watchLost(resolve));
  user.coupled.add(new Map([[1, { theirProcess: 0 } as ForeignPeer]]));
  user.coupled.fail(1, 'process 1 failed, its mpiexec says');
  expect(await heard).toBe(1);
});
