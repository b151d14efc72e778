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
 * on a host with more processes than cores, else after the first few turns. On
 * a host with more processes than cores a blocking call also sleeps after its
 * first few turns (sleepAfterTurns): a peer that outlasts them is kept off the
 * cores by other processes, whose core each further turn takes. There a turn
 * that comes back more than lateTurnMs after the previous one (the yield gave
 * the core to a program that kept it for a scheduler slice) suspends polling
 * for `budgetMs`, as bulk traffic does (below): while such programs share the
 * cores, each yield of each wait would cost a slice, and a sleeping thread is
 * woken by its socket instead (docs/adr/0048).
 *
 * A thread polls while it is inside a blocking call and for at most `budgetMs`
 * after the newest blocking call began or it last served a one-sided request (renew; give or take
 * CLOCK_TURNS turns); after that it sleeps, so a rank that waits long (a barrier before a slow peer's
 * output) does not burn its core.
 *
 * State. Each thread waits on its own: its WaitPoll is one object of its
 * ThreadRuntime (thread-runtime.ts), made at init and told of every blocking
 * call by the thread's BlockedCalls (blocked.ts).
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
  /** Turns after which a blocking call stops polling and sleeps (poll-policy.ts); default Infinity. */
  readonly sleepAfterTurns?: number;
  /** A gap between two turns of a blocking call longer than this (ms) suspends polling for budgetMs (poll-policy.ts); default Infinity. */
  readonly lateTurnMs?: number;
}

/** Rendezvous messages of at least this many bytes are bulk traffic (noteRendezvous). */
export const BULK_BYTES = 512 * 1024;

/**
 * A poll turn reads the clock (for the budget) only once in this many turns of a blocking call,
 * the first included: a clock read was half the JavaScript of an idle turn (performance.now was
 * 5% of the non-waiting CPU of an 8-byte allreduce on 2 processes, issue 40), and a budget of milliseconds needs no
 * microsecond check. So a thread may poll up to CLOCK_TURNS - 1 turns past its budget.
 */
export const CLOCK_TURNS = 8;

/** How one thread's blocking calls wait: made at init (off), configured once the thread's device exists. */
export class WaitPoll {
  #budgetMs = 0;
  #yieldCore: (() => unknown) | null = null;
  #now: () => number = () => performance.now();
  #onTurn: (() => void) | null = null;
  /** Blocking calls in progress on this thread (a thread may await several at once). */
  #waiting = 0;
  /** Whether a poll turn is queued; never more than one, however often calls begin and end. */
  #polling = false;
  #deadline = 0;
  /** A blocking call began since the clock was last read: the next read sets #deadline from it. */
  #newCall = false;
  #spinTurns = 0;
  #sleepAfterTurns = Infinity;
  /** Poll turns since the newest blocking call began. */
  #turns = 0;
  #lateTurnMs = Infinity;
  /** When the previous turn of the newest blocking call ran (read only when lateTurnMs is finite). */
  #lastTurnAt = 0;
  /** Polling is suspended until this time (bulk traffic, or a turn that came back late). */
  #bulkUntil = -Infinity;
  /** The poll turn, bound once: setImmediate gets the same function every turn (no closure per turn). */
  readonly #pollTurn = (): void => this.#turn();

  /** Sets this thread's policy; budgetMs 0 or no yieldCore turns polling off. Called at init. */
  configure(options: WaitPollOptions): void {
    this.#budgetMs = options.yieldCore === null ? 0 : options.budgetMs;
    this.#yieldCore = options.yieldCore;
    this.#now = options.now ?? (() => performance.now());
    this.#onTurn = options.onTurn ?? null;
    this.#spinTurns = options.spinTurns ?? 0;
    this.#sleepAfterTurns = options.sleepAfterTurns ?? Infinity;
    this.#lateTurnMs = options.lateTurnMs ?? Infinity;
    this.#bulkUntil = -Infinity;
  }

  /** Whether blocking calls on this thread poll (for MPI.config()). */
  get isEnabled(): boolean {
    return this.#budgetMs > 0;
  }

  /** A blocking call begins: poll from now until it ends or the budget runs out. */
  begin(): void {
    this.#waiting++;
    if (this.#budgetMs === 0) return;
    // The deadline is set by the clock read of this call's first turn (#turn): no read here.
    this.#newCall = true;
    this.#turns = 0;
    if (!this.#polling && !this.#inBulk()) {
      this.#polling = true;
      setImmediate(this.#pollTurn);
    }
  }

  /** Whether polling is suspended for bulk traffic; reads the clock only while a suspension is set. */
  #inBulk(): boolean {
    if (this.#bulkUntil === -Infinity) return false;
    if (this.#now() < this.#bulkUntil) return true;
    this.#bulkUntil = -Infinity;
    return false;
  }

  /**
   * This thread served a one-sided request while it waits (RmaTarget.onServe, wired in bootstrap.ts):
   * polling goes on for budgetMs from the next clock read, as if a blocking call had just begun. A
   * passive target in a long wait (a barrier while an origin runs lock/Put/unlock epochs) then answers
   * each epoch without an epoll wake-up, as a C MPI's spinning target does, and sleeps budgetMs after
   * the origin stops (docs/adr/0059). Turns are not reset and a bulk suspension holds: on a host with
   * more processes than cores the wait still sleeps after sleepAfterTurns (#turn stops at once). No
   * clock read here: this runs for every frame served.
   */
  renew(): void {
    if (this.#waiting === 0 || this.#budgetMs === 0) return;
    this.#newCall = true;
    if (!this.#polling) {
      this.#polling = true;
      setImmediate(this.#pollTurn);
    }
  }

  /** A blocking call ends (its promise settled). */
  end(): void {
    if (this.#waiting > 0) this.#waiting--;
  }

  /** A rendezvous message of `bytes` begins to or from this thread: bulk ones suspend polling for budgetMs. */
  noteRendezvous(bytes: number): void {
    if (bytes >= BULK_BYTES && this.#budgetMs > 0) this.#bulkUntil = this.#now() + this.#budgetMs;
  }

  /** Stops polling for good on this thread (finalize). */
  stop(): void {
    this.#budgetMs = 0;
    this.#waiting = 0;
  }

  #turn(): void {
    if (this.#waiting === 0 || this.#budgetMs === 0 || this.#turns >= this.#sleepAfterTurns || this.#inBulk() || this.#spent()) {
      this.#polling = false;
      return;
    }
    if (this.#lateTurnMs !== Infinity && this.#cameBackLate()) {
      this.#polling = false;
      return;
    }
    if (this.#onTurn !== null) this.#onTurn();
    if (++this.#turns > this.#spinTurns) this.#yieldCore!();
    setImmediate(this.#pollTurn);
  }

  /**
   * Whether this turn ran more than lateTurnMs after the previous turn of the same blocking call; if so,
   * polling is suspended for budgetMs (a program that does not yield shares the cores).
   */
  #cameBackLate(): boolean {
    const t = this.#now();
    const late = this.#turns > 0 && t - this.#lastTurnAt > this.#lateTurnMs;
    this.#lastTurnAt = t;
    if (late) this.#bulkUntil = t + this.#budgetMs;
    return late;
  }

  /** Whether the budget of the newest blocking call is spent, by a clock read in one turn of CLOCK_TURNS (the first of a call's included). */
  #spent(): boolean {
    if (this.#turns % CLOCK_TURNS !== 0) return false;
    const t = this.#now();
    if (this.#newCall) {
      this.#newCall = false;
      this.#deadline = t + this.#budgetMs;
      return false;
    }
    return t > this.#deadline;
  }
}
