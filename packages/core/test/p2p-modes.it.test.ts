// The other send modes over real mpiexec jobs (issue 36; API.md "More point-to-point"): buffered
// sends bounded by the attached buffer, detach waiting, BsendInit, ready sends, SsendInit,
// SendrecvReplace / Isendrecv / IsendrecvReplace around a ring and across an intercommunicator,
// argument errors; and buffered sends from a worker thread and the main thread sharing the
// process's buffer.
// Also the cancel of sends (MPI 3.1 §3.8.4): unmatched ones cancelled, matched ones not; and
// partitioned communication (MPI 4.0 ch. 4) with worker threads filling the parts.
// testlist: p2p-modes np 2,3 inline, 4 threads, 3 refcount naive and gc; p2p-bsend-threads np 2 inline, 3 threads; p2p-cancel np 2 inline (single, and with a worker) and threads; p2p-part np 2 inline and threads
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || ok !== np) {
    throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

// A 4 KiB message goes by rendezvous under this limit, so a buffered send of it stays in flight until received.
const EAGER = ['--eager-limit', '1024'];

describe('send modes and combined send-receive', () => {
  it.each([
    [2, 'inline', 'default'],
    [3, 'inline', 'default'],
    [4, 'threads', 'default'],
    [3, 'inline', 'naive'],
    [3, 'inline', 'gc'],
  ])('np %i, progress %s, refcount %s', async (np, progress, refcount) => {
    const flags = ['--timeout', '100', ...EAGER, '--progress', progress, ...(refcount === 'default' ? [] : ['--refcount', refcount])];
    expectOk(await runJob(np, program('p2p-modes.ts'), { flags, killAfterMs: 120_000 }), 'p2p-modes OK', np);
  }, 130_000);
});

describe('buffered sends from two threads (one buffer per process)', () => {
  it.each([
    [2, 'inline'],
    [3, 'threads'],
  ])('np %i, progress %s', async (np, progress) => {
    const flags = ['--timeout', '100', ...EAGER, '--progress', progress];
    expectOk(await runJob(np, program('p2p-bsend-threads.ts'), { flags, killAfterMs: 120_000 }), 'p2p-bsend-threads OK', np);
  }, 130_000);
});

describe('cancel of sends (np 2)', () => {
  it.each([
    ['inline', 'single'],
    ['inline', 'worker'],
    ['threads', 'worker'],
  ])('progress %s, %s: an unmatched synchronous or rendezvous send is cancelled, a matched one is not', async (progress, mode) => {
    const flags = ['--timeout', '100', ...EAGER, '--progress', progress];
    const args = mode === 'worker' ? ['worker'] : [];
    expectOk(await runJob(2, program('p2p-cancel.ts'), { flags, args, killAfterMs: 120_000 }), 'p2p-cancel OK', 2);
  }, 130_000);
});

describe('partitioned communication (np 2)', () => {
  it.each(['inline', 'threads'])('progress %s: parts marked ready out of order and from worker threads, parrived, errors', async (progress) => {
    const flags = ['--timeout', '100', ...EAGER, '--progress', progress];
    expectOk(await runJob(2, program('p2p-part.ts'), { flags, killAfterMs: 120_000 }), 'p2p-part OK', 2);
  }, 130_000);
});
