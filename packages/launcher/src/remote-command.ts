/**
 * How mpiexec starts a proxy on another host, and what an early failure of
 * that start means. Pure: builds argv and reads ssh's stderr text.
 *
 * The command (Hydra's bootstrap ssh, Open MPI's plm/ssh, in spirit):
 *
 *     ssh -x -T -o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 \
 *         -o ServerAliveCountMax=3 -- HOST 'cd WDIR || exit 126; exec NODE PROXY'
 *
 * -x: no X11; -T: no terminal (stdin stays a pipe carrying the launch spec);
 * BatchMode: never ask for a password or a host key (a prompt would hang the
 * job: fail with a message instead). `--`: nothing after it is an option, so
 * a host name can never become one (names beginning with "-" are refused
 * when the host list is read, process-map.ts). `--launcher-exec CMD` replaces
 * "ssh"; when CMD's program is ssh, the options above and `--` are still added.
 */
import path from 'node:path';

/** ssh gives up connecting after this many seconds. */
export const SSH_CONNECT_TIMEOUT_SEC = 10;
/** ssh's own keep-alive: a silent server is dropped after interval x count seconds. */
const SSH_ALIVE_INTERVAL_SEC = 5;
const SSH_ALIVE_COUNT = 3;
/** The remote command's status when the working directory does not exist there. */
export const NO_WDIR_STATUS = 126;

/** Quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Splits a --launcher-exec value into words (spaces separate; single and double quotes group). */
export function splitCommand(text: string): string[] | Error {
  const words: string[] = [];
  let cur = '';
  let hasWord = false;
  let quote: string | null = null;
  for (const ch of text) {
    if (quote !== null) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      hasWord = true;
    } else if (/\s/.test(ch)) {
      if (hasWord) words.push(cur);
      cur = '';
      hasWord = false;
    } else {
      cur += ch;
      hasWord = true;
    }
  }
  if (quote !== null) return new Error(`--launcher-exec ${text}: unbalanced quote`);
  if (hasWord) words.push(cur);
  if (words.length === 0) return new Error('--launcher-exec: expected a command (e.g. "ssh -F cluster.conf")');
  return words;
}

/** The shell command the remote host runs: change to wdir, then exec the proxy. */
export function remoteShellCommand(wdir: string, node: string, proxyArgs: readonly string[]): string {
  const exec = [node, ...proxyArgs].map(shellQuote).join(' ');
  return `cd ${shellQuote(wdir)} 2>/dev/null || { echo "tsmpi: no directory ${wdir.replace(/["$`\\]/g, '')} on host $(hostname)" >&2; exit ${NO_WDIR_STATUS}; }; exec ${exec}`;
}

/**
 * argv of the local process that starts the proxy on `host`.
 * @param launcherExec - the --launcher-exec words, or null for plain ssh
 */
export function remoteLaunchArgv(launcherExec: readonly string[] | null, host: string, command: string): { file: string; args: string[] } {
  const words = launcherExec ?? ['ssh'];
  const file = words[0]!;
  const args = words.slice(1);
  if (path.basename(file) === 'ssh') {
    args.push(
      '-x', '-T',
      '-o', 'BatchMode=yes',
      '-o', `ConnectTimeout=${SSH_CONNECT_TIMEOUT_SEC}`,
      '-o', `ServerAliveInterval=${SSH_ALIVE_INTERVAL_SEC}`,
      '-o', `ServerAliveCountMax=${SSH_ALIVE_COUNT}`,
      '--',
    );
  }
  args.push(host, command);
  return { file, args };
}

/**
 * Explains why the proxy on `host` never connected back, from the exit status
 * of ssh (or the --launcher-exec command) and its stderr.
 * @returns one line without the "mpiexec: " prefix
 */
export function explainStartFailure(host: string, status: number | null, signal: string | null, stderr: string, node: string): string {
  const said = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('Warning: Permanently added'));
  const last = said.length === 0 ? '' : `: ${said[said.length - 1]}`;
  const t = stderr;
  if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No .* host key is known/i.test(t)) {
    return `host ${host}: ssh does not know its host key${last}; add it to known_hosts first (ssh ${host} true, answer yes) or set StrictHostKeyChecking in ~/.ssh/config`;
  }
  if (/Permission denied|Too many authentication failures|authentication/i.test(t)) {
    return `host ${host}: ssh authentication refused${last}; set up key-based login without a password (ssh-copy-id ${host}; ssh -o BatchMode=yes ${host} true must work)`;
  }
  if (/Could not resolve hostname|Name or service not known|No route to host|Connection refused|Connection timed out|Network is unreachable|Operation timed out|connect to host/i.test(t)) {
    return `host ${host}: unreachable${last}; check the host name, that the machine is up and runs sshd (ssh ${host} true)`;
  }
  if (status === 127 || /command not found|No such file or directory/.test(t) && /node|exec/.test(t)) {
    return `host ${host}: ${node} was not found there${last}; install Node.js at the same path on every host, or give --prefix DIR (node is DIR/bin/node)`;
  }
  if (/Cannot find module|ERR_MODULE_NOT_FOUND/.test(t)) {
    return `host ${host}: tsmpi's proxy was not found there${last}; install tsmpi at the same path on every host (or share it over a network file system)`;
  }
  if (status === NO_WDIR_STATUS) {
    return `host ${host}: the working directory does not exist there${last}; use --wdir DIR with a directory every host has`;
  }
  const how = signal !== null ? `was killed by signal ${signal}` : `exited with status ${status ?? '?'}`;
  return `host ${host}: the remote launch ${how} before its proxy connected back${last}`;
}
