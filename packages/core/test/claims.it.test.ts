// Receive claims (setting receiveClaims, docs/adr/0023-receive-claims.md, step 1) over real
// mpiexec jobs on loopback TCP with real worker threads: each trigger that gives a claim up, with
// a sender that runs ahead (test/programs/claims.ts), with receiveClaims on, and the same program
// with it off, in both progress modes that have worker threads receiving through the engines.
// With it on the claims have routes (docs/adr/0023 step 2): claims.ts checks that its messages
// took the claim's socket, claims-switch.ts runs a sender ahead across the switch onto it, and
// claims-sender-dies.ts terminates a sender thread on the route.
import { describe, it } from 'vitest';
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

  it.each(['threads', 'inline'])('keeps the order of a sender that runs ahead across the switch onto a claim route (progress %s)', async (progress) => {
    const r = await runJob(2, program('claims-switch.ts'), { flags: ['--progress', progress], env: { TSMPI_RECEIVE_CLAIMS: 'on' }, killAfterMs: 120_000 });
    if (r.code !== 0 || linesWith(r.stdout, 'claims-switch OK').length !== 1) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  });
});
