/**
 * How a blocking call waits (--wait): by polling the event loop, or by sleeping
 * in it until a socket wakes the thread.
 *
 * A thread that sleeps in epoll pays for being woken on every message, and with
 * more processes than cores the wake-up also waits for a core: that made an
 * 8-byte allreduce on 4 processes and 2 cores cost about 85 us even in plain
 * Node, against Open MPI's 50 (docs/adr/0005). MPI libraries poll instead,
 * yielding the core between polls so that a peer that has work can run (Open
 * MPI's mpi_yield_when_idle). Here polling means keeping a setImmediate turn
 * queued, which makes libuv check its sockets without sleeping, and calling
 * sched_yield in each turn. Without the yield, polling on an oversubscribed
 * machine is ruinous (a process keeps its core until its time slice ends: 6 ms
 * per call), so with no sched_yield to be had, blocking calls sleep.
 *
 * How often a turn yields is poll-policy.ts's choice (spinTurns): in every turn
 * on a host with more processes than cores, else after the first few turns.
 *
 * A thread polls while it is inside a blocking call and for at most `budgetMs`
 * after the newest blocking call began; after that it sleeps, so a rank that
 * waits long (a barrier before a slow peer's output) does not burn its core.
 *
 * Threads. A thread that does not read the sockets (an MPI.Worker; the main
 * thread in threads progress) gets its completions from other threads through
 * its completion ring; waiting for them asleep costs a cross-thread wake-up per
 * message (25-50 us here, more than the message). So it polls too, and each
 * turn drains its ring (onTurn): the engine's notify then finds it awake.
 *
 * On a host with more processes than cores, bulk traffic sleeps too: once a
 * rendezvous message of BULK_BYTES or more begins on this thread (the device
 * reports each one to noteRendezvous), blocking calls do not poll for the next
 * `budgetMs`. Such data arrives in reads of hundreds of KiB, so a wake-up per
 * read costs little, while a poller takes the core that its peers need to copy
 * the data: an 8 MiB allreduce on 4 processes and 2 cores cost about 18% more
 * CPU per call polling than sleeping. With a core per process nobody needs the
 * poller's core, and polling keeps its edge (1 MiB ping-pong, 2 processes:
 * about 500 us per round trip polling, 900 sleeping). docs/adr/0006.
 */
export interface WaitPollOptions {
  /** Milliseconds a thread may poll after a blocking call begins; 0 disables polling. */
  readonly budgetMs: number;
  /** Gives the core away; null: cannot yield, so never poll. */
  readonly yieldCore: (() => unknown) | null;
  /** Milliseconds on a monotonic clock (performance.now; tests pass their own). */
  readonly now?: () => number;
  /**
   * Runs in every poll turn before the yield: a thread whose completions other threads make
   * (engines, the thread that reads the socket) picks them up here from its completion ring,
   * without waiting to be woken (device.poll()).
   */
  readonly onTurn?: () => void;
  /** Turns of a blocking call that do not yield (poll-policy.ts); default 0, every turn yields. */
  readonly spinTurns?: number;
}

let budgetMs = 0;
let yieldCore: (() => unknown) | null = null;
let now: () => number = () => performance.now();
let onTurn: (() => void) | null = null;
/** Blocking calls in progress on this thread (a thread may await several at once). */
let waiting = 0;
/** Whether a poll turn is queued; never more than one, however often calls begin and end. */
let polling = false;
let deadline = 0;
let spinTurns = 0;
/** Poll turns since the newest blocking call began. */
let turns = 0;
/** Polling is suspended until this time (bulk traffic). */
let bulkUntil = -Infinity;

/** Rendezvous messages of at least this many bytes are bulk traffic (noteRendezvous). */
export const BULK_BYTES = 512 * 1024;

/** Sets this thread's policy; budgetMs 0 or no yieldCore turns polling off. Called at init. */
export function configureWaitPoll(options: WaitPollOptions): void {
  budgetMs = options.yieldCore === null ? 0 : options.budgetMs;
  yieldCore = options.yieldCore;
  now = options.now ?? (() => performance.now());
  onTurn = options.onTurn ?? null;
  spinTurns = options.spinTurns ?? 0;
  bulkUntil = -Infinity;
}

/** Whether blocking calls on this thread poll (for MPI.config()). */
export function waitPolls(): boolean {
  return budgetMs > 0;
}

/** A blocking call begins: poll from now until it ends or the budget runs out. */
export function beginWait(): void {
  waiting++;
  if (budgetMs === 0) return;
  const t = now();
  deadline = t + budgetMs;
  turns = 0;
  if (!polling && t >= bulkUntil) {
    polling = true;
    setImmediate(pollTurn);
  }
}

/** A blocking call ends (its promise settled). */
export function endWait(): void {
  if (waiting > 0) waiting--;
}

/** A rendezvous message of `bytes` begins to or from this thread: bulk ones suspend polling for budgetMs. */
export function noteRendezvous(bytes: number): void {
  if (bytes >= BULK_BYTES && budgetMs > 0) bulkUntil = now() + budgetMs;
}

/** Stops polling for good on this thread (finalize). */
export function stopWaitPoll(): void {
  budgetMs = 0;
  waiting = 0;
}

function pollTurn(): void {
  const t = now();
  if (waiting === 0 || budgetMs === 0 || t > deadline || t < bulkUntil) {
    polling = false;
    return;
  }
  if (onTurn !== null) onTurn();
  if (++turns > spinTurns) yieldCore!();
  setImmediate(pollTurn);
}
