// Object messages by the structured-clone rules (issue 39) through real mpiexec jobs, in the
// progress modes users run: what survives send/recv, irecv, bcast, allgather and a receive waited on
// in a worker thread; what is refused, naming the path; a class the receiver did not register. And
// the first object message's load of msgpackr (ADR 0057), held by a test hook, does not hold back the
// frame of a send that completed just before it (first-use-flush.ts).
// testlist: object-messages np 2 (--progress inline, threads); first-use-flush np 2
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

describe('the first object message', () => {
  it('loads msgpackr only once the frame queued just before it, in the same synchronous code, has gone out', async () => {
    // A directory of mode 0700 for the marker (nobody else can make it exist).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-first-use-'));
    try {
      const r = await runJob(2, program('first-use-flush.ts'), {
        flags: ['--timeout', '120'],
        env: { TSMPI_RANK_NODE_FLAGS: `--require=${program('first-use-hold-hook.cjs')}`, FIRST_USE_FLUSH_MARKER: path.join(dir, 'received') },
        killAfterMs: 150_000,
      });
      expectOk(r, 'first-use-flush OK');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
