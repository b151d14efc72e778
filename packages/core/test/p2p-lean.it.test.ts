// The point-to-point ordering, wildcard, probe, cancel and unexpected-message programs of
// p2p.it.test.ts pinned to each side of the lean route (docs/adr/0020-lean-common-path.md): every
// MPI rule must hold through the lean send, the receive lanes and their demotion (--progress
// inline, the default job's path, pinned here so a change of default keeps it covered) and on the
// general path alone (--progress threads: a user thread's direct route takes no lean send and the
// process has no receive lanes).
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

async function expectOk(progress: string, np: number, name: string, marker: string): Promise<void> {
  const r = await runJob(np, program(name), { flags: ['--progress', progress] });
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed with --progress ${progress} (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe.each(['inline', 'threads'])('point-to-point with --progress %s', (progress) => {
  it('keeps MPI order with many outstanding, wildcard and specific receives (np 4)', async () => {
    await expectOk(progress, 4, 'p2p-order.ts', 'p2p-order OK');
  });

  it('probes, then receives; mprobe by two ANY_SOURCE consumers delivers each message once', async () => {
    await expectOk(progress, 3, 'p2p-probe.ts', 'p2p-probe OK');
  });

  it('handles truncation, PROC_NULL, persistent requests, ssend, cancel, values and request semantics', async () => {
    await expectOk(progress, 2, 'p2p-misc.ts', 'p2p-misc OK');
  });

  it('drains 10,000 unexpected messages in order', async () => {
    await expectOk(progress, 2, 'p2p-unexpected.ts', 'p2p-unexpected OK');
  });
});
