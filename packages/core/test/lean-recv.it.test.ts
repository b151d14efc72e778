// The receive lanes (docs/adr/0020-lean-common-path.md, step 1) over real mpiexec jobs on loopback
// TCP: each demotion trigger with a sender that runs ahead (order, the moved receive, cancel,
// truncation, ANY_TAG, MPI.stats) in inline progress (lanes) and, for a few triggers, in threads
// progress (no lanes: the same program must pass on the general path); the lanes' event-loop hold
// (step 3); and a lean receive whose peer is lost.
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

const RECEIVER_TRIGGERS = ['anysource', 'iprobe', 'probe', 'mprobe', 'improbe', 'general'];
const SENDER_TRIGGERS = ['ssend', 'rndv', 'object'];

async function expectOk(trigger: string, progress: string): Promise<void> {
  const r = await runJob(2, program('lean-recv.ts'), { flags: ['--progress', progress], args: [trigger] });
  if (r.code !== 0 || linesWith(r.stdout, 'lean-recv OK').length !== 2) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('receive lanes', () => {
  it.each([...RECEIVER_TRIGGERS, ...SENDER_TRIGGERS])('demote in order on %s (progress inline)', async (trigger) => {
    await expectOk(trigger, 'inline');
  });

  it.each(['anysource', 'mprobe', 'rndv'])('the same program passes on %s on the general path (progress threads)', async (trigger) => {
    await expectOk(trigger, 'threads');
  });

  it('hold the event loop once per lane with posted receives', async () => {
    const r = await runJob(2, program('lean-hold.ts'), { flags: ['--progress', 'inline'] });
    if (r.code !== 0 || linesWith(r.stdout, 'lean-hold OK').length !== 2) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  });

  it('fail a lean receive whose peer is lost', async () => {
    const r = await runJob(2, program('lean-lost-peer.ts'), { flags: ['--progress', 'inline'], killAfterMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('lean-lost-peer: the lean receive failed with MPI_ERR_PROC_FAILED');
    expect(r.stderr).not.toContain('[run-job] killed');
  });
});
