import { describe, expect, it } from 'vitest';
import { failureCause, startFailureCause } from './failure-cause.ts';

const CWD = '/home/u/proj';

describe('failureCause', () => {
  it('names an uncaught Error and its first frame in the user\'s code, relative to the working directory', () => {
    const err = [
      '/home/u/proj/app.ts:14', "  throw new Error('boom');", '        ^', '', '',
      'Error: boom', '    at <anonymous> (/home/u/proj/app.ts:14:9)', '    at node:internal/x:1:2', '', 'Node.js v20.20.2',
    ].join('\n');
    expect(failureCause(err, CWD)).toBe('Error: boom at app.ts:14');
  });

  it('skips tsmpi\'s own frames and Node\'s, so a library error points at the user\'s call', () => {
    const err = [
      'MPIError: MPI_ERR_RANK: send: dest 7 is out of range for COMM_WORLD (size 4)',
      '    at mpiError (/repo/packages/core/src/util/errors.ts:114:73)',
      '    at Comm.send (/repo/packages/core/src/api/pt2pt-comm.ts:20:5)',
      '    at async main (file:///home/u/proj/src/ring.mjs:7:3)',
    ].join('\n');
    expect(failureCause(err, CWD)).toBe('MPIError: MPI_ERR_RANK: send: dest 7 is out of range for COMM_WORLD (size 4) at src/ring.mjs:7');
  });

  it('reads a module\'s top-level frame in an async stack (an await at the top of an .mjs program)', () => {
    const err = [
      "MPIError: MPI_ERR_SPAWN: MPI.init: process 0 runs progress threads or engines, this one inline",
      '    at async Promise.all (index 0)',
      '    at async file:///home/u/proj/app.mjs:8:1 {',
      '  errorClass: 42,',
      '}',
    ].join('\n');
    expect(failureCause(err, CWD)).toBe('MPIError: MPI_ERR_SPAWN: MPI.init: process 0 runs progress threads or engines, this one inline at app.mjs:8');
  });

  it('keeps an absolute path outside the working directory, and the error alone when no frame is the user\'s', () => {
    expect(failureCause('TypeError [ERR_X]: bad\n    at f (/opt/lib/x.js:3:1)\n', CWD)).toBe('TypeError: bad at /opt/lib/x.js:3');
    expect(failureCause('RangeError: too big\n    at node:internal/buffer:10:2\n', CWD)).toBe('RangeError: too big');
  });

  it('names an error that came from a worker thread by its own name, and reads the last frame of an error with properties', () => {
    const err = [
      'Error [MPIError]: MPI_ERR_RANK: send: dest 9 is out of range for COMM_WORLD (size 2): expected 0..1 or PROC_NULL',
      '    at async <anonymous> (/home/u/proj/worker.ts:7:12) {',
      '  errorClass: 6,',
      "  call: 'send'",
      '}',
    ].join('\n');
    expect(failureCause(err, CWD)).toBe('MPIError: MPI_ERR_RANK: send: dest 9 is out of range for COMM_WORLD (size 2): expected 0..1 or PROC_NULL at worker.ts:7');
  });

  it('takes the last error printed (Node prints the uncaught one last) and ignores other stderr', () => {
    const err = 'Error: handled earlier\n    at a (/home/u/proj/a.ts:1:1)\nsome log line\nError: the real one\n    at b (/home/u/proj/b.ts:2:2)\n';
    expect(failureCause(err, CWD)).toBe('Error: the real one at b.ts:2');
    expect(failureCause('just a line\nanother\n', CWD)).toBeNull();
  });

  it('shortens a very long message', () => {
    const c = failureCause(`Error: ${'x'.repeat(500)}\n`, CWD)!;
    expect(c.length).toBeLessThan(220);
    expect(c.endsWith('...')).toBe(true);
  });
});

describe('failureCause of a known mistake', () => {
  it('says what to do about top-level await in a .ts program that runs as CommonJS', () => {
    const err = [
      'Error: Transform failed with 2 errors:',
      '/home/u/proj/app.ts:3:0: ERROR: Top-level await is currently not supported with the "cjs" output format',
      '/home/u/proj/app.ts:9:2: ERROR: Top-level await is currently not supported with the "cjs" output format',
      '    at failureErrorWithLog (/home/u/proj/node_modules/esbuild/lib/main.js:1752:15)',
    ].join('\n');
    expect(failureCause(err, CWD)).toBe('app.ts:3 uses top-level await, but app.ts runs as CommonJS (its package.json has no "type": "module"): add "type": "module" to the package.json, or name the file .mts');
  });
});

describe('startFailureCause', () => {
  it('says a program is missing or not executable instead of Node\'s spawn error, and passes other messages on', () => {
    expect(startFailureCause('spawn nosuchprog ENOENT')).toBe('program not found: nosuchprog (not a file in the working directory, nor a command on PATH)');
    expect(startFailureCause('spawn ./tool.sh EACCES')).toMatch(/^\.\/tool\.sh is not executable \(chmod \+x it/);
    expect(startFailureCause('host b is gone')).toBe('host b is gone');
  });
});
