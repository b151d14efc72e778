// The channel of an endpoint pair (docs/adr/0018) through mpiexec: with
// --endpoints 2 --channels 2 the pairs 0 <-> 2 and 1 <-> 3 use a channel each,
// and eager, ssend and rendezvous messages between endpoint threads arrive
// intact and in order in every progress mode. Run with endpointReceive engine: the channels carry
// every frame only on the engine path (docs/adr/0021 made endpoint readers the default).
// testlist: ep-channels np 2 (--endpoints 2 --channels 2; progress inline, threads, engines)
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

describe.each(['inline', 'threads', 'engines'] as const)('endpoint pairs over 2 channels (--progress %s)', (progress) => {
  it('gives each pair of endpoint threads its own channel and carries every protocol', async () => {
    // The engine path's channels (endpointReceive engine): with the default (auto, docs/adr/0021) the
    // endpoint threads would read their own sockets, and frames would leave the channels counted here.
    const r = await runJob(2, program('ep-channels.ts'), { flags: ['--endpoints', '2', '--channels', '2', '--progress', progress], env: { TSMPI_ENDPOINT_RECEIVE: 'engine' } });
    if (r.code !== 0 || !r.stdout.includes('ep-channels OK')) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
    expect(r.stdout).toContain(`ep-channels OK (progress ${progress}${progress === 'inline' ? ', channels counted' : ''})`);
  });
});
