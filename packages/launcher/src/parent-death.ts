/**
 * Ranks that die with their parent (mpiexec, or the proxy on a remote host).
 * A parent killed -9 cannot kill its ranks, and a rank that has not joined
 * the wire-up yet has no other link to the job: it would live on until its
 * own join failed, which for a program that works for a while before
 * MPI.init (or never calls it) is unbounded. Node has
 * no parent-death signal, but Linux has (prctl PR_SET_PDEATHSIG), and
 * util-linux's setpriv (Essential in Debian, in every util-linux since 2.33)
 * sets it and then execs the rank: the rank keeps its pid and its process
 * group, and the kernel sends it SIGKILL the moment its parent dies.
 * Only Node ranks are wrapped: another program that cannot be executed must
 * still be reported as "could not be started", not as setpriv's exit 126/127.
 * Where setpriv is missing or too old the rank starts as before and the old
 * bound holds (docs/RELIABILITY.md, known open points).
 */
import { spawnSync } from 'node:child_process';

/** A rank's command: what spawn() gets. */
export interface Command {
  readonly file: string;
  readonly args: readonly string[];
}

/** `cmd` run under `setpriv --pdeathsig KILL` (setpriv's path given), so that it dies with its parent. */
export function withParentDeath(cmd: Command, setpriv: string | null): Command {
  if (setpriv === null) return cmd;
  return { file: setpriv, args: ['--pdeathsig', 'KILL', '--', cmd.file, ...cmd.args] };
}

/** 'setpriv' when this host's setpriv sets a parent-death signal (one probe run, Linux only), else null. */
export function findSetpriv(): string | null {
  if (process.platform !== 'linux') return null;
  const probe = spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore', timeout: 5_000 });
  return probe.status === 0 ? 'setpriv' : null;
}
