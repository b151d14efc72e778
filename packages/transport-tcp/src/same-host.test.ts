import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  claimSameHostDirectory, ensureSameHostDirectory, isSameHost, readerSocketName, removeSameHostDirectory, removeSameHostSockets, sameHostDirectory,
  sweepStaleSameHostDirectories, transportSocketPath,
} from './same-host.ts';

const isRoot = process.getuid?.() === 0;
const made: string[] = [];
afterEach(() => {
  for (const p of made.splice(0)) fs.rmSync(p, { recursive: true, force: true });
});

/** A fresh directory path under the temporary directory, removed after the test. */
function scratch(): string {
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'same-host-test-')), 'dir');
  made.push(path.dirname(p));
  return p;
}

describe('same-host', () => {
  it('counts only an identical IP literal as this host', () => {
    expect(isSameHost('127.0.0.1', '127.0.0.1')).toBe(true);
    expect(isSameHost('10.1.0.2', '10.1.0.2')).toBe(true);
    expect(isSameHost('::1', '::1')).toBe(true);
    expect(isSameHost('10.1.0.2', '10.1.0.3')).toBe(false);
    expect(isSameHost('node', 'node')).toBe(false); // a shared host name may be two hosts
    expect(isSameHost(null, '127.0.0.1')).toBe(false);
  });

  it('names one directory per job from the job key, never the key itself, in the temporary directory', () => {
    const a = sameHostDirectory('key-1');
    expect(path.dirname(a)).toBe(os.tmpdir());
    expect(path.basename(a)).toMatch(/^tsmpi-[0-9a-f]{32}$/);
    expect(a).not.toContain('key-1');
    expect(sameHostDirectory('key-1')).toBe(a);
    expect(sameHostDirectory('key-2')).not.toBe(a);
  });

  it('names every transport\'s and reader\'s socket apart, inside the job\'s directory, within a sockaddr_un', () => {
    const dir = sameHostDirectory('key-1');
    const names = [
      transportSocketPath('key-1', 3, 4000), transportSocketPath('key-1', 3, 4001), transportSocketPath('key-1', 4, 4000),
      readerSocketName('key-1', 3, 7, 2), readerSocketName('key-1', 4, 7, 2), readerSocketName('key-1', 3, 8, 2),
      readerSocketName('key-1', 3, 7, 3), readerSocketName('key-1', 37, 2, 2), readerSocketName('key-1', 3, 72, 2),
    ];
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(path.dirname(n)).toBe(dir);
    expect(readerSocketName('key-2', 3, 7, 2)).not.toBe(readerSocketName('key-1', 3, 7, 2));
    const longest = readerSocketName('k', 2 ** 32 - 1, 2 ** 32 - 1, 2 ** 32 - 1);
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(103);
  });

  it('falls back to /tmp when the temporary directory would make a socket path too long', () => {
    const saved = process.env['TMPDIR'];
    process.env['TMPDIR'] = `/${'x'.repeat(80)}`;
    try {
      expect(path.dirname(sameHostDirectory('k'))).toBe('/tmp');
      expect(Buffer.byteLength(readerSocketName('k', 2 ** 32 - 1, 2 ** 32 - 1, 2 ** 32 - 1))).toBeLessThanOrEqual(103);
    } finally {
      if (saved === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = saved;
    }
  });

  it('makes the directory with mode 0700, and accepts it when it is already there', () => {
    const dir = scratch();
    const umask = process.umask(0o077 | 0o700); // even a umask that takes the owner's bits
    try {
      ensureSameHostDirectory(dir);
    } finally {
      process.umask(umask);
    }
    expect(fs.lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(() => ensureSameHostDirectory(dir)).not.toThrow();
  });

  it('refuses a directory open to other users, a symbolic link, or a file', () => {
    const open = scratch();
    fs.mkdirSync(open, { mode: 0o700 });
    fs.chmodSync(open, 0o755);
    expect(() => ensureSameHostDirectory(open)).toThrow(/mode 755, open to other users/);
    const target = scratch();
    fs.mkdirSync(target, { mode: 0o700 });
    const link = `${target}-link`;
    fs.symlinkSync(target, link);
    made.push(link);
    expect(() => ensureSameHostDirectory(link)).toThrow(/not a directory/);
    const file = scratch();
    fs.writeFileSync(file, '');
    expect(() => ensureSameHostDirectory(file)).toThrow(/not a directory/);
  });

  it.runIf(isRoot)('refuses a directory another user made first', () => {
    const dir = scratch();
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, 65534, 65534);
    expect(() => ensureSameHostDirectory(dir)).toThrow(/belongs to uid 65534, not to this user/);
  });

  it('removes the job\'s directory and what is in it, and only a directory of this user\'s', () => {
    const key = `remove-test-${process.pid}`;
    const dir = sameHostDirectory(key);
    ensureSameHostDirectory(dir);
    fs.writeFileSync(path.join(dir, 't-0-1'), '');
    removeSameHostDirectory(key);
    expect(fs.existsSync(dir)).toBe(false);
    removeSameHostDirectory(key); // absent: nothing happens
    fs.mkdirSync(dir, { mode: 0o755 });
    try {
      removeSameHostDirectory(key);
      expect(fs.existsSync(dir), 'a directory that is not one of ours stays').toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a directory whose every owner on this host is gone is swept; one with a live owner, an owner elsewhere or none is not', () => {
    // A pid that surely is gone: a child that has exited and been reaped.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const host = os.hostname();
    const cases: [string, string[], boolean][] = [
      ['dead owner', [`o-${dead}@${host}`, 't-0-1234'], true],
      ['live owner', [`o-${dead}@${host}`, `o-${process.pid}@${host}`], false],
      ['owner on another host', [`o-${dead}@${host}`, `o-${dead}@elsewhere`], false],
      ['no owner', ['t-0-1234'], false],
    ];
    const dirs = cases.map(([, files]) => {
      const dir = sameHostDirectory(randomBytes(32).toString('hex'));
      made.push(dir);
      ensureSameHostDirectory(dir);
      for (const f of files) fs.writeFileSync(path.join(dir, f), '');
      return dir;
    });
    const swept = sweepStaleSameHostDirectories();
    cases.forEach(([what, , gone], i) => {
      expect(fs.existsSync(dirs[i]!), what).toBe(!gone);
      expect(swept.includes(dirs[i]!), what).toBe(gone);
    });
  });

  it('an owner\'s claim keeps the directory; a proxy\'s removal of its ranks\' sockets takes its claim and the empty directory', () => {
    const key = randomBytes(32).toString('hex');
    const dir = sameHostDirectory(key);
    made.push(dir);
    claimSameHostDirectory(key);
    expect(fs.readdirSync(dir)).toEqual([`o-${process.pid}@${os.hostname()}`]);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(sweepStaleSameHostDirectories()).not.toContain(dir);
    fs.writeFileSync(path.join(dir, 't-3-1000'), '');
    removeSameHostSockets(key, [3]);
    expect(fs.existsSync(dir)).toBe(false);
  });
});
