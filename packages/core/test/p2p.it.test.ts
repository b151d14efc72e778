// Point-to-point over real mpiexec jobs on loopback TCP.
// testlist: p2p-order np 2,4; p2p-probe np 3; p2p-misc np 2; p2p-big np 2; p2p-unexpected np 2; send-while-computing np 2 (send, first, allreduce, yield; engines with --progress engines); errors np 2; bad-key np 2; singleton np 1
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linesWith, program, runCommand, runJob, TSX } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string): void {
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('point-to-point', () => {
  it.each([2, 4])('keeps MPI order with many outstanding, wildcard and specific receives (np %i)', async (np) => {
    expectOk(await runJob(np, program('p2p-order.ts')), 'p2p-order OK');
  });

  it('probes, then receives; mprobe by two ANY_SOURCE consumers delivers each message once', async () => {
    expectOk(await runJob(3, program('p2p-probe.ts')), 'p2p-probe OK');
  });

  it('handles truncation, PROC_NULL, persistent requests, ssend, values and request semantics', async () => {
    expectOk(await runJob(2, program('p2p-misc.ts')), 'p2p-misc OK');
  });

  it('moves a 64 MiB message by rendezvous', async () => {
    expectOk(await runJob(2, program('p2p-big.ts')), 'p2p-big OK');
  });

  it('drains 10,000 unexpected messages in order', async () => {
    expectOk(await runJob(2, program('p2p-unexpected.ts')), 'p2p-unexpected OK');
  });

  /** Runs send-while-computing.ts with its marker in a fresh directory of mode 0700, removed after the job. */
  async function sendWhileComputing(mode: string, flags: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-send-while-computing-'));
    try {
      return await runJob(2, program('send-while-computing.ts'), { args: [mode], flags, env: { SEND_WHILE_COMPUTING_MARKER: path.join(dir, 'received') } });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it.each(['send', 'first', 'allreduce', 'yield'])('has sent before the sender computes: %s, then computing without MPI (ADR 0061, GUIDE.md)', async (mode) => {
    expectOk(await sendWhileComputing(mode), `send-while-computing OK ${mode} (progress inline)`);
  });

  it('sends an Isend while its thread computes at once with --progress engines (GUIDE.md)', async () => {
    expectOk(await sendWhileComputing('engines', ['--progress', 'engines']), 'send-while-computing OK engines (progress engines)');
  });

  it.each(['global', 'parallel'])('passes the ordering suite with --matching %s and one channel', async (matching) => {
    expectOk(await runJob(4, program('p2p-order.ts'), { flags: ['--matching', matching, '--channels', '1'] }), 'p2p-order OK');
  });

  it('raises MPIError with the right class and call for every bad argument', async () => {
    const r = await runJob(2, program('errors.ts'));
    expectOk(r, 'errors OK');
    expect(linesWith(r.stdout, 'errors OK').length).toBe(2);
  });

  it('refuses connections without the job key while the job completes', async () => {
    expectOk(await runJob(2, program('bad-key.ts')), 'bad-key OK');
  });

  it('runs a program without mpiexec as a job of size 1', async () => {
    expectOk(await runCommand(TSX, [program('singleton.ts')]), 'singleton OK');
  });
});
