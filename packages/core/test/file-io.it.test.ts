// Parallel I/O over real mpiexec jobs (issue 37; API.md Part 2 "Parallel I/O (File)"): the program
// file-io.ts checks explicit offsets, the individual and shared pointers, ordered access, a 3-D array
// through subarray views written and read back by another decomposition byte for byte, sizes,
// atomic mode, external32 and the file error classes; here with the two-phase path chosen by the
// hint (romio_cb_read / romio_cb_write automatic, enable, disable) on 1 to 4 processes, and with
// threads progress. Files go in a directory this test makes and removes.
// testlist: file-io np 4 (automatic, enable, disable), np 1, 2, 3 enable, np 4 threads
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

let root = '';
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-file-io-'));
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function expectOk(r: { code: number | null; stdout: string; stderr: string }, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith('file-io OK')).length;
  if (r.code !== 0 || ok !== np) throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
}

describe('MPI-IO File', () => {
  it.each([
    [4, 'automatic', 'inline'],
    [4, 'enable', 'inline'],
    [4, 'disable', 'inline'],
    [1, 'enable', 'inline'],
    [2, 'enable', 'inline'],
    [3, 'enable', 'inline'],
    [4, 'automatic', 'threads'],
  ])('np %i, romio_cb %s, progress %s', async (np, cb, progress) => {
    const dir = fs.mkdtempSync(path.join(root, 'job-'));
    const r = await runJob(np, program('file-io.ts'), { args: [dir, cb], flags: ['--timeout', '150', '--progress', progress], killAfterMs: 170_000 });
    expectOk(r, np);
    // The program removes what it made except its data files; nothing else is left behind.
    const left = fs.readdirSync(dir).sort();
    if (left.join(',') !== 'array3d.dat,blocks.dat,misc.dat') throw new Error(`unexpected files left: ${left.join(', ')}`);
  }, 180_000);
});
