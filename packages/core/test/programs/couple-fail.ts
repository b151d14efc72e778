// A process of a coupled job dies (issue 37; docs/adr/0043-connect-two-jobs.md, "failures"): two
// mpiexec jobs couple at a port as couple-jobs.ts does (A accepts, B connects; the port travels in
// DIR/port). argv: accept DIR MODE | connect DIR MODE; MODE 'talked': each rank of A and its
// counterpart in B exchange one message first (they hold a connection), 'silent': no traffic crosses
// before the failure ('talked': A's receive below is posted before B's rank 1 learns it may fail;
// 'silent': B's rank 1 fails once A's ranks wrote DIR/A-in-RANK, past their accept).
// Then B's rank 1 throws (its job ends, as any failed job does), and every rank of
// A waits for a message from its counterpart in B that never comes: the receive must end with an
// MPIError of class ERR_PROC_FAILED naming the peer (never a hang). A's ranks print the error and
// rethrow it (the default error handler's end).
// MODE 'disconnected': they talk, then both groups disconnect (A's ranks then write DIR/A-out-RANK);
// B's rank 1 throws once both of A's files exist. A's ranks wait until both of B's processes are gone
// (their pids, in DIR/B-pid-RANK), and 2 s more for anything that would wrongly reach them, then go on
// (a barrier over their COMM_WORLD) and end 0: after a disconnect B's failure is no failure of A.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank } = world;
const [role, dir, mode] = process.argv.slice(2);
check(dir !== undefined && (role === 'accept' || role === 'connect') && (mode === 'talked' || mode === 'silent' || mode === 'disconnected'), 'usage: couple-fail.ts accept|connect DIR talked|silent|disconnected');
const portFile = path.join(dir, 'port');

/** Writes `file` whole (aside, then renamed): a reader never sees it half written. */
function publish(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

/** Whether process `pid` is gone (its mpiexec reaped it). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

if (role === 'connect') publish(path.join(dir, `B-pid-${rank}`), String(process.pid));

let inter: MPI.Intercomm;
if (role === 'accept') {
  let port = '';
  if (rank === 0) {
    port = await MPI.openPort();
    writeFileSync(`${portFile}.tmp`, port, { mode: 0o600 });
    renameSync(`${portFile}.tmp`, portFile);
  }
  inter = await world.accept(port);
  if (rank === 0) MPI.closePort(port);
} else {
  while (!existsSync(portFile)) await new Promise((r) => setTimeout(r, 20));
  inter = await world.connect(readFileSync(portFile, 'utf8'));
}
/** A's receive from its counterpart, posted before B fails ('talked': A then says so, and B's rank 1 fails only after). */
let pending: MPI.Request<unknown> | null = null;
if (mode === 'talked' || mode === 'disconnected') {
  const sent = inter.isend(`hello from ${role} ${rank}`, rank, 7);
  await inter.recv(rank, 7);
  await sent.wait();
  if (mode === 'disconnected') {
    // Nothing pending: the disconnect below is legal.
  } else if (role === 'accept') {
    pending = inter.irecv(rank, 9);
    await inter.send('posted', rank, 8);
  } else {
    await inter.recv(rank, 8);
  }
}
if (mode === 'disconnected') {
  await inter.disconnect();
  if (role === 'accept') {
    publish(path.join(dir, `A-out-${rank}`), '');
    const pidFiles = [0, 1].map((r) => path.join(dir, `B-pid-${r}`));
    await waitFor(() => pidFiles.every((f) => existsSync(f) && isGone(Number(readFileSync(f, 'utf8')))));
    await new Promise((r) => setTimeout(r, 2000));
    await world.barrier();
    console.log(`couple-fail A ${rank}: went on after B failed`);
  } else {
    if (rank === 1) {
      await waitFor(() => [0, 1].every((r) => existsSync(path.join(dir, `A-out-${r}`))));
      throw new Error('coupled process fails on purpose');
    }
    await world.barrier(); // never completes: rank 1 fails, and B's mpiexec stops this rank
  }
} else if (role === 'connect') {
  // 'silent': A's ranks are past their accept (DIR/A-in-RANK) before rank 1 fails, so the failure reaches their receive.
  if (mode === 'silent') await waitFor(() => [0, 1].every((r) => existsSync(path.join(dir, `A-in-${r}`))));
  await world.barrier();
  if (rank === 1) throw new Error('coupled process fails on purpose');
  await inter.recv(rank, 9); // never sent: its job ends first
} else {
  const receive = pending ?? inter.irecv(rank, 9);
  if (mode === 'silent') publish(path.join(dir, `A-in-${rank}`), '');
  try {
    await receive.wait();
    check(false, 'a receive from a failed coupled process returned');
  } catch (e) {
    check(e instanceof MPI.MPIError, `not an MPIError: ${String(e)}`);
    console.log(`couple-fail A ${rank}: ${MPI.errorString(e.errorClass)}: ${e.message}`);
    throw e;
  }
}
await MPI.finalize();
