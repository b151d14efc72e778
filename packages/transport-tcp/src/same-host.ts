/**
 * Same-host connections over Unix-domain sockets in a directory no other user can enter
 * (docs/adr/0029, superseding 0012's abstract names).
 *
 * Every process of a job on one host puts its same-host sockets in one directory:
 *
 *   <tmp>/tsmpi-<HMAC-SHA256(jobKey, "same-host directory")[0..16) as hex>/
 *       t-<process>-<port>              a transport's listener (published, see address.ts)
 *       r-<process>-<endpoint>-<epoch>  an endpoint reader's or a claim's listener (computed)
 *
 * <tmp> is os.tmpdir() (TMPDIR), or /tmp when that would make a path longer than a
 * sockaddr_un holds. The directory has mode 0700 and belongs to the job's user: whoever of the
 * job comes first creates it (mkdir is atomic), the others check it (ensureSameHostDirectory),
 * and a directory that is not one (a symbolic link, another owner, other users' permission bits)
 * turns the same-host sockets off: that transport is reached over TCP, a reader does not listen.
 * Other users can neither connect to these sockets nor bind names in the directory, and cannot
 * create the directory first: its name needs the job key, which they do not have.
 *
 * Each socket file goes with its listener (Node unlinks it on close) or, if the listener never
 * closed, at its thread's 'exit', which then removes the directory if it is empty: a rank exits
 * after MPI.finalize, when every rank of the job has bound its transport's socket, and a rank that
 * may still bind keeps its own there, so the directory is not empty while anyone may need it (a
 * transport that closes does not try: the warm-up's closes before the rank's own binds). A rank
 * killed by a signal leaves its files: each host's proxy removes those of its ranks once they are
 * gone (removeSameHostSockets), and mpiexec the directory on its host once the job is over
 * (removeSameHostDirectory).
 *
 *       o-<pid>@<host name>             an owner: mpiexec, or a host's proxy (claimSameHostDirectory)
 *
 * When nothing of the job survives to clean up (mpiexec killed -9: its ranks die with it by their
 * parent-death signal, SIGKILL, and run no exit hook), the directory stays; the next mpiexec of
 * the same user on that host removes it (sweepStaleSameHostDirectories): a job directory whose
 * every owner process is gone is left over. Only owners of this host can be judged (a /tmp shared
 * between hosts holds other hosts' pids): a directory with an owner elsewhere, or with no owner
 * file (one made by transports outside mpiexec), is never swept.
 *
 * Why Unix sockets at all: raw Node, same machine and run (adr 0012): a 32-byte ping-pong took
 * 18.6 us per round trip over a Unix socket against 23.1 over TCP loopback, and 12-frame batches
 * ran at 0.339 against 0.278 M frames/s (medians): a Unix socket skips the TCP/IP stack.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Whether this platform has Unix-domain sockets with file names (every one Node runs on but Windows). */
export const HAS_UNIX_SOCKETS = process.platform !== 'win32';

/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const MAX_SOCKET_PATH_BYTES = 103;
/** The longest file name made here: a reader's with three u32 numbers. */
const LONGEST_NAME = 'r-4294967295-4294967295-4294967295';

/** The directory of the job keyed `jobKey`'s same-host sockets on this host (not created here). */
export function sameHostDirectory(jobKey: string): string {
  const name = `tsmpi-${createHmac('sha256', jobKey).update('same-host directory').digest('hex').slice(0, 32)}`;
  const base = os.tmpdir();
  const fits = Buffer.byteLength(path.join(base, name, LONGEST_NAME)) <= MAX_SOCKET_PATH_BYTES;
  return path.join(fits ? base : '/tmp', name);
}

/** The socket path of the transport of process `process` whose TCP listener has port `port`. */
export function transportSocketPath(jobKey: string, process: number, port: number): string {
  return path.join(sameHostDirectory(jobKey), `t-${process >>> 0}-${port}`);
}

/**
 * The socket path of the reader of endpoint `endpoint` of process `process`, in its `epoch`-th
 * reading (docs/adr/0019; core's readers and claims listen on it): a sender computes it from what it
 * knows, so nothing is published; a sender dials it only once the reader announced that it listens.
 * The epoch keeps a sender that still knows an old reader from reaching a new one by its name.
 */
export function readerSocketName(jobKey: string, process: number, endpoint: number, epoch: number): string {
  return path.join(sameHostDirectory(jobKey), `r-${process >>> 0}-${endpoint >>> 0}-${epoch >>> 0}`);
}

/**
 * Makes sure the directory `dir` exists, is a directory (not a link to one), belongs to this user
 * and has no permission bits for anyone else; creates it (mode 0700) when it does not exist.
 * @throws an Error saying what is wrong with it (the caller then does without same-host sockets)
 */
export function ensureSameHostDirectory(dir: string): void {
  let created = false;
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (created) fs.chmodSync(dir, 0o700); // the umask may have taken the owner's own bits
  checkOwnDirectory(dir);
}

/** @throws unless `dir` is a directory (not a link) of this user's with no bits for group or others */
export function checkOwnDirectory(dir: string): void {
  const st = fs.lstatSync(dir);
  const uid = process.getuid?.() ?? -1;
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (st.uid !== uid) throw new Error(`${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`);
  if ((st.mode & 0o077) !== 0) throw new Error(`${dir} has mode ${(st.mode & 0o777).toString(8)}, open to other users`);
}

/**
 * Removes the job's same-host directory on this host and what is left in it (the socket files of
 * ranks that were killed): mpiexec calls it once the job is over, when no rank of the job runs.
 * Only a directory of this user's, as ensureSameHostDirectory checks, is touched; never throws.
 */
export function removeSameHostDirectory(jobKey: string): void {
  const dir = sameHostDirectory(jobKey);
  try {
    checkOwnDirectory(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // Absent (no rank here used it) or not ours: nothing of ours to remove.
  }
}

/**
 * Removes the socket files of processes `processes` of the job from its same-host directory on this
 * host, then the directory if that left it empty: a proxy calls it once its ranks are gone (other
 * ranks of the job may share the host, and the directory, in a cluster of network namespaces).
 * Only a directory of this user's is touched; never throws.
 */
export function removeSameHostSockets(jobKey: string, processes: readonly number[]): void {
  const dir = sameHostDirectory(jobKey);
  const own = new Set(processes.map((p) => String(p >>> 0)));
  try {
    checkOwnDirectory(dir);
    for (const name of fs.readdirSync(dir)) {
      // t-<process>-<port> and r-<process>-<endpoint>-<epoch>
      if (name.startsWith('o-')) continue;
      if (own.has(name.split('-')[1] ?? '')) fs.rmSync(path.join(dir, name), { force: true });
    }
    // This process (the proxy) no longer owns it.
    fs.rmSync(ownerFile(dir), { force: true });
    fs.rmdirSync(dir);
  } catch {
    // Absent, not ours, or still in use by other ranks here.
  }
}

/** The owner file of this process (an `o-` name never collides with a socket's `t-` or `r-`). */
function ownerFile(dir: string): string {
  return path.join(dir, `o-${process.pid}@${os.hostname()}`);
}

/**
 * Makes the job's same-host directory on this host (as ensureSameHostDirectory) and records this
 * process (mpiexec, a proxy) as an owner of it: while an owner lives the directory is in use; once
 * every owner is gone and it is still there, the next mpiexec sweeps it. Never throws (a directory
 * that cannot be made is the ranks' business: they go without same-host sockets).
 */
export function claimSameHostDirectory(jobKey: string): void {
  const dir = sameHostDirectory(jobKey);
  try {
    ensureSameHostDirectory(dir);
    fs.writeFileSync(ownerFile(dir), '', { mode: 0o600 });
  } catch {
    // not ours, or no room: nothing to claim
  }
}

/** Whether process `pid` exists (one of another user's counts: kill answers EPERM). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes this user's job directories (tsmpi-<32 hex> of mode 0700 under the temporary directory
 * and /tmp) whose every owner (claimSameHostDirectory) is gone: what a job left when nothing of it
 * survived to clean up. mpiexec calls it as a job starts. Returns the directories removed; never
 * throws.
 */
export function sweepStaleSameHostDirectories(): string[] {
  const removed: string[] = [];
  for (const base of new Set([os.tmpdir(), '/tmp'])) {
    let names: string[];
    try {
      names = fs.readdirSync(base);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!/^tsmpi-[0-9a-f]{32}$/.test(name)) continue;
      const dir = path.join(base, name);
      try {
        checkOwnDirectory(dir);
        const owners = fs.readdirSync(dir).map((n) => /^o-(\d+)@(.*)$/.exec(n)).filter((m) => m !== null);
        const here = os.hostname();
        if (owners.length === 0 || owners.some((m) => m[2] !== here || isAlive(Number(m[1])))) continue;
        fs.rmSync(dir, { recursive: true, force: true });
        removed.push(dir);
      } catch {
        // not ours, or gone meanwhile
      }
    }
  }
  return removed;
}

/** Socket files this thread bound and has not closed yet: removed at its 'exit' if still there. */
const boundPaths = new Set<string>();
/** Directories this thread bound sockets in: removed at its 'exit' if empty. */
const usedDirs = new Set<string>();
let isExitHookSet = false;

/** Records the socket file `socketPath` this thread just bound (forgetBoundPath when its listener closes). */
export function rememberBoundPath(socketPath: string): void {
  boundPaths.add(socketPath);
  usedDirs.add(path.dirname(socketPath));
  if (isExitHookSet) return;
  isExitHookSet = true;
  process.on('exit', removeBoundPaths);
}

export function forgetBoundPath(socketPath: string): void {
  boundPaths.delete(socketPath);
}

/** At exit: the socket files still bound, then their directories if that left them empty (see the header). */
function removeBoundPaths(): void {
  for (const p of boundPaths) {
    try {
      fs.unlinkSync(p);
    } catch {
      // already gone
    }
  }
  for (const dir of usedDirs) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // not empty: other ranks here still use it
    }
  }
}

/**
 * Whether a peer that published `peerHost` runs on this transport's host (it published `ownHost`).
 * Only IP literals count: a host name (published for a wildcard listen address) can be shared
 * by two hosts (mpiexec --same-name), and the same name and port there would reach the wrong
 * process of the job.
 */
export function isSameHost(ownHost: string | null, peerHost: string): boolean {
  return ownHost !== null && ownHost === peerHost && net.isIP(peerHost) !== 0;
}
