/**
 * When a polling thread gives its core away: the yield policy of blocking
 * calls (wait-poll.ts polls; this decides how often each turn yields).
 *
 * The C libraries decide this from how many of their processes share a host's
 * cores. Open MPI sets mpi_yield_when_idle when a node runs more processes than
 * it has slots, and then calls sched_yield from its progress loop whenever a
 * pass found nothing to do; with a core per process it spins and never yields.
 * UPC++ (UPCXX_OVERSUBSCRIBED, unset: ranks on this host against its CPUs)
 * yields after about ten consecutive empty progress calls, and MPICH's
 * nemesis progress engine after MPIR_CVAR_POLLS_BEFORE_YIELD (1000) polls.
 *
 * tsmpi does both:
 *   - more processes of the job on this host than cores (TSMPI_LOCAL_SIZE from
 *     the launcher against os.availableParallelism()): yield in every poll
 *     turn, as ADR 0005 measured (a peer that has work gets the core at once),
 *     and sleep once a blocking call has polled `spinTurns` (waitSpinTurns)
 *     turns. The peer a rank waits for either runs on the other core (its
 *     reply comes within a few turns) or waits for this rank's core (a yield
 *     hands it over, and it replies before the next turn or two); a wait that
 *     outlasts ten yielding turns waits for a peer that other processes keep
 *     off the cores, and every further turn is a core taken from them. Open
 *     MPI yields forever, but its progress loop costs a fraction of a Node
 *     event-loop turn: polling a whole 4-on-2 allreduce cost 5.3x Open MPI's
 *     CPU per call (issue 40), and 3.4x what sleeping costs on a loaded
 *     machine;
 *   - otherwise spin `spinTurns` turns of a blocking call without yielding
 *     (setting waitSpinTurns, default 10), then yield in every turn. A reply
 *     that comes within a few microseconds (a ping-pong, a small allreduce's
 *     next step) then costs no system call beyond the socket's; a wait that
 *     lasts longer, for example because other programs occupy the cores and
 *     the peer is descheduled, yields after about 10 turns instead of holding
 *     the core for a whole time slice, which ADR 0005 measured as ruinous.
 * A sched_yield costs 0.6 us of CPU here (a KVM guest), a poll turn with
 * nothing to read 1-3 us, so ten turns are 10-30 us: about one small-message
 * round trip.
 *
 * On an oversubscribed host a turn that comes back late also ends polling
 * (lateTurnMs, docs/adr/0048): a yield hands the core to whoever is next, and
 * when that is not a peer rank (which does its step and yields back within
 * tens of microseconds) but a program that does not yield (another job's,
 * mpiexec, V8's compiler threads), the core comes back only when the
 * scheduler's slice ends, milliseconds later. Polling is then what makes the
 * tail: a sleeper is woken by its socket, a yielder waits for the slice.
 */

/** What the launcher and the machine say about this process's host. */
export interface HostShare {
  /** Processes of the job on this host (TSMPI_LOCAL_SIZE); 1 when run without mpiexec. */
  readonly localSize: number;
  /** Cores this process may use (os.availableParallelism()). */
  readonly cores: number;
  /** The waitSpinTurns setting. */
  readonly spinTurns: number;
}

/** The policy for this process. */
export interface PollPolicy {
  /** More processes of the job on this host than cores. */
  readonly isOversubscribed: boolean;
  /** Poll turns of a blocking call that do not yield; every later turn yields. 0: yield in every turn. */
  readonly spinTurns: number;
  /** Poll turns after which a blocking call sleeps until a socket wakes it (Infinity: it polls for its whole budget). */
  readonly sleepAfterTurns: number;
  /** A gap between two poll turns longer than this (ms) suspends polling (Infinity: never). */
  readonly lateTurnMs: number;
}

/**
 * Milliseconds between two poll turns of one wait beyond which something that does not yield held
 * the core. A peer rank's whole step (read, match, the program's next call, its sends) costs 0.05-0.25 ms
 * of CPU in a 4-on-2 small collective; the Linux scheduler's slice on 2 cores (EEVDF base slice
 * 0.75 ms, scaled by 1 + log2 of the CPUs) is 1.5 ms.
 */
export const LATE_TURN_MS = 0.5;

/**
 * Chooses how polling threads of this process yield.
 * @param host - processes on this host, its cores, and the waitSpinTurns setting
 * @returns whether the host is oversubscribed, the turns to spin before yielding, the turns to poll before sleeping, and the late-turn limit
 */
export function pollPolicy(host: HostShare): PollPolicy {
  const isOversubscribed = host.localSize > host.cores;
  const turns = Math.max(0, Math.floor(host.spinTurns));
  if (isOversubscribed) return { isOversubscribed, spinTurns: 0, sleepAfterTurns: turns, lateTurnMs: LATE_TURN_MS };
  return { isOversubscribed, spinTurns: turns, sleepAfterTurns: Infinity, lateTurnMs: Infinity };
}
