/**
 * Identical error output of several ranks, shown once (issue 39). When every
 * rank throws the same error, each prints the same stack; mpiexec shows the
 * first copy and its report says which ranks printed the same (job.ts).
 *
 * How: a rank's stderr lines are held back while its whole stderr so far is
 * line for line the start of another rank's stderr that was already shown
 * (or runs up to AHEAD lines ahead of it: Node prints an uncaught error in
 * two writes, and two ranks' writes interleave). The first line that differs
 * sends the held lines and itself out, in order, and the rank's output flows
 * from then on: output that differs is never dropped, and nothing is
 * reordered within a rank. Held lines go out when the rank ends well
 * (release), when they were held HOLD_MS while the rank still runs (a rank
 * that fails exits at once), and at the end of the job (finish) unless the
 * rank failed and its stderr was exactly, and wholly, a stream already
 * shown: then that copy is dropped. Only stderr passes here; the per-rank
 * files of --output-dir get every copy.
 *
 * A stack frame inside Node itself (`at ... (node:internal/...)`) is not
 * compared: it goes out, or is held, with the rank's other lines, but two
 * ranks that threw the same error from the same line differ there by where
 * their last `await` resumed (processTicksAndRejections or not), which says
 * nothing about the program.
 *
 * Memory: a rank's lines are kept (to compare) up to MAX_LINES lines of at
 * most MAX_LINE_CHARS; past that its output flows and is no reference.
 */

/** Lines a rank's stderr is compared over; a stack with its header is ~15. */
const MAX_LINES = 400;
/** A longer line is no error report's: it flows. */
const MAX_LINE_CHARS = 4096;
const NEWLINE = 0x0a;
/** A stack frame of Node's own code: neither compared nor kept as a line of the rank's record. */
const NODE_INTERNAL_FRAME = /^\s+at (?:.*\()?node:internal\//;
/** How far a held rank's lines may run ahead of the shown stream they match, awaiting its next lines. */
const AHEAD = 16;
/** Held lines of a rank still running go out after this long: only a failing rank's copy is dropped. */
const HOLD_MS = 2000;

interface RankStderr {
  /** its lines so far (up to MAX_LINES), to compare */
  readonly lines: string[];
  /** still matching the start of a shown stream: its lines since the start are held */
  isHeld: boolean;
  /** the held lines, with their prefixes, as they would have gone out */
  held: Buffer[];
  /** the ranks whose shown stderr starts with this rank's lines (or with as many of them as it has) */
  matches: number[];
  /** lets the held lines go after HOLD_MS if the rank still runs */
  timer: NodeJS.Timeout | null;
}

export class RepeatedStderr {
  readonly #write: (chunk: Buffer) => void;
  readonly #hasEnded: (rank: number) => boolean;
  readonly #ranks = new Map<number, RankStderr>();

  /**
   * @param write - where the lines go out (mpiexec's stderr sink)
   * @param hasEnded - whether a rank's process has exited
   */
  constructor(write: (chunk: Buffer) => void, hasEnded: (rank: number) => boolean) {
    this.#write = write;
    this.#hasEnded = hasEnded;
  }

  #of(rank: number): RankStderr {
    let st = this.#ranks.get(rank);
    if (st === undefined) {
      st = { lines: [], isHeld: true, held: [], matches: [], timer: null };
      this.#ranks.set(rank, st);
    }
    return st;
  }

  /**
   * A rank's complete lines (a LineForwarder's chunk, ending in a newline).
   * @param prefix - what each line is written after (-l, --timestamp-output), or null
   */
  push(rank: number, chunk: Buffer, prefix: (() => string) | null): void {
    const st = this.#of(rank);
    const pre = prefix === null ? null : Buffer.from(prefix());
    const out: Buffer[] = [];
    let start = 0;
    while (start < chunk.length) {
      let nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) nl = chunk.length - 1;
      const raw = chunk.subarray(start, nl + 1);
      start = nl + 1;
      const line = raw.length <= MAX_LINE_CHARS ? raw.toString('utf8') : null;
      const shown = pre === null ? [raw] : [pre, raw];
      if (line !== null && NODE_INTERNAL_FRAME.test(line)) {
        // Not compared, not recorded: it goes with the rank's lines, held or out.
        if (st.isHeld) this.#hold(rank, st, shown);
        else out.push(...shown);
        continue;
      }
      if (st.isHeld && line !== null && this.#continues(rank, st, line)) {
        this.#hold(rank, st, shown);
      } else {
        if (st.isHeld) this.#letGo(st, out);
        out.push(...shown);
      }
      if (line !== null && st.lines.length < MAX_LINES) st.lines.push(line);
      else st.lines.length = MAX_LINES + 1; // no longer a complete record: no reference, no match
      if (!st.isHeld) this.#checkAhead(rank, st.lines.length - 1);
    }
    if (out.length > 0) this.#write(out.length === 1 ? out[0]! : Buffer.concat(out));
  }

  /** Keeps a held rank's line back, and lets its held lines go after HOLD_MS if it still runs then. */
  #hold(rank: number, st: RankStderr, shown: Buffer[]): void {
    st.held.push(...shown);
    st.timer ??= setTimeout(() => this.#onHeldLong(rank), HOLD_MS).unref();
  }

  /** A shown rank's line `at` arrived: the held ranks that ran ahead of it still match it, or let go. */
  #checkAhead(shown: number, at: number): void {
    const line = this.#ranks.get(shown)!.lines[at];
    for (const [rank, st] of this.#ranks) {
      if (!st.isHeld || st.lines.length <= at || !st.matches.includes(shown)) continue;
      if (st.lines[at] === line) continue;
      st.matches = st.matches.filter((r) => r !== shown);
      if (st.matches.length === 0) this.release(rank);
    }
  }

  #onHeldLong(rank: number): void {
    const st = this.#ranks.get(rank)!;
    st.timer = null;
    if (!this.#hasEnded(rank)) this.release(rank);
  }

  /** True when `line`, the rank's next, keeps its stderr the start of a shown one (the matches narrow). */
  #continues(rank: number, st: RankStderr, line: string): boolean {
    const at = st.lines.length;
    if (at >= MAX_LINES) return false;
    const from = at === 0 ? [...this.#ranks.keys()].filter((r) => r !== rank && !this.#ranks.get(r)!.isHeld) : st.matches;
    st.matches = from.filter((r) => {
      const lines = this.#ranks.get(r)!.lines;
      return lines.length > at ? lines[at] === line : at - lines.length < AHEAD;
    });
    return st.matches.length > 0;
  }

  /** The rank's held lines go out, into `out`; from now on its output flows (and may be a reference). */
  #letGo(st: RankStderr, out: Buffer[]): void {
    st.isHeld = false;
    st.matches = [];
    if (st.timer !== null) clearTimeout(st.timer);
    st.timer = null;
    out.push(...st.held);
    st.held = [];
  }

  /** The rank ended well: its held lines, if any, go out. */
  release(rank: number): void {
    const st = this.#ranks.get(rank);
    if (st === undefined || !st.isHeld) return;
    const out: Buffer[] = [];
    this.#letGo(st, out);
    if (out.length > 0) this.#write(Buffer.concat(out));
  }

  /**
   * The job's end: a failed rank's held stderr that is the whole of a shown rank's is dropped;
   * every other held line goes out.
   * @param failed - whether a rank failed (exited non-zero or by a signal)
   * @returns the dropped ranks, each with the rank whose identical output was shown
   */
  finish(failed: (rank: number) => boolean): Map<number, number> {
    const dropped = new Map<number, number>();
    for (const [rank, st] of [...this.#ranks].sort((a, b) => a[0] - b[0])) {
      if (!st.isHeld || st.held.length === 0) continue;
      const whole = st.matches.find((r) => this.#ranks.get(r)!.lines.length === st.lines.length);
      if (whole !== undefined && failed(rank)) {
        dropped.set(rank, whole);
        st.held = [];
        st.isHeld = false;
        if (st.timer !== null) clearTimeout(st.timer);
      } else {
        this.release(rank);
      }
    }
    return dropped;
  }
}
