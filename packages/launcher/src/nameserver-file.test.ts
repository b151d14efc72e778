// Unit tests of the name server's file (nameserver-file.ts, docs/adr/0046-name-server-between-jobs.md):
// the line, the default place, creation (O_EXCL, 0600, the directory's checks) and mpiexec's checks on
// reading (owner, mode, symbolic link, regular file, content). Files in a temporary directory.
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createNameserverFile, defaultNameserverFile, formatNameserverLine, nameserverDirProblem, parseNameserverLine, readNameserverFile,
} from './nameserver-file.ts';

const SECRET = 'ab'.repeat(32);
const uid = process.getuid?.() ?? 0;
let dir = '';

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'names-unit-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function message(v: unknown): string {
  expect(v).toBeInstanceOf(Error);
  return (v as Error).message;
}

describe('the line', () => {
  it('round-trips an IPv4 address, a host name and an IPv6 address (in brackets)', () => {
    for (const host of ['127.0.0.1', 'node-7.cluster', '::1']) {
      const line = formatNameserverLine({ host, port: 4321, secret: SECRET });
      expect(parseNameserverLine(line)).toEqual({ host, port: 4321, secret: SECRET });
    }
    expect(formatNameserverLine({ host: '::1', port: 1, secret: SECRET })).toBe(`tsmpi-nameserver:[::1]:1:${SECRET}\n`);
  });

  it('refuses other text without quoting it (it may hold a secret)', () => {
    for (const text of ['', 'hello', `tsmpi-nameserver:h:0:${SECRET}`, `tsmpi-nameserver:h:70000:${SECRET}`, 'tsmpi-nameserver:h:1:abc', `tsmpi-nameserver:h:1:${SECRET}\nmore`]) {
      const m = message(parseNameserverLine(text));
      expect(m).toMatch(/not a tsmpi-nameserver file/);
      expect(m).not.toContain(SECRET);
    }
  });

  it('defaults to $XDG_RUNTIME_DIR/tsmpi-nameserver, else ~/.tsmpi/nameserver', () => {
    expect(defaultNameserverFile({ XDG_RUNTIME_DIR: '/run/user/1000' }, '/home/u')).toBe('/run/user/1000/tsmpi-nameserver');
    expect(defaultNameserverFile({}, '/home/u')).toBe('/home/u/.tsmpi/nameserver');
    expect(defaultNameserverFile({ XDG_RUNTIME_DIR: 'relative' }, '/home/u')).toBe('/home/u/.tsmpi/nameserver');
  });
});

describe('creating the file (tsmpi-nameserver)', () => {
  it('creates it with mode 0600 whatever the umask, and its missing directory with 0700', () => {
    const file = path.join(dir, 'sub', 'nameserver');
    const old = process.umask(0);
    try {
      expect(createNameserverFile(file, 'line\n', uid)).toBeNull();
    } finally {
      process.umask(old);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toBe('line\n');
  });

  it('refuses a file that exists (O_EXCL), and a symbolic link in its place, without touching either', () => {
    const file = path.join(dir, 'ns');
    writeFileSync(file, 'theirs', { mode: 0o600 });
    expect(message(createNameserverFile(file, 'mine\n', uid))).toMatch(/ns: already exists/);
    expect(readFileSync(file, 'utf8')).toBe('theirs');
    const target = path.join(dir, 'target');
    const link = path.join(dir, 'link');
    symlinkSync(target, link);
    expect(message(createNameserverFile(link, 'mine\n', uid))).toMatch(/link: already exists/);
    expect(() => statSync(target)).toThrow();
  });

  it('refuses a directory group or others may write, or another user owns', () => {
    chmodSync(dir, 0o777);
    expect(message(createNameserverFile(path.join(dir, 'ns'), 'l\n', uid))).toMatch(/has permissions 0777: group or others may write it/);
    chmodSync(dir, 0o720);
    expect(nameserverDirProblem(dir, uid)).toMatch(/0720/);
    chmodSync(dir, 0o755);
    expect(nameserverDirProblem(dir, uid)).toBeNull();
    expect(nameserverDirProblem(dir, uid + 1)).toMatch(new RegExp(`owned by uid ${uid}, not by this user \\(uid ${uid + 1}\\)`));
    expect(nameserverDirProblem(path.join(dir, 'missing'), uid)).toMatch(/cannot be read \(ENOENT\)/);
  });
});

describe("reading the file (mpiexec's checks)", () => {
  function made(): string {
    const file = path.join(dir, 'ns');
    expect(createNameserverFile(file, formatNameserverLine({ host: '127.0.0.1', port: 999, secret: SECRET }), uid)).toBeNull();
    return file;
  }

  it('reads the address of a file the server made', () => {
    expect(readNameserverFile(made(), uid)).toEqual({ host: '127.0.0.1', port: 999, secret: SECRET });
  });

  it('refuses a symbolic link, even to a good file', () => {
    const link = path.join(dir, 'link');
    symlinkSync(made(), link);
    expect(message(readNameserverFile(link, uid))).toMatch(/is a symbolic link/);
  });

  it('refuses group or other permission bits, naming the mode', () => {
    const file = made();
    for (const mode of [0o640, 0o604, 0o660, 0o606]) {
      chmodSync(file, mode);
      expect(message(readNameserverFile(file, uid))).toMatch(new RegExp(`has permissions 0${mode.toString(8)}: group or others`));
    }
  });

  it("refuses a file another user owns (a hard link counts as the owner's file)", () => {
    const file = made();
    expect(message(readNameserverFile(file, uid + 1))).toMatch(new RegExp(`is owned by uid ${uid}, not by this user \\(uid ${uid + 1}\\)`));
    const hard = path.join(dir, 'hard');
    linkSync(file, hard);
    expect(message(readNameserverFile(hard, uid + 1))).toMatch(/is owned by uid/);
  });

  it('refuses a missing file, a directory and a file of another content', () => {
    expect(message(readNameserverFile(path.join(dir, 'none'), uid))).toMatch(/does not exist/);
    const sub = path.join(dir, 'sub');
    mkdirSync(sub, { mode: 0o700 });
    expect(message(readNameserverFile(sub, uid))).toMatch(/is not a regular file/);
    const other = path.join(dir, 'other');
    writeFileSync(other, 'x'.repeat(10_000), { mode: 0o600 });
    expect(message(readNameserverFile(other, uid))).toMatch(/not a tsmpi-nameserver file/);
  });
});
