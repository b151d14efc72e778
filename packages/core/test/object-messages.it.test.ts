// Object messages by the structured-clone rules (issue 39) through real mpiexec jobs, in the
// progress modes users run: what survives send/recv, irecv, bcast, allgather and a receive waited on
// in a worker thread; what is refused, naming the path; a class the receiver did not register.
// testlist: object-messages np 2 (--progress inline, threads)
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string): void {
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe.each(['inline', 'threads'] as const)('object messages (--progress %s)', (progress) => {
  it('carries Map, Set, Date, BigInt, cycles, shared references, errors and registered classes; refuses functions by path', async () => {
    const r = await runJob(2, program('object-messages.ts'), { flags: ['--progress', progress, '--timeout', '90'] });
    expectOk(r, `object-messages OK (progress ${progress})`);
  });
});
