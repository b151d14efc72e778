/**
 * An MPIError's stack starts in the user's code (issue 39, util/user-stack.ts): through mpiexec,
 * the failed rank's stack shows the program's file and .ts line first (tsx's source maps), with no
 * frame of tsmpi's sources above it, and mpiexec's last line names the same file and line. Runs
 * packages/launcher/test/fixtures/stack-rank.ts: a bad argument (thrown by the call itself), an
 * Allreduce whose sizes differ (rejected after the other rank's operand arrived), a Recv shorter
 * than its message (rejected by the arrival, in the progress engine), an intercommunicator
 * allreduce whose values cannot be combined, a bad argument in a worker thread, and an Irecv shorter
 * than its message reported by Request.waitall / waitany / waitsome / testany.
 *
 * testlist: { file: 'user-stacks.it.test.ts', np: [2, 3] }
 */
import { describe, expect, it } from 'vitest';
import { FIXTURES, runMpiexec } from './run-mpiexec.ts';

const PROGRAM = `${FIXTURES}/stack-rank.ts`;
/** A job takes 2-3 s on an idle machine; shared CI machines have been seen 30 times slower. The test's own timeout is vitest's 120 s. */
const RUN = { deadlineMs: 100_000 } as const;

interface Case {
  readonly mode: string;
  readonly np: number;
  /** The error's first line, without its header. */
  readonly message: RegExp;
  /** The program file and the .ts line of the failing call. */
  readonly file: string;
  readonly line: number;
}

const CASES: readonly Case[] = [
  { mode: 'sync', np: 2, message: /^MPI_ERR_RANK: send: dest 7 is out of range/, file: 'stack-rank.ts', line: 21 },
  { mode: 'async', np: 2, message: /^MPI_ERR_COUNT: Allreduce: rank \d contributed/, file: 'stack-rank.ts', line: 16 },
  { mode: 'truncate', np: 2, message: /^MPI_ERR_TRUNCATE: Recv: message of 32 bytes/, file: 'stack-rank.ts', line: 29 },
  { mode: 'inter', np: 3, message: /^MPI_ERR_OP: allreduce: SUM applies to numbers/, file: 'stack-rank.ts', line: 39 },
  { mode: 'worker', np: 2, message: /^MPI_ERR_RANK: send: dest 9 is out of range/, file: 'stack-worker.ts', line: 7 },
  // A request that failed when its message arrived, reported by the completion call: the stack names that call's line.
  { mode: 'waitall', np: 2, message: /^MPI_ERR_IN_STATUS: Request\.waitall: 1 of 2 requests failed .*request 0: MPI_ERR_TRUNCATE: Irecv/, file: 'stack-rank.ts', line: 48 },
  { mode: 'waitany', np: 2, message: /^MPI_ERR_TRUNCATE: Irecv: message of 32 bytes/, file: 'stack-rank.ts', line: 49 },
  { mode: 'waitsome', np: 2, message: /^MPI_ERR_IN_STATUS: Request\.waitsome: 1 of 2 requests failed/, file: 'stack-rank.ts', line: 50 },
  { mode: 'testany', np: 2, message: /^MPI_ERR_TRUNCATE: Irecv: message of 32 bytes/, file: 'stack-rank.ts', line: 51 },
];

describe('an MPIError through mpiexec names the user\'s file and line', () => {
  it.each(CASES)('$mode ($np ranks): the stack\'s first frame and mpiexec\'s last line', async ({ mode, np, message, file, line }) => {
    const r = await runMpiexec(['-n', String(np), PROGRAM, mode], RUN);
    expect(r.timedOut).toBe(false);
    expect(r.status, r.stderr).toBe(1);
    const err = r.stderr.split('\n');
    // The rank's stack: its header, then at once the program's frame (no errors.ts, no api/ frame).
    const header = err.findIndex((l) => /^(?:MPIError|Error \[MPIError\]): /.test(l));
    expect(header, r.stderr).toBeGreaterThanOrEqual(0);
    expect(err[header]!.replace(/^(?:MPIError|Error \[MPIError\]): /, '')).toMatch(message);
    expect(err[header + 1], r.stderr).toMatch(new RegExp(`^ {4}at .*fixtures/${file.replace('.', '\\.')}:${line}:\\d+\\)?(?: \\{)?$`));
    expect(r.stderr).not.toMatch(/packages\/core\/(?:src|dist)\//);
    const last = err.filter((l) => l !== '').at(-1)!;
    expect(last).toMatch(/^mpiexec: rank \d \(host [^,]+, pid \d+\) exited with code 1: MPIError: MPI_ERR_/);
    expect(last).toContain(` at packages/launcher/test/fixtures/${file}:${line}; aborting the job (${np} processes)`);
  });
});
