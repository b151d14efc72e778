// The two-phase plan (two-phase.ts), the amode checks (amode.ts) and the fs error mapping
// (fs-error.ts): pure functions against hand-computed answers.
import { describe, expect, it } from 'vitest';
import { ERR_AMODE, ERR_FILE_EXISTS, ERR_IO, ERR_NO_SUCH_FILE, MPIError } from '../util/index.ts';
import { MODE_CREATE, MODE_EXCL, MODE_RDONLY, MODE_RDWR, MODE_SEQUENTIAL, MODE_WRONLY, checkAmode } from './amode.ts';
import { fileError } from './fs-error.ts';
import { LARGE_PIECE_BYTES, coalesce, fileDomains, isInterleaved, roundWindows, splitByDomain, wantsTwoPhase } from './two-phase.ts';

describe('two-phase plan', () => {
  it('fileDomains cuts [lo, hi) into equal contiguous domains', () => {
    expect(fileDomains(100, 200, 4)).toEqual([100, 125, 150, 175, 200]);
    expect(fileDomains(0, 10, 3)).toEqual([0, 4, 8, 10]);
    expect(fileDomains(0, 2, 4)).toEqual([0, 1, 2, 2, 2]);
  });

  it('splitByDomain cuts runs at the boundaries and remembers stream positions', () => {
    const p = splitByDomain({ offsets: [0, 30], lengths: [20, 30] }, [0, 10, 40, 60]);
    expect(p.pairs).toEqual([[0, 10], [10, 10, 30, 10], [40, 20]]);
    expect(p.streamAt).toEqual([[0], [10, 20], [30]]);
    expect(p.bytes).toEqual([10, 20, 20]);
  });

  it('splitByDomain skips empty domains', () => {
    const p = splitByDomain({ offsets: [1], lengths: [1] }, [0, 1, 1, 2]);
    expect(p.bytes).toEqual([0, 0, 1]);
  });

  it('coalesce sorts and merges touching pieces into extents', () => {
    const ext = coalesce([
      { offset: 20, length: 10, at: 0 },
      { offset: 0, length: 10, at: 10 },
      { offset: 10, length: 10, at: 20 },
      { offset: 40, length: 5, at: 30 },
    ]);
    expect(ext.map((e) => [e.offset, e.length, e.pieces.map((p) => p.at)])).toEqual([[0, 30, [10, 20, 0]], [40, 5, [30]]]);
  });

  it('roundWindows cuts each domain into windows of at most cb_buffer_size bytes', () => {
    const r = roundWindows([0, 25, 30, 30, 70], 10);
    expect(r.bounds).toEqual([0, 10, 20, 25, 30, 40, 50, 60, 70]);
    expect(r.window).toEqual([[0, 1, 2], [3], [], [4, 5, 6, 7]]);
    expect(r.count).toBe(4);
    // the windows are domains for splitByDomain: every piece lies in one window
    expect(splitByDomain({ offsets: [5], lengths: [30] }, r.bounds).pairs.slice(0, 5)).toEqual([[5, 5], [10, 10], [20, 5], [25, 5], [30, 5]]);
  });

  it('isInterleaved: overlapping ranges, ignoring empty ones', () => {
    expect(isInterleaved([[0, 10], [10, 20]])).toBe(false);
    expect(isInterleaved([[0, 10], [5, 20]])).toBe(true);
    expect(isInterleaved([[0, 0], [0, 10], [0, 0]])).toBe(false);
  });

  it('wantsTwoPhase (romio_cb_* automatic): interleaved ranges with some process\'s pieces small on average', () => {
    const L = LARGE_PIECE_BYTES;
    // two processes alternating pieces of 1 KiB: aggregate
    expect(wantsTwoPhase([[0, 2048 * 100, 1024 * 100, 100], [1024, 2048 * 100 + 1024, 1024 * 100, 100]])).toBe(true);
    // the same ranges with pieces of LARGE_PIECE_BYTES and more (a 3-D array's 2 x 2 x 1 blocks): each process accesses the file itself
    expect(wantsTwoPhase([[0, 4 * L, 2 * L, 2], [L, 5 * L, 2 * L, 2]])).toBe(false);
    // one process with small pieces is enough: every process must take the same path
    expect(wantsTwoPhase([[0, 4 * L, 2 * L, 2], [L, 5 * L, 2 * L, 3 * 64]])).toBe(true);
    // ranges apart: never, whatever the pieces; a process with nothing to access does not count
    expect(wantsTwoPhase([[0, 10, 10, 10], [10, 20, 10, 10]])).toBe(false);
    expect(wantsTwoPhase([[0, 4 * L, 2 * L, 2], [L, 5 * L, 2 * L, 2], [0, 0, 0, 0]])).toBe(false);
  });
});

describe('amode', () => {
  it('accepts one access mode, with CREATE / EXCL when writable', () => {
    expect(checkAmode(MODE_RDWR | MODE_CREATE | MODE_EXCL, 'File.open')).toBe(MODE_RDWR | MODE_CREATE | MODE_EXCL);
    expect(checkAmode(MODE_WRONLY | MODE_SEQUENTIAL, 'File.open')).toBe(MODE_WRONLY | MODE_SEQUENTIAL);
  });

  it.each([
    [0, 'has 0 of'],
    [MODE_RDONLY | MODE_WRONLY, 'has 2 of'],
    [MODE_RDONLY | MODE_CREATE, 'not allowed with MODE_RDONLY'],
    [MODE_RDONLY | MODE_EXCL, 'not allowed with MODE_RDONLY'],
    [MODE_RDWR | MODE_SEQUENTIAL, 'MODE_SEQUENTIAL'],
    [MODE_RDWR | 1024, 'no MPI.MODE_'],
  ])('refuses %i with ERR_AMODE', (amode, text) => {
    try {
      checkAmode(amode, 'File.open');
      expect.unreachable();
    } catch (e) {
      expect((e as MPIError).errorClass).toBe(ERR_AMODE);
      expect((e as MPIError).message).toContain(text);
    }
  });
});

describe('fileError', () => {
  it('maps the OS code to the class and keeps path and reason', () => {
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open '/x/y'"), { code: 'ENOENT' });
    const e = fileError(enoent, 'File.open', '/x/y');
    expect(e.errorClass).toBe(ERR_NO_SUCH_FILE);
    expect(e.message).toBe('MPI_ERR_NO_SUCH_FILE: File.open: /x/y: ENOENT (no such file or directory)');
    expect(e.cause).toBe(enoent);
    expect(fileError(Object.assign(new Error('EEXIST: file already exists'), { code: 'EEXIST' }), 'File.open', 'p').errorClass).toBe(ERR_FILE_EXISTS);
    expect(fileError(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }), 'File.WriteAt', 'p').errorClass).toBe(ERR_IO);
  });
});
