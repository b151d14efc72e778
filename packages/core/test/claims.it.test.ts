// Receive claims (setting receiveClaims, docs/adr/0023-receive-claims.md, step 1) over real
// mpiexec jobs on loopback TCP with real worker threads: each trigger that gives a claim up, with
// a sender that runs ahead (test/programs/claims.ts), with receiveClaims on, and the same program
// with it off, in both progress modes that have worker threads receiving through the engines.
// With it on the claims have routes (docs/adr/0023 step 2): claims.ts checks that its messages
// took the claim's socket, claims-switch.ts runs a sender ahead across the switch onto it, and
// claims-sender-dies.ts terminates a sender thread on the route, claims-holder-dies.ts the claiming
// thread with its route open, and claims-rendezvous.ts sends rendezvous messages on a claim's socket.
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

const TRIGGERS = ['thread', 'anytag', 'anysource', 'probe', 'iprobe', 'object', 'exit', 'finalize', 'ring'];

async function expectOk(trigger: string, claims: string, progress: string): Promise<void> {
  const r = await runJob(2, program('claims.ts'), { flags: ['--progress', progress], args: [trigger], env: { TSMPI_RECEIVE_CLAIMS: claims }, killAfterMs: 120_000 });
  if (r.code !== 0 || linesWith(r.stdout, `claims OK (${trigger}, receiveClaims ${claims})`).length !== 1) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('receive claims', () => {
  it.each(TRIGGERS)('give a claim up in order on %s (receiveClaims on, progress threads)', async (trigger) => {
    await expectOk(trigger, 'on', 'threads');
  });

  it.each(['thread', 'anytag', 'exit', 'ring'])('give a claim up in order on %s (receiveClaims on, progress inline)', async (trigger) => {
    await expectOk(trigger, 'on', 'inline');
  });

  it.each(['thread', 'anytag', 'probe', 'finalize', 'ring'])('the same program passes on %s with receiveClaims off', async (trigger) => {
    await expectOk(trigger, 'off', 'threads');
  });

  it.each(['threads', 'inline'])('takes the end of a dead sender thread\'s connection to a claim socket for its FIN (progress %s)', async (progress) => {
    const r = await runJob(2, program('claims-sender-dies.ts'), { flags: ['--progress', progress], env: { TSMPI_RECEIVE_CLAIMS: 'on' }, killAfterMs: 120_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    if (r.code !== 0 || linesWith(r.stdout, `claims-sender-dies OK ${progress}`).length !== 1 || out.split('\n').filter((l) => l.includes('its end is taken for the FIN')).length !== 1) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  });

  // The claiming thread dies with its route open (process.exit(3) inside it, or worker.terminate()
  // from its main thread: exit code 1), after its socket carried nine frames (the program checks)
  // and after the sender thread ended cleanly, so the peer process cannot see the death and only the
  // check of packages/core/src/api/worker.ts (claimsDied) can end the job. Checked: with that check
  // disabled both ways hang until mpiexec's --timeout (each rank blocked in its never-answered recv).
  it.each([['threads', 'exit'], ['threads', 'terminate'], ['inline', 'exit'], ['inline', 'terminate']] as const)('a claiming thread that dies with its route open fails the job with ERR_PROC_FAILED naming it (progress %s, %s)', async (progress, how) => {
    const r = await runJob(2, program('claims-holder-dies.ts'), { flags: ['--progress', progress, '--timeout', '60'], args: [how], env: { TSMPI_RECEIVE_CLAIMS: 'on' }, killAfterMs: 90_000 });
    const why = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    expect(r.code, why).not.toBe(0);
    expect(r.stdout, why).not.toContain('not reached');
    expect(r.stderr, why).toMatch(new RegExp(`MPI_ERR_PROC_FAILED: progress: worker thread \\d+ ended \\(exit code ${how === 'exit' ? 3 : 1}\\) holding 1 receive claim and 1 open claim route \\(receiveClaims on\\)`));
    // The death ended the job, not mpiexec's deadline.
    expect(r.stderr, why).not.toMatch(/--timeout 60 s fired/);
  }, 100_000);

  // 256 KiB and 4 MiB messages (rendezvous) mixed with eager ones, every first frame (eager or the
  // rendezvous request) read on the claim's socket: the program checks the count on both sides, the
  // order and every byte. Checked: with #outClaimRouted sending the rendezvous requests by the engine
  // instead (device.ts, one condition) the job fails in both modes ("A: message 2's length (in the
  // order sent): got 4194304, expected 3").
  it.each(['threads', 'inline'])('delivers rendezvous messages on a claim\'s socket in order, every byte (progress %s)', async (progress) => {
    const r = await runJob(2, program('claims-rendezvous.ts'), { flags: ['--progress', progress, '--timeout', '90'], env: { TSMPI_RECEIVE_CLAIMS: 'on' }, killAfterMs: 120_000 });
    if (r.code !== 0 || linesWith(r.stdout, `claims-rendezvous OK ${progress}`).length !== 1) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  }, 130_000);

  it.each(['threads', 'inline'])('keeps the order of a sender that runs ahead across the switch onto a claim route (progress %s)', async (progress) => {
    const r = await runJob(2, program('claims-switch.ts'), { flags: ['--progress', progress], env: { TSMPI_RECEIVE_CLAIMS: 'on' }, killAfterMs: 120_000 });
    if (r.code !== 0 || linesWith(r.stdout, 'claims-switch OK').length !== 1) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  });
});
