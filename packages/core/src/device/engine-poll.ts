/**
 * How a channel engine waits for its sockets (--progress threads): it polls
 * while its channel is busy, and sleeps when it is not.
 *
 * An engine that sleeps in epoll is woken for every batch that arrives, and on
 * a machine with few cores the wake-up also waits for a core: the same cost
 * that made blocking calls poll (docs/adr/0005), paid here by the thread that
 * reads the socket for the user threads. So after every frame the engine
 * keeps one setImmediate turn queued (libuv then checks the sockets without
 * sleeping) and gives its core away with sched_yield in each turn, until
 * `budgetMs` have passed without a frame; then it sleeps until the next one.
 * A busy channel therefore costs no wake-up per message, an idle one no core.
 *
 * Invariant: at most one turn is queued (touch() only starts a chain when none
 * runs). touch() is on the hot path: an increment and a test, no clock read.
 */
export class EnginePoll {
  readonly #budgetMs: number;
  readonly #yieldCore: () => unknown;
  readonly #now: () => number;
  /** frames seen; a turn that sees it changed extends the deadline */
  #touches = 0;
  #seen = 0;
  #deadline = 0;
  #polling = false;
  #stopped = false;
  readonly #turn = (): void => this.#pollTurn();

  constructor(budgetMs: number, yieldCore: () => unknown, now: () => number = () => performance.now()) {
    this.#budgetMs = budgetMs;
    this.#yieldCore = yieldCore;
    this.#now = now;
  }

  /** A frame came or went: poll for budgetMs from now on. */
  touch(): void {
    this.#touches++;
    if (this.#polling || this.#stopped) return;
    this.#polling = true;
    this.#seen = this.#touches;
    this.#deadline = this.#now() + this.#budgetMs;
    setImmediate(this.#turn);
  }

  /** Whether a poll turn is queued (tests). */
  get polling(): boolean {
    return this.#polling;
  }

  /** Never polls again (the engine closes). */
  stop(): void {
    this.#stopped = true;
  }

  #pollTurn(): void {
    const t = this.#now();
    if (this.#touches !== this.#seen) {
      this.#seen = this.#touches;
      this.#deadline = t + this.#budgetMs;
    }
    if (this.#stopped || t > this.#deadline) {
      this.#polling = false;
      return;
    }
    this.#yieldCore();
    setImmediate(this.#turn);
  }
}
