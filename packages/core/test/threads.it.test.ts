// MPI_THREAD_MULTIPLE with real worker threads over real TCP: every program in
// both matching modes and the progress modes.
// testlist: mt-pt2pt np 2; mt-mixed np 2; mt-objects np 2; mt-busy np 2; mt-strand np 2; endpoints np 2 (--endpoints 3); late-init np 2 (--timeout)
import { describe, expect, it } from 'vitest';
import { ROOT, program, runJob } from './run-job.ts';
import path from 'node:path';

const MODES = [
  ['parallel', 'threads'],
  ['global', 'threads'],
  ['parallel', 'inline'],
  ['global', 'inline'],
  ['parallel', 'engines'],
] as const;

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string): void {
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe.each(MODES)('threads (--matching %s --progress %s)', (matching, progress) => {
  const flags = ['--matching', matching, '--progress', progress];

  it('8 threads per process x 1,000 messages keep per-thread order, with ANY_SOURCE and rendezvous', async () => {
    const r = await runJob(2, program('mt-pt2pt.ts'), { flags, args: ['8', '1000'] });
    expectOk(r, 'mt-pt2pt OK (8 threads');
    expect(r.stdout).toContain(`"progress":"${progress}"`);
    expect(r.stdout).toContain(`"matching":"${matching}"`);
  });

  it('wakes a thread blocked in recv from another thread of its process; wildcard and specific receives interleave across threads', async () => {
    expectOk(await runJob(2, program('mt-mixed.ts'), { flags }), 'mt-mixed OK');
  });

  it('uses a datatype, group, communicator and pending requests made in another thread (wait, test, waitany, cancel, idup)', async () => {
    expectOk(await runJob(2, program('mt-objects.ts'), { flags }), 'mt-objects OK');
  });

  it('completes the receives of a thread busy for 5 s outside MPI while other threads keep communicating', async () => {
    expectOk(await runJob(2, program('mt-busy.ts'), { flags, args: ['5000'] }), 'mt-busy OK');
  });

  it('sends what a thread sent before it computes without MPI or ends, and goes on after the thread ended', async () => {
    const r = await runJob(2, program('mt-strand.ts'), { flags });
    expectOk(r, `mt-strand OK (progress ${progress})`);
  });

  it('gives every endpoint its ranks in the four predefined communicators (P = 2, J = 3)', async () => {
    expectOk(await runJob(2, program('endpoints.ts'), { flags: [...flags, '--endpoints', '3'] }), 'endpoints OK');
  });
});

describe('examples/endpoints-hello.ts (the proposal\'s Listing 1)', () => {
  it('gathers one thread id per endpoint at rank 0', async () => {
    const r = await runJob(2, path.join(ROOT, 'examples/endpoints-hello.ts'), { flags: ['--endpoints', '3'] });
    expectOk(r, 'COMM_ENDPOINTS has 6 endpoints');
    for (let e = 0; e < 6; e++) expect(r.stdout).toMatch(new RegExp(`endpoint ${e}: process \\d+, thread \\d+`));
  });
});

describe('roll-call of worker threads', () => {
  it('names a worker thread that started but has not reached MPI.init', async () => {
    // --timeout 30: both ranks must have started their worker before the roll-call (a loaded machine takes seconds).
    const r = await runJob(2, program('late-init.ts'), { flags: ['--timeout', '30'], killAfterMs: 120_000 });
    expect(r.code).toBe(124);
    for (const rank of [0, 1]) {
      expect(r.stdout).toContain(`late-init rank ${rank} started its worker`);
      const line = r.stderr.split('\n').find((l) => l.includes(`rank ${rank} (`)) ?? '';
      expect(line).toContain(`blocked in recv (comm COMM_WORLD, peer ${1 - rank}, tag 77)`);
      expect(line).toMatch(/thread \d+ blocked in start, before MPI\.init/);
    }
  });
});
