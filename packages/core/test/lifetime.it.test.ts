// Object lifetime (issue 13, papers/refcount-gc.txt): objects freed while
// operations on them are pending, in every reference-counting strategy and
// both progress modes, through real mpiexec jobs.
// testlist: lifetime-reuse np 2; lifetime-free np 2; lifetime-errors np 2; lifetime-stale np 1; lifetime-threads np 2; worker-ids np 1; abort-worker np 2
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

const MODES = [
  ['naive', 'inline'],
  ['predefined', 'inline'],
  ['gc', 'inline'],
  ['naive', 'threads'],
  ['predefined', 'threads'],
  ['gc', 'threads'],
] as const;

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string): void {
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

const BASELINE = { comm: 4, group: 4, datatype: 11, request: 0, op: 12 };

/** The liveObjects every rank logged after finalize's collection (--log-level debug), by rank. */
function finalizeLiveObjects(stderr: string): Map<number, { liveObjects: unknown; gcCycles: number }> {
  const out = new Map<number, { liveObjects: unknown; gcCycles: number }>();
  for (const line of stderr.split('\n')) {
    if (!line.includes('finalize: objects after the last collection')) continue;
    const rec = JSON.parse(line.slice(line.indexOf('{'))) as { rank: number; liveObjects: unknown; gcCycles: number };
    out.set(rec.rank, rec);
  }
  return out;
}

describe.each(MODES)('lifetime (--refcount %s --progress %s)', (refcount, progress) => {
  const modeFlags = ['--refcount', refcount, '--progress', progress];
  const flags = [...modeFlags, '--timeout', '60'];

  it('keeps a freed communicator\'s context id while a receive on it is pending (the issue\'s reproducer)', async () => {
    expectOk(await runJob(2, program('lifetime-reuse.ts'), { flags }), `lifetime-reuse OK (refcount ${refcount})`);
  }, 90_000);

  it('completes operations pending on a freed communicator, datatype, op and group while new ones are created at once; back to the baseline after finalize', async () => {
    const r = await runJob(2, program('lifetime-free.ts'), { flags: [...flags, '--log-level', 'debug', '--log-format', 'json'] });
    expectOk(r, `lifetime-free OK (refcount ${refcount}`);
    const logged = finalizeLiveObjects(r.stderr);
    expect([...logged.keys()].sort()).toEqual([0, 1]);
    for (const rec of logged.values()) expect(rec.liveObjects).toEqual(BASELINE);
  }, 90_000);

  it('a request that fails to start (ERR_NO_MEM: every request slot in use) leaves nothing live: its references, its live count, its hold on the event loop', async () => {
    const r = await runJob(2, program('lifetime-errors.ts'), { flags: [...flags, '--env', 'TSMPI_REQUEST_SLOTS=200', '--log-level', 'debug', '--log-format', 'json'] });
    expectOk(r, `lifetime-errors OK (refcount ${refcount}, rank 0)`);
    const logged = finalizeLiveObjects(r.stderr);
    expect([...logged.keys()].sort()).toEqual([0, 1]);
    for (const rec of logged.values()) expect(rec.liveObjects).toEqual(BASELINE);
  }, 90_000);

  it('a communicator and datatype freed in the main thread: the worker\'s revived wrappers throw ERR_COMM / ERR_TYPE naming the call, also once the records are reused', async () => {
    expectOk(await runJob(1, program('lifetime-stale.ts'), { flags }), `lifetime-stale OK (refcount ${refcount})`);
  }, 90_000);

  it('across threads: a request waited in a worker after the main thread freed its communicator; a free from endpoint 1 returns the id to endpoint 0; 4 threads x 10,000 create/use/free cycles', async () => {
    const r = await runJob(2, program('lifetime-threads.ts'), {
      flags: [...modeFlags, '--endpoints', '2', '--timeout', '280', '--log-level', 'debug', '--log-format', 'json'], args: ['4', '10000'], killAfterMs: 300_000,
    });
    expectOk(r, `lifetime-threads OK (refcount ${refcount}, 4 threads x 10000 cycles`);
    if (refcount === 'gc') expect(r.stdout).not.toContain('gcCycles 0)');
    const logged = finalizeLiveObjects(r.stderr);
    expect([...logged.keys()].sort()).toEqual([0, 1]);
    for (const rec of logged.values()) expect(rec.liveObjects).toEqual(BASELINE);
  }, 320_000);
});

describe('threads over a process\'s lifetime', () => {
  it('recycles thread ids: 68 MPI.Workers one after another in one process (the 64th used to fail)', async () => {
    const r = await runJob(1, program('worker-ids.ts'), { flags: ['--timeout', '400'], args: ['68'], killAfterMs: 420_000 });
    expectOk(r, 'worker-ids OK (68 workers)');
  }, 440_000);

  it.each(['threads', 'inline'])('MPI.abort in an MPI.Worker ends the whole job with its code and names the rank (--progress %s)', async (progress) => {
    const r = await runJob(2, program('abort-worker.ts'), { flags: ['--progress', progress, '--timeout', '60'] });
    expect(r.code).toBe(7);
    expect(r.stdout).not.toContain('the job went on');
    expect(r.stderr).toMatch(/rank 1 .*MPI\.abort\(7\)/);
  }, 90_000);
});
