/**
 * The hint mpiexec prints once when a job without --timeout looks deadlocked,
 * so that a hang is not silent: quiet roll-calls, every half of the hint's
 * delay, have found every running rank (and each of its MPI threads) blocked
 * in the same MPI call, with the same count of blocking calls entered, for the
 * whole delay (no call returned: a loop of receives that keeps matching is not
 * a hang).
 * The job goes on: a program may mean to wait (a server for its clients), so
 * the hint says what it saw and how --timeout ends such a job with its
 * roll-call. Roll-calls ask the ranks' main threads, which answer from their
 * event loops: a rank computing outside MPI does not answer and is not blocked.
 */
import type { BlockedIn } from '@tsmpi/core/pmi';
import { describeBlockedIn, type RollCallRank } from './roll-call.ts';
import type { RollCallAnswer } from './wireup-server.ts';

/** How long each roll-call of the hint waits for answers. */
const ANSWER_WAIT_MS = 2_000;

/** What a rank's answer says, with the counts that tell a wait from a loop; null when not blocked. */
function waitKey(b: BlockedIn): string {
  const threads = (b.threads ?? []).map((t) => `${t.thread}:${t.call}:${t.comm}:${t.peer}:${t.tag}:${t.calls}`);
  return [`${b.call}:${b.comm}:${b.peer}:${b.tag}:${b.calls}`, ...threads].join('|');
}

/**
 * Compares two roll-calls: the hint's text when every running rank waits where it waited before, else null.
 * @param ranks - the job's ranks now (ended ones do not count)
 */
export function hintFor(ranks: readonly RollCallRank[], before: ReadonlyMap<number, RollCallAnswer>, now: ReadonlyMap<number, RollCallAnswer>, afterSec: number): string | null {
  const running = ranks.filter((r) => r.ended === null);
  if (running.length === 0) return null;
  const waits: string[] = [];
  for (const r of running) {
    const a = before.get(r.rank);
    const b = now.get(r.rank);
    if (a?.kind !== 'blocked' || b?.kind !== 'blocked' || waitKey(a.blockedIn) !== waitKey(b.blockedIn)) return null;
    waits.push(`rank ${r.rank} ${describeBlockedIn(b.blockedIn)}`);
  }
  const shown = waits.length <= 4 ? waits.join('; ') : `${waits.slice(0, 4).join('; ')}; and ${waits.length - 4} more`;
  return `mpiexec: no MPI call of any rank has returned for ${afterSec} s, a deadlock? (${shown}); --timeout SECONDS ends such a job with a roll-call of every rank`;
}

/** Runs the hint's roll-calls every `afterSec / 2` seconds until it prints once or is stopped. */
export class DeadlockHint {
  readonly #afterSec: number;
  readonly #rollCall: (waitMs: number) => Promise<Map<number, RollCallAnswer>>;
  readonly #ranks: () => readonly RollCallRank[];
  readonly #write: (line: string) => void;
  #timer: NodeJS.Timeout | null = null;
  /** The first roll-call of the current run of roll-calls that all match it, and how many matched it since. */
  #first: Map<number, RollCallAnswer> | null = null;
  #matched = 0;
  #busy = false;

  /**
   * @param afterSec - how long every rank must wait before the hint (the --deadlock-hint option)
   * @param rollCall - the wire-up service's roll-call
   * @param ranks - the ranks as they are when asked
   * @param write - prints one line on mpiexec's stderr
   */
  constructor(afterSec: number, rollCall: (waitMs: number) => Promise<Map<number, RollCallAnswer>>, ranks: () => readonly RollCallRank[], write: (line: string) => void) {
    this.#afterSec = afterSec;
    this.#rollCall = rollCall;
    this.#ranks = ranks;
    this.#write = write;
  }

  start(): this {
    this.#timer = setInterval(() => void this.#check(), (this.#afterSec * 1000) / 2);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #check(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const now = await this.#rollCall(ANSWER_WAIT_MS);
      if (this.#timer === null) return;
      const hint = this.#first === null ? null : hintFor(this.#ranks(), this.#first, now, this.#afterSec);
      if (hint === null) {
        this.#first = now;
        this.#matched = 0;
      } else if (++this.#matched >= 2) {
        // Two intervals of afterSec / 2 since the first: nothing has returned for afterSec.
        this.stop();
        this.#write(`${hint}\n`);
      }
    } finally {
      this.#busy = false;
    }
  }
}
