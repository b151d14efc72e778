// Dynamic processes over real mpiexec jobs (issue 37): spawn of 2 then 4 children that exchange
// messages with the parents, merge and allreduce; spawnMultiple with two commands; getParent null
// at the top; accept/connect between the parents and a spawned world through a published name;
// the bad arguments (programs/spawn.ts asserts all of it in every process). Spawned processes are
// part of the job: a child that throws ends it with the usual failure line, and a --timeout
// roll-call lists the children.
// testlist: spawn np 2 (universe from --hosts slots; inline, threads and engines progress), failure and roll-call np 2 (TSMPI_UNIVERSE),
// a child at another thread level np 1 (progress auto: the parent's; a child that sets another: the mismatch named on both sides)
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

const SPAWN = program('spawn.ts');
const THREAD_LEVELS = program('spawn-thread-level.ts');

describe('dynamic processes', () => {
  it('spawns 2 then 4 children, spawnMultiple, accept/connect through a published name, and refuses bad arguments', async () => {
    const r = await runJob(2, SPAWN, { flags: ['--hosts', 'localhost:16', '--timeout', '200'], killAfterMs: 220_000 });
    const report = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    expect(r.code, report).toBe(0);
    expect(linesWith(r.stdout, 'spawn OK ').sort(), report).toEqual(['spawn OK 0/2', 'spawn OK 1/2']);
    expect(linesWith(r.stdout, 'spawn child OK ').sort(), report).toEqual(['spawn child OK 0/2', 'spawn child OK 0/4', 'spawn child OK 1/2', 'spawn child OK 1/4', 'spawn child OK 2/4', 'spawn child OK 3/4']);
    expect(linesWith(r.stdout, 'spawn multi OK ').sort(), report).toEqual(['spawn multi OK 0/2', 'spawn multi OK 1/2']);
    expect(linesWith(r.stdout, 'spawn port OK ').sort(), report).toEqual(['spawn port OK 0/2', 'spawn port OK 1/2']);
  }, 230_000);

  // The channel engines (and, under threads, the user threads' direct routes to them) learn the children's engines.
  it.each(['threads', 'engines'])('the same under --progress %s', async (progress) => {
    const r = await runJob(2, SPAWN, { flags: ['--hosts', 'localhost:16', '--progress', progress, '--timeout', '200'], killAfterMs: 220_000 });
    const report = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    expect(r.code, report).toBe(0);
    expect(r.stderr, report).toBe('');
    expect(linesWith(r.stdout, 'spawn OK ').sort(), report).toEqual(['spawn OK 0/2', 'spawn OK 1/2']);
    expect(linesWith(r.stdout, 'spawn child OK '), report).toHaveLength(6);
    expect(linesWith(r.stdout, 'spawn multi OK '), report).toHaveLength(2);
    expect(linesWith(r.stdout, 'spawn port OK '), report).toHaveLength(2);
  }, 230_000);

  // Progress auto follows the thread level, but a spawned process's follows its parents': an inline process cannot dial channel engines.
  it.each([['multiple', 'single', 'threads'], ['single', 'multiple', 'inline']])('a parent at %s spawns a child at %s: the child runs the parent\'s progress (%s)', async (parentLevel, childLevel, progress) => {
    const r = await runJob(1, THREAD_LEVELS, { flags: ['--hosts', 'localhost:2', '--timeout', '60'], args: [parentLevel, childLevel, 'auto'], killAfterMs: 90_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim(), r.stderr).toBe(`spawn thread levels OK ${progress}`);
  }, 100_000);

  it.each([['multiple', 'inline'], ['single', 'threads']])('a parent at %s and a child that sets progress %s itself: each names the mismatch', async (parentLevel, childProgress) => {
    const r = await runJob(1, THREAD_LEVELS, { flags: ['--hosts', 'localhost:2', '--timeout', '60'], args: [parentLevel, 'single', childProgress], killAfterMs: 90_000 });
    const [parentMode, childMode] = childProgress === 'inline' ? ['threads or engines', 'inline'] : ['inline', 'threads or engines'];
    const remedy = "they cannot connect; give every process one --progress \\(auto: threads at threadLevel 'multiple'\\) at packages/core/test/programs(-built)?/spawn-thread-level\\.(ts|mjs):\\d+(; aborting the job \\(2 processes\\))?$";
    const parentSays = new RegExp(`MPIError: MPI_ERR_SPAWN: Comm\\.spawn: process 1 runs progress ${childMode}, this one ${parentMode}: ${remedy}`);
    const childSays = new RegExp(`MPIError: MPI_ERR_SPAWN: MPI\\.init: process 0 runs progress ${parentMode}, this one ${childMode}: ${remedy}`);
    // The first to fail ends the job: the other's line may not come before mpiexec stops it.
    const causes = r.stderr.split('\n').filter((l) => l.startsWith('mpiexec: ') && l.includes('MPIError'));
    expect(r.code, r.stderr).toBe(1);
    expect(causes.length, r.stderr).toBeGreaterThan(0);
    for (const line of causes) expect(line).toMatch(parentSays.test(line) ? parentSays : childSays);
  }, 100_000);

  it('a spawned process that throws ends the job with the usual failure line', async () => {
    const r = await runJob(2, SPAWN, { args: ['parent-throw'], flags: ['--timeout', '100'], env: { TSMPI_UNIVERSE: '4' }, killAfterMs: 120_000 });
    const lines = r.stderr.trimEnd().split('\n');
    expect(r.code, r.stderr).toBe(1);
    expect(lines.at(-1), r.stderr).toMatch(/^mpiexec: rank 3 \(host .*, pid \d+\) exited with code 1: Error: spawned child 1 fails on purpose at packages\/core\/test\/programs(-built)?\/spawn\.(ts|mjs):\d+; aborting the job \(4 processes\)$/);
    expect(lines.at(-2), r.stderr).toBe('mpiexec: ranks 0, 1, 2 stopped (peer failed)');
  }, 130_000);

  it('a --timeout roll-call lists the spawned processes with the parents', async () => {
    const r = await runJob(2, SPAWN, { args: ['parent-hang'], flags: ['--timeout', '30'], env: { TSMPI_UNIVERSE: '4' }, killAfterMs: 120_000 });
    expect(r.code, r.stderr).toBe(124);
    expect(r.stderr).toContain('roll-call of 4 processes');
    for (const rank of [2, 3]) expect(r.stderr).toMatch(new RegExp(`rank ${rank} \\(host .*\\): blocked in recv \\(comm COMM_PARENT, peer 0, tag 99\\)`));
    for (const rank of [0, 1]) expect(r.stderr).toMatch(new RegExp(`rank ${rank} \\(host .*\\): blocked in recv \\(comm COMM_WORLD\\.spawn, peer 0, tag 99\\)`));
  }, 130_000);
});
