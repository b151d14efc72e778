// Split collective I/O and data sieving over real mpiexec jobs (issue 37; API.md Part 2 "Parallel
// I/O (File)"): the program file-split-sieve.ts checks each *Begin/*End pair against its blocking
// form byte for byte and the misuse errors, then strided independent writes and reads (a resized
// vector and a 3-D subarray filetype, every rank at once) with romio_ds_* disable / enable / enable
// with tiny buffers giving the same files, and reads over holes and past the end of the file.
// testlist: file-split-sieve np 2 (romio_cb enable), np 4 (automatic, enable), np 4 threads progress
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

let root = '';
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-file-split-'));
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe('MPI-IO split collectives and data sieving', () => {
  it.each([
    [2, 'enable', 'inline'],
    [4, 'automatic', 'inline'],
    [4, 'enable', 'inline'],
    [4, 'automatic', 'threads'],
  ])('np %i, romio_cb %s, progress %s', async (np, cb, progress) => {
    const dir = fs.mkdtempSync(path.join(root, 'job-'));
    const r = await runJob(np, program('file-split-sieve.ts'), { args: [dir, cb], flags: ['--timeout', '150', '--progress', progress], killAfterMs: 170_000 });
    const ok = r.stdout.split('\n').filter((l) => l.startsWith('file-split-sieve OK')).length;
    if (r.code !== 0 || ok !== np) throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    const left = fs.readdirSync(dir).sort().join(',');
    const want = ['blocking.dat', 'holes.dat', 'split.dat', ...['off', 'on', 'tiny'].flatMap((l) => [`subarray-${l}.dat`, `vector-${l}.dat`])].sort().join(',');
    if (left !== want) throw new Error(`files left: ${left}; expected ${want}`);
  }, 180_000);
});
