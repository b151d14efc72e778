import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERR_RANK, ERR_TRUNCATE, MPIError, callSite, mpiError, rejectAtCallSite } from './errors.ts';
import { isLibraryPlace, userFrames, userStack } from './user-stack.ts';

const CORE_SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = path.resolve(CORE_SRC, '../..');
const lib = (file: string, line: number): string => `    at f (${path.join(CORE_SRC, file)}:${line}:3)`;

describe('isLibraryPlace', () => {
  it('counts tsmpi\'s sources and builds, Node\'s own code and places without a file as the library\'s', () => {
    expect(isLibraryPlace(`${path.join(CORE_SRC, 'util/errors.ts')}:1:2`)).toBe(true);
    expect(isLibraryPlace(`${pathToFileURL(path.join(PACKAGES, 'core/dist/api/comm.js')).href}:3:4`)).toBe(true);
    expect(isLibraryPlace(`${path.join(PACKAGES, 'transport-tcp/src/x.ts')}:3:4`)).toBe(true);
    expect(isLibraryPlace('node:internal/process/task_queues:95:5')).toBe(true);
    expect(isLibraryPlace('<anonymous>')).toBe(true);
  });
  it('counts a program anywhere else as the user\'s, the test programs beside tsmpi\'s packages too', () => {
    expect(isLibraryPlace('/home/u/proj/app.ts:14:9')).toBe(false);
    expect(isLibraryPlace('file:///home/u/proj/app.mjs:14:9')).toBe(false);
    expect(isLibraryPlace(`${path.join(PACKAGES, 'launcher/test/fixtures/fail-rank.ts')}:10:9`)).toBe(false);
  });
});

describe('userFrames and userStack', () => {
  const user = '    at async main (/home/u/proj/app.ts:14:9)';
  it('drop the library\'s frames above the first user frame and keep the rest as written', () => {
    const stack = ['MPIError: x', lib('util/errors.ts', 167), lib('api/pt2pt-comm.ts', 182), user, '    at node:internal/x:1:2'].join('\n');
    expect(userFrames(stack, 10)).toEqual([user, '    at node:internal/x:1:2']);
    expect(userStack('MPIError: y', { stack }, undefined)).toBe(['MPIError: y', user, '    at node:internal/x:1:2'].join('\n'));
  });
  it('take the call site\'s frames when the made site has none of the user\'s, and keep a stack of library frames whole otherwise', () => {
    const made = ['MPIError: x', lib('device/device.ts', 10), '    at Socket.emit (node:events:524:28)'].join('\n');
    expect(userFrames(made, 10)).toBeNull();
    expect(userStack('H', { stack: made }, { stack: `Error\n${user}` })).toBe(`H\n${user}`);
    expect(userStack('H', { stack: made }, undefined)).toBe(['H', lib('device/device.ts', 10), '    at Socket.emit (node:events:524:28)'].join('\n'));
  });
  it('keep at most the stack trace limit of frames', () => {
    const stack = ['E', lib('a.ts', 1), ...Array.from({ length: 20 }, (_, i) => `    at g (/home/u/p/a.ts:${i + 1}:1)`)].join('\n');
    expect(userFrames(stack, 3)).toHaveLength(3);
  });
});

describe('MPIError.stack', () => {
  function userCall(): MPIError {
    return mpiError(ERR_RANK, 'send', 'dest 7 is out of range');
  }
  it('starts with the header, then the frame of the user\'s program that called, without tsmpi\'s frames above it', () => {
    // A "program" outside tsmpi's folders: a script compiled under the file name /home/u/proj/app.js.
    const run = vm.runInThisContext('(function main(make) { return make(); })', { filename: '/home/u/proj/app.js' }) as (make: () => MPIError) => MPIError;
    const lines = run(userCall).stack!.split('\n');
    expect(lines[0]).toBe('MPIError: MPI_ERR_RANK: send: dest 7 is out of range');
    expect(lines[1]).toMatch(/^ {4}at main \(\/home\/u\/proj\/app\.js:1:\d+\)$/);
  });
  it('formats no frames until its stack is read (under source maps a format parses the map of every file on it)', () => {
    const prepare = Error.prepareStackTrace;
    let formatted = 0;
    Error.prepareStackTrace = (err, frames) => {
      if (frames.length > 0) formatted++;
      return prepare === undefined ? `${String(err)}\n${frames.map((f) => `    at ${String(f)}`).join('\n')}` : prepare(err, frames);
    };
    try {
      const e = userCall();
      expect(formatted).toBe(0);
      expect(e.stack!.startsWith('MPIError: MPI_ERR_RANK: send:')).toBe(true);
      expect(formatted).toBeGreaterThan(0);
    } finally {
      Error.prepareStackTrace = prepare;
    }
  });
  it('keeps a stack assigned to it (Node decorates uncaught errors this way)', () => {
    const e = userCall();
    e.stack = 'replaced';
    expect(e.stack).toBe('replaced');
  });
  it('rejectAtCallSite rejects with the same error, and callSite records once', async () => {
    const e = mpiError(ERR_TRUNCATE, 'Recv', 'too long');
    await expect(rejectAtCallSite(e)).rejects.toBe(e);
    callSite(e, userCall); // already recorded: no change, no throw
    callSite(new Error('not ours'), userCall); // not an MPIError: ignored
    expect(e.stack!.startsWith('MPIError: MPI_ERR_TRUNCATE: Recv: too long')).toBe(true);
  });
});
