/**
 * When mpiexec tries the ssh to a host again: a host that is not up yet
 * (its name does not resolve, its sshd refuses or does not answer) is tried
 * again with backoff for a bounded time, as pods of a Kubernetes MPIJob come
 * up after the launcher (the Kubeflow MPI Operator's launcher starts at once;
 * its own images retry name resolution in a shell loop and pass ssh
 * `-o ConnectionAttempts=10`). Any other failure (authentication, host key,
 * node missing there) is final at once: trying again would only delay the
 * message. Pure: the caller runs ssh and the timers.
 *
 * Schedule: waits of 1, 2, 4, 8, 8, ... seconds between attempts, while the
 * time since the first attempt stays within the window (--connect-retry;
 * by default DEFAULT_CONNECT_RETRY_SEC for hosts from the environment's
 * hostfile, as the Operator writes it, and none for hosts typed on the
 * command line, where an unknown name is more likely a typo).
 */

/** The window for hosts from the environment's hostfile (launch-env.ts) when --connect-retry is not given: long enough for a pod's image pull and sshd start, short enough that a wrong host name is reported the same minute or two. */
export const DEFAULT_CONNECT_RETRY_SEC = 120;
/** First wait, and the largest: ssh's own ConnectTimeout bounds each attempt. */
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 8_000;
/** ssh's status for its own failures (connection, authentication). */
const SSH_FAILED_STATUS = 255;
/** What ssh prints when the host is not (yet) there, as opposed to refusing us. */
const NOT_UP_YET = /Could not resolve hostname|Name or service not known|Temporary failure in name resolution|Connection refused|No route to host|Connection timed out|Network is unreachable|kex_exchange_identification|Connection reset by peer|Connection closed by remote host/i;
/** What shows the host is there and said no: never retried. */
const REFUSED_US = /Permission denied|Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|Too many authentication failures/i;

/** True when ssh's exit (`status`, its stderr) says the host is not reachable yet, so a later attempt may work. */
export function isNotUpYet(status: number | null, stderr: string): boolean {
  return status === SSH_FAILED_STATUS && NOT_UP_YET.test(stderr) && !REFUSED_US.test(stderr);
}

/** The next attempt: its number (2 for the first retry) and the wait before it. */
export interface RetryStep {
  readonly attempt: number;
  readonly waitMs: number;
}

/** The retry state of one host's launch. */
export class ConnectRetry {
  readonly #windowMs: number;
  readonly #now: () => number;
  #firstAt: number | null = null;
  #attempts = 0;

  /**
   * @param windowMs - how long after the first attempt a new one may still start; 0: never retry
   * @param now - the clock (Date.now; tests pass their own)
   */
  constructor(windowMs: number, now: () => number = Date.now) {
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /** Attempts started so far. */
  get attempts(): number {
    return this.#attempts;
  }

  /** Seconds from the first attempt to now (for the final message). */
  get elapsedSec(): number {
    return this.#firstAt === null ? 0 : Math.round((this.#now() - this.#firstAt) / 1000);
  }

  /** An attempt starts now. */
  started(): void {
    this.#firstAt ??= this.#now();
    this.#attempts++;
  }

  /**
   * The attempt that just ended with `status` and `stderr` failed: when is the next one?
   * @returns the next step, or null when the failure is final or the window is spent
   */
  next(status: number | null, stderr: string): RetryStep | null {
    if (!isNotUpYet(status, stderr) || this.#firstAt === null) return null;
    const waitMs = Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (this.#attempts - 1));
    if (this.#now() + waitMs - this.#firstAt > this.#windowMs) return null;
    return { attempt: this.#attempts + 1, waitMs };
  }
}
