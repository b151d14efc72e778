// Concurrent spawns from different processes (issue 37, docs/adr/0040-dynamic-processes.md),
// through real mpiexec jobs (programs/spawn-concurrent.ts): every rank of a job of 3 calls
// COMM_SELF.spawn at once (1, 2 and 3 children), the children exchange with their parent, the
// worlds of ranks 0 and 1 meet at a published port, and everyone spawns again at once. Before
// each spawned world was wired up from its own addresses only, a world's init read the addresses
// of every lower process number, those of a world started a moment earlier too, and failed with
// pmi.get "no value was put for key tcp:N" when that world had not fenced yet.
// testlist: spawn-concurrent np 3 (TSMPI_UNIVERSE 15; inline, threads and engines progress)
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

const PROGRAM = program('spawn-concurrent.ts');

describe('concurrent spawns from different processes (np 3, 6 + 6 children)', () => {
  it.each(['inline', 'threads', 'engines'])('progress %s', async (progress) => {
    const r = await runJob(3, PROGRAM, { flags: ['--progress', progress, '--timeout', '200'], env: { TSMPI_UNIVERSE: '15' }, killAfterMs: 220_000 });
    const report = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    expect(r.code, report).toBe(0);
    expect(linesWith(r.stdout, 'concurrent parent OK ').sort(), report).toEqual(['concurrent parent OK 0/3', 'concurrent parent OK 1/3', 'concurrent parent OK 2/3']);
    const children = linesWith(r.stdout, 'concurrent child OK ');
    expect(children, report).toHaveLength(12);
    expect(children.filter((l) => l.includes('child-port-accept')), report).toEqual(['concurrent child OK child-port-accept 0:0/1']);
    expect(children.filter((l) => l.includes('child-port-connect')).sort(), report).toEqual(['concurrent child OK child-port-connect 1:0/2', 'concurrent child OK child-port-connect 1:1/2']);
  }, 230_000);
});
