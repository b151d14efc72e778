/**
 * The name server's file (docs/adr/0046-name-server-between-jobs.md): the one place its secret is
 * written. tsmpi-nameserver creates it; `mpiexec --nameserver FILE` reads it.
 *
 * One line: `tsmpi-nameserver:HOST:PORT:SECRET` (an IPv6 HOST in brackets, SECRET 64 hex digits).
 * Whoever reads it can use the server (publish, look up the jobs' port strings), so:
 *
 *   - the server creates it with O_EXCL | O_NOFOLLOW and mode 0600, in a directory owned by the user
 *     and not writable by group or others (else another user could swap or remove it);
 *   - mpiexec opens it with O_NOFOLLOW and checks on the open file (no window between check and read)
 *     that it is a regular file owned by the user with no group or other bits: a file another user
 *     could have written could point mpiexec at their server, which would then receive the job's ports.
 *
 * Each refusal says which check failed, as ssh does for a key file. Pure apart from the file system.
 */
import { closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where tsmpi-nameserver and mpiexec meet: the file's line and what mpiexec dials. */
export interface NameserverAddress {
  /** As the line writes it (an IPv6 address without brackets). */
  readonly host: string;
  readonly port: number;
  /** 64 hex digits (256 bits). */
  readonly secret: string;
}

/** Every line starts so. */
const LINE_PREFIX = 'tsmpi-nameserver:';
const LINE = /^tsmpi-nameserver:(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):(\d{1,5}):([0-9a-f]{64})\n?$/;
/** Longest file read: the line is about 130 bytes; a bigger file is not ours. */
const MAX_FILE_BYTES = 4096;

/** "host:port" as a URL or a key-proof binding writes it (IPv6 in brackets). */
export function nameserverHostPort(a: Pick<NameserverAddress, 'host' | 'port'>): string {
  return `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
}

/** The file's line for `a`. */
export function formatNameserverLine(a: NameserverAddress): string {
  return `${LINE_PREFIX}${nameserverHostPort(a)}:${a.secret}\n`;
}

/** The address in a file's text, or an Error saying what is wrong with it (never the text: it may hold a secret). */
export function parseNameserverLine(text: string): NameserverAddress | Error {
  const m = LINE.exec(text);
  const port = m === null ? 0 : Number(m[2]);
  if (m === null || port < 1 || port > 65535) return new Error('is not a tsmpi-nameserver file (expected one line tsmpi-nameserver:HOST:PORT:SECRET)');
  return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port, secret: m[3]! };
}

/** The default file: $XDG_RUNTIME_DIR/tsmpi-nameserver, else ~/.tsmpi/nameserver. */
export function defaultNameserverFile(env: NodeJS.ProcessEnv, home = os.homedir()): string {
  const runtime = env['XDG_RUNTIME_DIR'];
  return runtime !== undefined && path.isAbsolute(runtime) ? path.join(runtime, 'tsmpi-nameserver') : path.join(home, '.tsmpi', 'nameserver');
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

function errorCode(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? 'error';
}

/**
 * Why `dir` may not hold the secret, or null: it must be a directory owned by `uid`, not writable by
 * group or others (whoever may write a directory may replace or remove the files in it).
 */
export function nameserverDirProblem(dir: string, uid: number): string | null {
  let st;
  try {
    st = statSync(dir);
  } catch (e) {
    return `directory ${dir}: cannot be read (${errorCode(e)})`;
  }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (st.uid !== uid) return `directory ${dir} is owned by uid ${st.uid}, not by this user (uid ${uid})`;
  if ((st.mode & 0o022) !== 0) return `directory ${dir} has permissions ${octal(st.mode)}: group or others may write it (chmod go-w ${dir})`;
  return null;
}

/**
 * Creates `file` holding `line`, mode 0600, failing if it exists (O_EXCL) or is a symbolic link
 * (O_NOFOLLOW). A missing parent directory is created with mode 0700 (~/.tsmpi the first time).
 * @returns null, or an Error naming the file and the check that failed
 */
export function createNameserverFile(file: string, line: string, uid = process.getuid?.() ?? 0): Error | null {
  const dir = path.dirname(path.resolve(file));
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if (errorCode(e) !== 'EEXIST') return new Error(`${file}: cannot create its directory ${dir} (${errorCode(e)})`);
  }
  const why = nameserverDirProblem(dir, uid);
  if (why !== null) return new Error(`${file}: ${why}`);
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    const code = errorCode(e);
    if (code === 'EEXIST') return new Error(`${file}: already exists (another tsmpi-nameserver uses it, or one was killed before it removed it: remove it, or give --file)`);
    return new Error(`${file}: cannot create it (${code})`);
  }
  try {
    // The umask may only have taken bits away; make sure no group or other bit is left either way.
    fchmodSync(fd, 0o600);
    writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
  return null;
}

/**
 * Opens `file` without following a symbolic link, checks it (a regular file, owned by `uid`, no group or
 * other permission bits) and reads its address.
 * @returns the address, or an Error whose message names the check that failed (the caller names the file)
 */
export function readNameserverFile(file: string, uid = process.getuid?.() ?? 0): NameserverAddress | Error {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = errorCode(e);
    if (code === 'ELOOP') return new Error('is a symbolic link (give the file itself: a link another user can change could point at their server)');
    if (code === 'ENOENT') return new Error('does not exist (is tsmpi-nameserver running? It writes the file when it starts)');
    if (code === 'EACCES') return new Error('cannot be read by this user (EACCES: the name server\'s file is its user\'s only)');
    return new Error(`cannot be opened (${code})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return new Error('is not a regular file');
    if (st.uid !== uid) return new Error(`is owned by uid ${st.uid}, not by this user (uid ${uid}): another user's file could point at their server`);
    if ((st.mode & 0o077) !== 0) return new Error(`has permissions ${octal(st.mode)}: group or others may read or write it (chmod 600 it, or restart tsmpi-nameserver)`);
    const buf = Buffer.alloc(MAX_FILE_BYTES);
    const n = readSync(fd, buf, 0, MAX_FILE_BYTES, 0);
    return parseNameserverLine(buf.subarray(0, n).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}
